// Command get-queue-history is the Lambda function serving the get-queue-history endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("get-queue-history", queueendpoints.Group) }
