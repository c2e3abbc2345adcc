// Package webapp builds the web app (package wiring says why each
// service's builders have a package: this one links the pages).
package webapp

import (
	"context"
	"net/http"
	"unsafe"

	"github.com/mainguard/mainguard/shared/web"
	"github.com/mainguard/mainguard/shared/wiring"
	"github.com/mainguard/mainguard/shared/wiring/health"
	"github.com/mainguard/mainguard/shared/wiring/queues"
)

var webKey = wiring.NewKey("web")

// Web is the web app, on the merge queue's and test health's services,
// checking sessions and counting failed sign-ins as the API does.
func Web(b *wiring.Base) (*web.Web, error) {
	p, err := b.Part(webKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		q, err := queues.Queues(b)
		if err != nil {
			return nil, err
		}
		h, err := health.Health(b)
		if err != nil {
			return nil, err
		}
		return unsafe.Pointer(web.New(web.Setup{
			Config: b.Config, Store: b.Store, Now: b.Now, Log: b.Log,
			Auth: b.Auth, SignInFailures: b.Server.AuthFailures, Queues: q, Health: h,
		})), nil
	})
	return (*web.Web)(p), err
}

// Handler is the web function's handler (lambdafn.WebMain puts it behind
// the middleware).
func Handler(_ context.Context, b *wiring.Base) (http.Handler, error) {
	w, err := Web(b)
	if err != nil {
		return nil, err
	}
	return w.Handler(), nil
}
