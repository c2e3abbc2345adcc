package github

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/mainguard/mainguard/shared/errs"
)

// Repo names a repository on the configured GitHub host.
type Repo struct {
	Owner string
	Name  string
}

// String is "owner/name".
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// DefaultTimeout bounds each HTTP call when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config configures a Client. Exactly one of Token and App is required.
type Config struct {
	// BaseURL is the REST API root: "" for https://api.github.com/, for
	// GitHub Enterprise "https://host/api/v3/", or a test server's URL. It is
	// used as given (a trailing slash is added), not rewritten.
	BaseURL string
	// Token is a static token (GITHUB_TOKEN) for local use.
	Token string
	// App authenticates as a GitHub App installed on the repositories;
	// AppSource does too, with credentials read when a call needs them.
	App       *AppCredentials
	AppSource AppSource
	// Timeout bounds each HTTP call; DefaultTimeout when zero.
	Timeout time.Duration
	// Transport, when set, carries the requests (tests, proxies).
	Transport http.RoundTripper
	// Now is the clock for token expiry, JWTs and retry waits.
	Now func() time.Time
	// UserAgent names the service to GitHub; "mainguard" when empty.
	UserAgent string
}

// Client is a GitHub REST client scoped to what the merge queue needs.
// It is safe for concurrent use.
type Client struct {
	gh   *gh.Client
	now  func() time.Time
	auth tokenSource
	apps appIDs // the Apps behind statuses' bot creators (required.go)
}

// tokenSource yields the bearer token for calls about one repository.
type tokenSource interface {
	token(ctx context.Context, repo Repo) (string, error)
	// invalidate drops a cached token GitHub refused.
	invalidate(repo Repo)
}

type staticToken string

func (t staticToken) token(context.Context, Repo) (string, error) { return string(t), nil }
func (staticToken) invalidate(Repo)                               {}

// New builds a Client from cfg.
func New(cfg Config) (*Client, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "mainguard"
	}
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.github.com/"
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	c := &Client{now: cfg.Now}
	switch {
	case cfg.Token != "" && (cfg.App != nil || cfg.AppSource != nil):
		return nil, errors.New("github: configure a token or an app, not both")
	case cfg.Token != "":
		c.auth = staticToken(cfg.Token)
	case cfg.App != nil || cfg.AppSource != nil:
		source := cfg.AppSource
		if cfg.App != nil {
			s, err := StaticApp(*cfg.App)
			if err != nil {
				return nil, err
			}
			source = s
		}
		a, err := newAppAuth(source, base, transport, cfg.Timeout, cfg.Now, cfg.UserAgent)
		if err != nil {
			return nil, err
		}
		c.auth = a
	default:
		return nil, errors.New("github: a token or an app is required")
	}
	client, err := newGH(base, &http.Client{
		Timeout:   cfg.Timeout,
		Transport: &authTransport{base: transport, auth: c.auth, now: cfg.Now, held: &held{}},
	}, cfg.UserAgent)
	if err != nil {
		return nil, err
	}
	c.gh = client
	return c, nil
}

// newGH builds a go-github client on base. Its own rate-limit bookkeeping is
// off: it would refuse calls locally until a reset it computes from the wall
// clock, while the queue driver already waits as Retryable says.
func newGH(base string, hc *http.Client, userAgent string) (*gh.Client, error) {
	return gh.NewClient(
		gh.WithHTTPClient(hc),
		gh.WithURLs(&base, &base),
		gh.WithDisableRateLimitCheck(),
		gh.WithUserAgent(userAgent),
	)
}

type repoKey struct{}

// forRepo marks ctx with the repository a call is about, so the transport
// can pick that repository's installation token.
func forRepo(ctx context.Context, repo Repo) context.Context {
	return context.WithValue(ctx, repoKey{}, repo)
}

// authTransport adds the bearer token of the call's repository, and keeps
// calls with a token GitHub rate-limited from reaching GitHub until it
// said to come back (held).
type authTransport struct {
	base http.RoundTripper
	auth tokenSource
	now  func() time.Time
	held *held
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	repo, ok := req.Context().Value(repoKey{}).(Repo)
	if !ok {
		return nil, errors.New("github: request without a repository")
	}
	tok, err := t.auth.token(req.Context(), repo)
	if err != nil {
		return nil, err
	}
	if err := t.held.check(tok, t.now()); err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		if resp.StatusCode == http.StatusUnauthorized {
			t.auth.invalidate(repo)
		}
		t.held.observe(tok, resp, t.now())
	}
	return resp, err
}

func checkRepo(repo Repo) error {
	if repo.Owner == "" || repo.Name == "" {
		return errs.E(errs.Invalid, "github: repository %q is incomplete", repo.String())
	}
	return nil
}
