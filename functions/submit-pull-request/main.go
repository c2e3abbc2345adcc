// Command submit-pull-request is the Lambda function serving the submit-pull-request endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("submit-pull-request", queueendpoints.Group) }
