package wiring

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/mainguard/mainguard/shared/api"
)

// Key names one part of a graph, of type T: the builder that makes it
// declares one (NewKey) and builds through it (Build).
type Key[T any] struct{ name string }

// NewKey is the key of the part called name (in Built's list).
func NewKey[T any](name string) *Key[T] { return &Key[T]{name: name} }

// Name is the part's name.
func (k *Key[T]) Name() string { return k.name }

type part struct {
	v   any
	err error
}

// parts are the parts of one Base's graph, built or provided, and the
// order they were built in.
type parts struct {
	mu    sync.Mutex
	byKey map[any]part
	built []string
}

// Build is the part k of b's graph: built by build the first time it is
// asked for, the same value (or error) every later time.
func Build[T any](b *Base, k *Key[T], build func(b *Base) (T, error)) (T, error) {
	b.parts.mu.Lock()
	p, ok := b.parts.byKey[k]
	b.parts.mu.Unlock()
	if !ok {
		// Built unlocked: a builder asks for the parts it is made of.
		v, err := build(b)
		p = part{v: v, err: err}
		b.parts.mu.Lock()
		if q, done := b.parts.byKey[k]; done {
			p = q
		} else {
			if b.parts.byKey == nil {
				b.parts.byKey = map[any]part{}
			}
			b.parts.byKey[k] = p
			b.parts.built = append(b.parts.built, k.name)
		}
		b.parts.mu.Unlock()
	}
	v, _ := p.v.(T)
	return v, p.err
}

// Provide sets the part k of b's graph to v before anything asks for it:
// the local server's own parts (its bundle folder's upload addresses) and
// tests' stand-ins (a GitHub). It fails when k was already built.
func Provide[T any](b *Base, k *Key[T], v T) error {
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	if _, ok := b.parts.byKey[k]; ok {
		return fmt.Errorf("wiring: %s was built before it was provided", k.name)
	}
	if b.parts.byKey == nil {
		b.parts.byKey = map[any]part{}
	}
	b.parts.byKey[k] = part{v: v}
	return nil
}

// Built names the parts b's builders built, in the order they were built
// (not those provided).
func (b *Base) Built() []string {
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	return append([]string(nil), b.parts.built...)
}

// Group builds an endpoint group from a Base: its handlers by function
// name. The functions' mains and the local server call the same ones.
type Group func(ctx context.Context, b *Base) (api.Handlers, error)

// Serve is the named route's handler of h behind the middleware.
func (b *Base) Serve(name string, h api.Handlers) (http.Handler, error) {
	r, ok := api.RouteOf(name)
	if !ok {
		return nil, fmt.Errorf("no route for a function named %q", name)
	}
	handler, ok := h[name]
	if !ok {
		return nil, fmt.Errorf("the endpoint group has no handler for %q", name)
	}
	return b.Server.Wrap(r.Endpoint(handler)), nil
}

// WebHandler is the web app's handler h behind the middleware every
// request passes: a public endpoint of any method and path, since the app
// checks its own sessions, methods and forms.
func (b *Base) WebHandler(h http.Handler) http.Handler {
	return b.Server.Wrap(api.Endpoint{Name: api.WebFunction, Path: "/", Public: true, Handler: h})
}
