package queuesvc

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/tenancy"
)

// Setup is what New builds a driver from.
type Setup struct {
	Config config.Config
	Store  *store.Store
	Now    func() time.Time
	// NewID makes queue, entry and run ids; uuids when nil.
	NewID func() string
	Log   *slog.Logger
	// GitHub, when set, replaces the client built from Config (tests).
	GitHub GitHub
}

// New builds the driver from the configuration: a GitHub client on
// GITHUB_API_URL as a GitHub App (the secret config.SecretGitHubApp), or
// with a token (GITHUB_TOKEN, locally). With no GitHub credentials the
// queues still accept work, and every step finds GitHub unavailable.
func New(s Setup) (*Service, error) {
	if s.NewID == nil {
		s.NewID = uuid.NewString
	}
	gh := s.GitHub
	if gh == nil {
		c, err := Client(s.Config, s.Now)
		if err != nil {
			return nil, err
		}
		if c != nil {
			gh = c
		} else {
			gh = Unconfigured{}
		}
	}
	appURL := strings.TrimRight(s.Config.PublicAppURL, "/")
	t := &tenancy.Tenancy{Store: s.Store, GitHub: gh, TTL: s.Config.AuthCacheTTL, Now: s.Now}
	if c, ok := gh.(*github.Client); ok && c.IsApp() {
		t.Installations = c
	}
	return &Service{
		Store: s.Store, GitHub: gh, Now: s.Now, NewID: s.NewID, Log: s.Log, Tenancy: t,
		PageSize: int32(s.Config.MergeQueueTickPageSize),
		DetailsURL: func(k store.QueueKey, pr int) string {
			page := fmt.Sprintf("%s/%s/merge-queue/%s/%s/%s", appURL, url.PathEscape(k.Org),
				url.PathEscape(k.Repo.Owner), url.PathEscape(k.Repo.Name), url.PathEscape(k.Branch))
			if pr == 0 {
				return page // the queue's own page
			}
			return page + "/pr/" + strconv.Itoa(pr)
		},
	}, nil
}

// Client builds the GitHub client the configuration describes; nil when
// it names no credentials. The App's credentials are read when a call
// first needs them: a copy whose secret is unreadable starts, and only
// the calls to GitHub are unavailable.
func Client(cfg config.Config, now func() time.Time) (*github.Client, error) {
	gc := github.Config{BaseURL: cfg.GitHubAPIURL, Now: now}
	switch {
	case cfg.HasSecret(config.SecretGitHubApp):
		gc.AppSource = appSource(cfg)
	case cfg.GitHubToken != "":
		gc.Token = cfg.GitHubToken
	default:
		return nil, nil
	}
	return github.New(gc)
}

// appSource reads the App from its secret, parsing the key again only when
// the secret's value changed.
func appSource(cfg config.Config) github.AppSource {
	var (
		mu    sync.Mutex
		raw   []byte
		creds github.AppCredentials
	)
	return func(ctx context.Context, renew bool) (github.AppCredentials, error) {
		var b []byte
		var err error
		if renew {
			b, _, err = cfg.Secrets.RenewSecret(ctx, config.SecretGitHubApp)
		} else {
			b, err = cfg.Secrets.Secret(ctx, config.SecretGitHubApp)
		}
		if err != nil {
			return github.AppCredentials{}, err
		}
		mu.Lock()
		defer mu.Unlock()
		if raw != nil && bytes.Equal(b, raw) {
			return creds, nil
		}
		c, err := github.ParseAppSecret(b, cfg.GitHubAppID)
		if err != nil {
			return github.AppCredentials{}, errs.Wrap(errs.Unavailable, err,
				"the deployment's %s secret holds no usable GitHub App (run mainguard github app-setup)", config.SecretGitHubApp)
		}
		raw, creds = b, c
		return creds, nil
	}
}

// Unconfigured is the GitHub of a deployment without credentials: every
// call is unavailable, so queues accept work and wait.
type Unconfigured struct{}

var _ GitHub = Unconfigured{}

func errNoGitHub() error {
	return errs.E(errs.Unavailable, "GitHub is not configured: set GITHUB_TOKEN or GITHUB_APP_ID")
}

// PullRequest is unavailable.
func (Unconfigured) PullRequest(context.Context, github.Repo, int) (github.PullRequest, error) {
	return github.PullRequest{}, errNoGitHub()
}

// BranchHead is unavailable.
func (Unconfigured) BranchHead(context.Context, github.Repo, string) (string, error) {
	return "", errNoGitHub()
}

// RequiredChecks is unavailable.
func (Unconfigured) RequiredChecks(context.Context, github.Repo, string) ([]github.RequiredCheck, error) {
	return nil, errNoGitHub()
}

// UpToDate is unavailable.
func (Unconfigured) UpToDate(context.Context, github.Repo, string, string) (bool, error) {
	return false, errNoGitHub()
}

// BuildTestBranch is unavailable.
func (Unconfigured) BuildTestBranch(context.Context, github.Repo, string, []github.Head, string, string) (string, error) {
	return "", errNoGitHub()
}

// Checks is unavailable.
func (Unconfigured) PointTestBranch(context.Context, github.Repo, string, string) error {
	return errNoGitHub()
}

func (Unconfigured) Checks(context.Context, github.Repo, string) ([]github.Check, error) {
	return nil, errNoGitHub()
}

// Merge is unavailable.
func (Unconfigured) Merge(context.Context, github.Repo, int, string, github.MergeMethod) (string, error) {
	return "", errNoGitHub()
}

// SetStatus is unavailable.
func (Unconfigured) SetStatus(context.Context, github.Repo, string, string, string, string, string) error {
	return errNoGitHub()
}

// DeleteBranch is unavailable.
func (Unconfigured) DeleteBranch(context.Context, github.Repo, string) error { return errNoGitHub() }
