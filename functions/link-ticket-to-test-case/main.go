// Command link-ticket-to-test-case is the Lambda function serving the link-ticket-to-test-case endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/testendpoints"
)

func main() { lambdafn.Main("link-ticket-to-test-case", testendpoints.Group) }
