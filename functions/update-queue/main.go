// Command update-queue is the Lambda function serving the update-queue endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("update-queue", queueendpoints.Group) }
