package queueapi

import (
	"context"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/queuesvc"
)

// Setup is what New builds the merge queue from: its driver's setup.
type Setup = queuesvc.Setup

// New builds the handlers and their service (queuesvc.New).
func New(s Setup) (*Handlers, error) {
	d, err := queuesvc.New(s)
	if err != nil {
		return nil, err
	}
	return &Handlers{
		Store: s.Store, Driver: d, Now: d.Now, NewID: d.NewID,
		LowerEnums:     s.Config.EnumCase == "lower",
		EnterpriseHost: config.EnterpriseHost(s.Config.GitHubAPIURL),
		Secrets:        s.Config.Secrets,
	}, nil
}

// Group is the merge-queue endpoint group of a function or the local
// server.
func Group(_ context.Context, b *lambdafn.Base) (lambdafn.Handlers, error) {
	h, err := New(Setup{Config: b.Config, Store: b.Store, Now: b.Now, Log: b.Log})
	if err != nil {
		return nil, err
	}
	return h.Endpoints(), nil
}
