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
)

// Handlers are an endpoint group's handlers, by function name.
type Handlers map[string]http.Handler

// Group builds an endpoint group from a Base: every package of endpoints
// has one, which its functions' mains and the local server both call.
type Group func(ctx context.Context, b *Base) (Handlers, error)

// Serve is the named route's handler of g's handlers behind the middleware.
func (b *Base) Serve(name string, h Handlers) (http.Handler, error) {
	r, ok := RouteOf(name)
	if !ok {
		return nil, fmt.Errorf("no route for a function named %q", name)
	}
	handler, ok := h[name]
	if !ok {
		return nil, fmt.Errorf("the endpoint group has no handler for %q", name)
	}
	return b.Server.Wrap(r.Endpoint(handler)), nil
}

// Main runs the named HTTP function: configuration from the environment,
// its group built once per copy, and lambda.Start. A bad configuration
// stops the copy at init with a clear message, before any request.
func Main(name string, g Group) {
	ctx := context.Background()
	b := mustBase()
	h, err := g(ctx, b)
	exitOn(err)
	handler, err := b.Serve(name, h)
	exitOn(err)
	lambda.Start(api.Lambda(handler))
}

// WebMain runs the web app's function: its handler, built once per copy
// by build, behind the middleware (WebHandler).
func WebMain(build func(ctx context.Context, b *Base) (http.Handler, error)) {
	ctx := context.Background()
	b := mustBase()
	h, err := build(ctx, b)
	exitOn(err)
	lambda.Start(api.Lambda(b.WebHandler(h)))
}

// WebHandler is the web app's handler h behind the middleware every
// request passes: a public endpoint of any method and path, since the app
// checks its own sessions, methods and forms.
func (b *Base) WebHandler(h http.Handler) http.Handler {
	return b.Server.Wrap(api.Endpoint{Name: WebFunction, Path: "/", Public: true, Handler: h})
}

// EventMain runs an event-driven function: build makes its handler (any
// signature lambda.Start takes) from a Base.
func EventMain[H any](build func(ctx context.Context, b *Base) (H, error)) {
	ctx := context.Background()
	h, err := build(ctx, mustBase())
	exitOn(err)
	lambda.Start(h)
}

func mustBase() *Base {
	cfg, err := config.FromEnv(os.Getenv)
	exitOn(err)
	b, err := NewBase(cfg, Options{})
	exitOn(err)
	return b
}

func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, errs.MessageOf(err))
		os.Exit(1)
	}
}
