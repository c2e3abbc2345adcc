// Command restart-tests-on-pull-request is the Lambda function serving the restart-tests-on-pull-request endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("restart-tests-on-pull-request", queueendpoints.Group) }
