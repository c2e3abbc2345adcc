// Command get-queue is the Lambda function serving the get-queue endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("get-queue", queueendpoints.Group) }
