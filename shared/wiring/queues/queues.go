// Package queues builds the merge queue's service and its GitHub client
// (package wiring says why each service's builders have a package).
package queues

import (
	"context"
	"unsafe"

	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/wiring"
)

var (
	gitHubKey = wiring.NewKey("github")
	queuesKey = wiring.NewKey("queues")
	idsKey    = wiring.NewKey("queue-ids")
)

// GitHub is the GitHub the configuration describes: a GitHub App (its
// secret), a token (locally), or without credentials one that is always
// unavailable (queuesvc.Unconfigured).
func GitHub(b *wiring.Base) (queuesvc.GitHub, error) {
	p, err := b.Part(gitHubKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		var gh queuesvc.GitHub = queuesvc.Unconfigured{}
		c, err := queuesvc.Client(b.Config, b.Now)
		if err != nil {
			return nil, err
		}
		if c != nil {
			gh = c
		}
		return unsafe.Pointer(&gh), nil
	})
	if err != nil {
		return nil, err
	}
	return *(*queuesvc.GitHub)(p), nil
}

// UseGitHub has b's graph talk to gh instead of the GitHub the
// configuration describes (tests' strict GitHub).
func UseGitHub(b *wiring.Base, gh queuesvc.GitHub) error {
	return b.Provide(gitHubKey, unsafe.Pointer(&gh))
}

// UseIDs has the merge queue of b's graph make its ids (queues, entries,
// test runs) with newID instead of uuids (tests).
func UseIDs(b *wiring.Base, newID func() string) error {
	return b.Provide(idsKey, unsafe.Pointer(&newID))
}

// Queues is the merge queue's service.
func Queues(b *wiring.Base) (*queuesvc.Service, error) {
	p, err := b.Part(queuesKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		gh, err := GitHub(b)
		if err != nil {
			return nil, err
		}
		// Uuids, unless a test provided its ids (UseIDs).
		var newID func() string
		if p, _ := b.Part(idsKey, func(*wiring.Base) (unsafe.Pointer, error) { return unsafe.Pointer(&newID), nil }); p != nil {
			newID = *(*func() string)(p)
		}
		d, err := queuesvc.New(queuesvc.Setup{Config: b.Config, Store: b.Store, Now: b.Now, NewID: newID, Log: b.Log, GitHub: gh})
		return unsafe.Pointer(d), err
	})
	return (*queuesvc.Service)(p), err
}

// FoldCommands is the fold-queue-commands function's handler: the table's
// stream announces clients' queue commands.
func FoldCommands(_ context.Context, b *wiring.Base) (wiring.StreamHandler, error) {
	d, err := Queues(b)
	if err != nil {
		return nil, err
	}
	return d.FoldStream, nil
}
