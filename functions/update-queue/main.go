// Command update-queue is the Lambda function serving the update-queue endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/queueapi"
)

func main() { lambdafn.Main("update-queue", queueapi.Group) }
