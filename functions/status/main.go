// Command status is the Lambda function serving the status endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring"
)

func main() { lambdafn.Main("status", wiring.Status) }
