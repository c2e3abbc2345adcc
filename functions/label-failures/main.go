// Command label-failures is the Lambda function serving the label-failures endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/testendpoints"
)

func main() { lambdafn.Main("label-failures", testendpoints.Group) }
