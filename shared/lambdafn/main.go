// Package lambdafn starts a Lambda function's process: configuration
// from the environment, the function's graph built once per copy by its
// builder (package wiring), and lambda.Start. A bad configuration stops
// the copy at init with a clear message, before any request.
//
// It is apart from wiring because starting a process is not building a
// graph: the local server and the administration program build the same
// graphs without a Lambda runtime, so they import wiring and not this.
package lambdafn

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/wiring"
)

// Main runs the named HTTP function, whose handler is g's of that name
// behind the middleware.
func Main(name string, g wiring.Group) {
	ctx := context.Background()
	b := mustBase()
	h, err := g(ctx, b)
	exitOn(err)
	handler, err := b.Serve(name, h)
	exitOn(err)
	lambda.Start(api.Lambda(handler))
}

// WebMain runs the web app's function: its handler, built by build,
// behind the middleware (wiring.Base.WebHandler).
func WebMain(build func(ctx context.Context, b *wiring.Base) (http.Handler, error)) {
	ctx := context.Background()
	b := mustBase()
	h, err := build(ctx, b)
	exitOn(err)
	lambda.Start(api.Lambda(b.WebHandler(h)))
}

// EventMain runs an event-driven function: build makes its handler (any
// signature lambda.Start takes).
func EventMain[H any](build func(ctx context.Context, b *wiring.Base) (H, error)) {
	ctx := context.Background()
	h, err := build(ctx, mustBase())
	exitOn(err)
	lambda.Start(h)
}

func mustBase() *wiring.Base {
	cfg, err := config.FromEnv(os.Getenv)
	exitOn(err)
	b, err := wiring.NewBase(cfg, wiring.Options{})
	exitOn(err)
	return b
}

func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, errs.MessageOf(err))
		os.Exit(1)
	}
}
