// Command status is the Lambda function serving the status endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
)

func main() { lambdafn.Main("status", lambdafn.Status) }
