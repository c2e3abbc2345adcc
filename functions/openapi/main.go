// Command openapi is the Lambda function serving the API's OpenAPI document.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring"
)

func main() { lambdafn.Main("openapi", wiring.OpenAPI) }
