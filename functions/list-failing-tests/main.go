// Command list-failing-tests is the Lambda function serving the list-failing-tests endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/testendpoints"
)

func main() { lambdafn.Main("list-failing-tests", testendpoints.Group) }
