// Command get-test-details is the Lambda function serving the get-test-details endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/testsapi"
)

func main() { lambdafn.Main("get-test-details", testsapi.Group) }
