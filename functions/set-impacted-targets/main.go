// Command set-impacted-targets is the Lambda function serving the set-impacted-targets endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("set-impacted-targets", queueendpoints.Group) }
