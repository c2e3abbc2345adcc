// Command emptyfn is the smallest aws-lambda-go function, the baseline of
// BenchmarkColdStart. It lives under testdata so `go build ./...` and
// `go vet ./...` skip it; build it by its path.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() { lambda.Start(func(ctx context.Context) error { return nil }) }
