// Command get-submitted-pull-request is the Lambda function serving the get-submitted-pull-request endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("get-submitted-pull-request", queueendpoints.Group) }
