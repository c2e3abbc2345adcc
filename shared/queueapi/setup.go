package queueapi

import (
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/store"
)

// New is the merge-queue endpoints on the table st and the service d,
// spelled and checked as cfg says.
func New(st *store.Store, d *queuesvc.Service, cfg config.Config) *Handlers {
	return &Handlers{
		Store: st, Driver: d, Now: d.Now, NewID: d.NewID,
		LowerEnums:     cfg.EnumCase == "lower",
		EnterpriseHost: config.EnterpriseHost(cfg.GitHubAPIURL),
		Secrets:        cfg.Secrets,
	}
}
