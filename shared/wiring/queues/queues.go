// Package queues builds the merge queue's service and its GitHub client
// (package wiring says why each service's builders have a package).
package queues

import (
	"context"

	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/wiring"
)

var (
	gitHubKey = wiring.NewKey[queuesvc.GitHub]("github")
	queuesKey = wiring.NewKey[*queuesvc.Service]("queues")
	idsKey    = wiring.NewKey[func() string]("queue-ids")
)

// GitHub is the GitHub the configuration describes: a GitHub App (its
// secret), a token (locally), or without credentials one that is always
// unavailable (queuesvc.Unconfigured).
func GitHub(b *wiring.Base) (queuesvc.GitHub, error) {
	return wiring.Build(b, gitHubKey, func(b *wiring.Base) (queuesvc.GitHub, error) {
		c, err := queuesvc.Client(b.Config, b.Now)
		if err != nil || c == nil {
			return queuesvc.Unconfigured{}, err
		}
		return c, nil
	})
}

// UseGitHub has b's graph talk to gh instead of the GitHub the
// configuration describes (tests' strict GitHub).
func UseGitHub(b *wiring.Base, gh queuesvc.GitHub) error {
	return wiring.Provide(b, gitHubKey, gh)
}

// UseIDs has the merge queue of b's graph make its ids (queues, entries,
// test runs) with newID instead of uuids (tests).
func UseIDs(b *wiring.Base, newID func() string) error {
	return wiring.Provide(b, idsKey, newID)
}

// Queues is the merge queue's service.
func Queues(b *wiring.Base) (*queuesvc.Service, error) {
	return wiring.Build(b, queuesKey, func(b *wiring.Base) (*queuesvc.Service, error) {
		gh, err := GitHub(b)
		if err != nil {
			return nil, err
		}
		newID, _ := wiring.Build(b, idsKey, func(*wiring.Base) (func() string, error) { return nil, nil })
		return queuesvc.New(queuesvc.Setup{Config: b.Config, Store: b.Store, Now: b.Now, NewID: newID, Log: b.Log, GitHub: gh})
	})
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
