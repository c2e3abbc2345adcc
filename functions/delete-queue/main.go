// Command delete-queue is the Lambda function serving the delete-queue endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("delete-queue", queueendpoints.Group) }
