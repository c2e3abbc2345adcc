// Command list-unhealthy-tests is the Lambda function serving the list-unhealthy-tests endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/testendpoints"
)

func main() { lambdafn.Main("list-unhealthy-tests", testendpoints.Group) }
