// Command create-queue is the Lambda function serving the create-queue endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("create-queue", queueendpoints.Group) }
