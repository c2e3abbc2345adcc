// Command create-bundle-upload is the Lambda function serving the create-bundle-upload endpoint.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/uploadendpoints"
)

func main() { lambdafn.Main("create-bundle-upload", uploadendpoints.Group) }
