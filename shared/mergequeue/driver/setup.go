package driver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/store"
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
// GITHUB_API_URL with GITHUB_TOKEN, or with the GitHub App of
// GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY. With no GitHub credentials the
// queues still accept work, and every step finds GitHub unavailable.
func New(s Setup) (*Driver, error) {
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
	return &Driver{
		Store: s.Store, GitHub: gh, Now: s.Now, NewID: s.NewID, Log: s.Log,
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
// it names no credentials.
func Client(cfg config.Config, now func() time.Time) (*github.Client, error) {
	gc := github.Config{BaseURL: cfg.GitHubAPIURL, Now: now}
	switch {
	case cfg.GitHubAppID > 0:
		if cfg.GitHubAppPrivateKey == "" {
			// TODO: read the key from Secrets Manager (GITHUB_APP_PRIVATE_KEY_SECRET_ARN)
			// once its SDK module is in go.mod; until then the key comes from the environment.
			return nil, errors.New("configuration: GITHUB_APP_PRIVATE_KEY_SECRET_ARN is not read yet; set GITHUB_APP_PRIVATE_KEY")
		}
		key, err := github.ParsePrivateKey([]byte(cfg.GitHubAppPrivateKey))
		if err != nil {
			return nil, fmt.Errorf("configuration: GITHUB_APP_PRIVATE_KEY: %w", err)
		}
		gc.App = &github.AppCredentials{AppID: cfg.GitHubAppID, PrivateKey: key}
	case cfg.GitHubToken != "":
		gc.Token = cfg.GitHubToken
	default:
		return nil, nil
	}
	return github.New(gc)
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

// RequiredStatuses is unavailable.
func (Unconfigured) RequiredStatuses(context.Context, github.Repo, string) ([]string, error) {
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
