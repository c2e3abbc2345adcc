// Command openapi is the Lambda function serving the API's OpenAPI document.
package main

import (
	"context"

	"github.com/mainguard/mainguard/docs"
	"github.com/mainguard/mainguard/shared/lambdafn"
)

func main() {
	lambdafn.Main("openapi", func(context.Context, *lambdafn.Base) (lambdafn.Handlers, error) {
		return lambdafn.Handlers{"openapi": docs.Handler()}, nil
	})
}
