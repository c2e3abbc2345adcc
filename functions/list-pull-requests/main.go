// Command list-pull-requests is the Lambda function serving the list-pull-requests endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("list-pull-requests", queueendpoints.Group) }
