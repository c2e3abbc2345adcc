// Package uploadendpoints builds the uploader's endpoint group (package
// wiring says why each group's builder has a package).
package uploadendpoints

import (
	"context"
	"errors"
	"unsafe"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/uploadapi"
	"github.com/mainguard/mainguard/shared/wiring"
)

var uploadsKey = wiring.NewKey("upload-addresses")

// Uploads signs the addresses bundles are PUT to: the bundle bucket's
// (wiring.Bundles). The local server, whose bundles go to a folder,
// provides its own (UseUploads).
func Uploads(b *wiring.Base) (uploadapi.Uploads, error) {
	p, err := b.Part(uploadsKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		bundles, err := wiring.Bundles(b)
		if err != nil {
			return nil, err
		}
		u, ok := bundles.(uploadapi.Uploads)
		if !ok {
			return nil, errors.New("the bundle store signs no upload addresses: configure BUNDLE_BUCKET")
		}
		return unsafe.Pointer(&u), nil
	})
	if err != nil {
		return nil, err
	}
	return *(*uploadapi.Uploads)(p), nil
}

// UseUploads has b's graph sign upload addresses with u: the local
// server's, which takes the bundles itself.
func UseUploads(b *wiring.Base, u uploadapi.Uploads) error {
	return b.Provide(uploadsKey, unsafe.Pointer(&u))
}

// Group is the uploader's endpoints.
func Group(_ context.Context, b *wiring.Base) (api.Handlers, error) {
	u, err := Uploads(b)
	if err != nil {
		return nil, err
	}
	return (&uploadapi.Handlers{Store: b.Store, Now: b.Now, Uploads: u}).Endpoints(), nil
}
