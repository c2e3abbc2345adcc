package queueapi

import (
	"net/url"
	"strings"

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
		EnterpriseHost: EnterpriseHost(cfg.GitHubAPIURL),
		Secrets:        cfg.Secrets,
	}
}

// EnterpriseHost is the GitHub Enterprise host GITHUB_API_URL names, ""
// for github.com's API (or none).
func EnterpriseHost(apiURL string) string {
	u, err := url.Parse(apiURL)
	if err != nil || u.Hostname() == "" || strings.EqualFold(u.Hostname(), "api.github.com") {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
