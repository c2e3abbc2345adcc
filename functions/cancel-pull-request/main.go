// Command cancel-pull-request is the Lambda function serving the cancel-pull-request endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("cancel-pull-request", queueendpoints.Group) }
