// Command get-quarantine-config is the Lambda function serving the get-quarantine-config endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/uploadendpoints"
)

func main() { lambdafn.Main("get-quarantine-config", uploadendpoints.Group) }
