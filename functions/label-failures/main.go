// Command label-failures is the Lambda function serving the label-failures endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/testsapi"
)

func main() { lambdafn.Main("label-failures", testsapi.Group) }
