// Command get-test-details is the Lambda function serving the get-test-details endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/testendpoints"
)

func main() { lambdafn.Main("get-test-details", testendpoints.Group) }
