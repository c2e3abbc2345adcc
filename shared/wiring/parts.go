package wiring

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"unsafe"

	"github.com/mainguard/mainguard/shared/api"
)

// Key names one part of a graph: the builder that makes it declares one,
// unexported (NewKey), and builds through it (Base.Part), so that it alone
// knows the part's type.
type Key struct{ name string }

// NewKey is the key of the part called name (in Built's list).
func NewKey(name string) *Key { return &Key{name: name} }

// part is a built part as an unsafe.Pointer (the builder's *T, or a
// pointer to its interface value), not in an interface, and behind no
// type parameter. In a binary that calls reflect's MethodByName (as the
// web function's templates did, before importrules kept them out), the
// linker keeps every exported method of every type that meets an
// interface, and of every type a generic function's dictionary names:
// parts held either way would link the whole of every service into such a
// function (the web function: its queue runner, the ingest path of test
// health, 0.8 MB measured), code it never runs.
type part struct {
	v   unsafe.Pointer
	err error
}

// parts are the parts of one Base's graph, built or provided, and the
// order they were built in.
type parts struct {
	mu    sync.Mutex
	byKey map[*Key]part
	built []string
}

// Part is the part k of b's graph: built by build the first time it is
// asked for, the same one (or error) every later time. Its builder alone
// converts it from and to its type.
func (b *Base) Part(k *Key, build func(b *Base) (unsafe.Pointer, error)) (unsafe.Pointer, error) {
	b.parts.mu.Lock()
	p, ok := b.parts.byKey[k]
	b.parts.mu.Unlock()
	if ok {
		return p.v, p.err
	}
	// Built unlocked: a builder asks for the parts it is made of.
	v, err := build(b)
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	if q, done := b.parts.byKey[k]; done {
		return q.v, q.err
	}
	if b.parts.byKey == nil {
		b.parts.byKey = map[*Key]part{}
	}
	b.parts.byKey[k] = part{v: v, err: err}
	b.parts.built = append(b.parts.built, k.name)
	return v, err
}

// Provide sets the part k of b's graph before anything asks for it: the
// local server's own parts (its bundle folder's upload addresses) and
// tests' stand-ins (a GitHub). It fails when k was already built.
func (b *Base) Provide(k *Key, v unsafe.Pointer) error {
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	if _, ok := b.parts.byKey[k]; ok {
		return fmt.Errorf("wiring: %s was built before it was provided", k.name)
	}
	if b.parts.byKey == nil {
		b.parts.byKey = map[*Key]part{}
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
