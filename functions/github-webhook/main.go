// Command github-webhook is the Lambda function serving the github-webhook endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
)

func main() { lambdafn.Main("github-webhook", queueendpoints.Group) }
