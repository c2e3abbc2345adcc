// Command get-merge-queue-testing-details is the Lambda function serving the get-merge-queue-testing-details endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("get-merge-queue-testing-details", queueendpoints.Group) }
