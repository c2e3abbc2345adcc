// Command get-merge-queue-metrics is the Lambda function serving the get-merge-queue-metrics endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/metricendpoints"
)

func main() { lambdafn.Main("get-merge-queue-metrics", metricendpoints.Group) }
