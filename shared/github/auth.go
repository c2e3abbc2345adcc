package github

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/mainguard/mainguard/shared/errs"
)

// AppCredentials identify a GitHub App.
type AppCredentials struct {
	AppID      int64
	PrivateKey *rsa.PrivateKey
}

// AppSource yields the App's credentials when a call needs them, so a copy
// starts without them (they are read from Secrets Manager). renew asks for
// a fresh read: GitHub refused a JWT signed with the last ones.
type AppSource func(ctx context.Context, renew bool) (AppCredentials, error)

// AppSecret is the GitHub App as the deployment keeps it (one Secrets
// Manager secret, JSON): what GitHub's manifest conversion returns, less the
// webhook secret, which is a secret of its own.
type AppSecret struct {
	AppID        int64  `json:"app_id"`
	Slug         string `json:"slug,omitempty"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	PrivateKey   string `json:"private_key"`
}

// ParseAppSecret reads the App's secret: AppSecret's JSON, or (for an App
// made by hand) its PEM key alone, with the App id given apart as appID.
func ParseAppSecret(b []byte, appID int64) (AppCredentials, error) {
	var s AppSecret
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] == '{' {
		if err := json.Unmarshal(trimmed, &s); err != nil {
			return AppCredentials{}, errors.New("github: the App secret is not valid JSON")
		}
	} else {
		s = AppSecret{AppID: appID, PrivateKey: string(b)}
	}
	if s.AppID <= 0 {
		return AppCredentials{}, errors.New("github: the App secret has no app_id")
	}
	if s.PrivateKey == "" {
		return AppCredentials{}, errors.New("github: the App secret has no private_key")
	}
	key, err := ParsePrivateKey([]byte(s.PrivateKey))
	if err != nil {
		return AppCredentials{}, err
	}
	return AppCredentials{AppID: s.AppID, PrivateKey: key}, nil
}

// ParsePrivateKey reads an App's PEM private key, PKCS#1 (what GitHub
// issues) or PKCS#8. A key whose line breaks arrive as the two characters
// \n (as `sam deploy --parameter-overrides`, a .env file or a JSON string
// written by hand deliver it) is read as if they were line breaks.
func ParsePrivateKey(pemBytes []byte) (*rsa.PrivateKey, error) {
	// A PEM holds no backslash: every \n (and \r) in one is an escaped
	// line break.
	pemBytes = bytes.ReplaceAll(pemBytes, []byte(`\r`), nil)
	pemBytes = bytes.ReplaceAll(pemBytes, []byte(`\n`), []byte("\n"))
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("github: private key is not PEM")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("github: private key is neither PKCS#1 nor PKCS#8 RSA")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("github: private key is not RSA")
	}
	return rk, nil
}

// SignAppJWT returns the RS256 JWT a GitHub App authenticates with: issued a
// minute in the past (GitHub's advice against clock drift), valid for nine
// minutes (GitHub refuses more than ten), issuer the app id.
func SignAppJWT(appID int64, key *rsa.PrivateKey, now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, err := json.Marshal(struct {
		Iat int64  `json:"iat"`
		Exp int64  `json:"exp"`
		Iss string `json:"iss"`
	}{now.Add(-time.Minute).Unix(), now.Add(9 * time.Minute).Unix(), strconv.FormatInt(appID, 10)})
	if err != nil {
		return "", err
	}
	signing := header + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		return "", err
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// tokenMargin renews an installation token this long before it expires, so
// a token handed out is still good for the calls of one tick.
const tokenMargin = 5 * time.Minute

// appAuth resolves each repository's installation once and caches its
// installation token until tokenMargin before expiry.
type appAuth struct {
	source AppSource
	now    func() time.Time
	api    *gh.Client // authenticated with the app JWT
	// renew asks the source for fresh credentials: GitHub refused the
	// last JWT (the App's key was rotated).
	renew atomic.Bool

	mu       sync.Mutex
	installs map[Repo]int64
	tokens   map[int64]cachedToken
}

type cachedToken struct {
	token   string
	expires time.Time
}

func newAppAuth(source AppSource, base string, transport http.RoundTripper, timeout time.Duration, now func() time.Time, ua string) (*appAuth, error) {
	a := &appAuth{source: source, now: now, installs: map[Repo]int64{}, tokens: map[int64]cachedToken{}}
	api, err := newGH(base, &http.Client{Timeout: timeout, Transport: &jwtTransport{base: transport, a: a}}, ua)
	if err != nil {
		return nil, err
	}
	a.api = api
	return a, nil
}

type jwtTransport struct {
	base http.RoundTripper
	a    *appAuth
}

func (t *jwtTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	creds, err := t.a.source(req.Context(), t.a.renew.Swap(false))
	if err != nil {
		return nil, err
	}
	jwt, err := SignAppJWT(creds.AppID, creds.PrivateKey, t.a.now())
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+jwt)
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.a.renew.Store(true)
	}
	return resp, err
}

// StaticApp is the source of fixed credentials.
func StaticApp(creds AppCredentials) (AppSource, error) {
	if creds.AppID <= 0 || creds.PrivateKey == nil {
		return nil, errors.New("github: an app needs an id and a private key")
	}
	return func(context.Context, bool) (AppCredentials, error) { return creds, nil }, nil
}

// installation is the id of the installation covering repo, resolved
// once per copy (GitHub answers 404 where the App is not installed).
func (a *appAuth) installation(ctx context.Context, repo Repo) (int64, error) {
	a.mu.Lock()
	id, known := a.installs[repo]
	a.mu.Unlock()
	if known {
		return id, nil
	}
	inst, _, err := a.api.Apps.GetRepositoryInstallation(ctx, repo.Owner, repo.Name)
	if err != nil {
		return 0, err
	}
	a.mu.Lock()
	a.installs[repo] = inst.GetID()
	a.mu.Unlock()
	return inst.GetID(), nil
}

// token is called without the lock held across network calls: two callers
// may both fetch a token on a cold cache, which is harmless, while a slow
// GitHub never blocks callers whose token is cached.
func (a *appAuth) token(ctx context.Context, repo Repo) (string, error) {
	a.mu.Lock()
	id, known := a.installs[repo]
	tok, cached := a.tokens[id]
	a.mu.Unlock()
	if known && cached && a.now().Before(tok.expires.Add(-tokenMargin)) {
		return tok.token, nil
	}
	if !known {
		var err error
		if id, err = a.installation(ctx, repo); err != nil {
			return "", err
		}
		a.mu.Lock()
		tok, cached = a.tokens[id]
		a.mu.Unlock()
		// Another repository of the same installation may have fetched it.
		if cached && a.now().Before(tok.expires.Add(-tokenMargin)) {
			return tok.token, nil
		}
	}
	// Empty options, not nil: go-github marshals a nil pointer as the body
	// "null", which GitHub refuses (422, not an object); {} asks for the
	// installation's every repository and permission.
	it, _, err := a.api.Apps.CreateInstallationToken(ctx, id, &gh.InstallationTokenOptions{})
	if err != nil {
		return "", err
	}
	tok = cachedToken{token: it.GetToken(), expires: it.GetExpiresAt().Time}
	a.mu.Lock()
	a.tokens[id] = tok
	a.mu.Unlock()
	return tok.token, nil
}

func (a *appAuth) invalidate(repo Repo) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id, ok := a.installs[repo]; ok {
		delete(a.tokens, id)
	}
}

// IsApp reports whether the client acts as a GitHub App (whose
// installations say which organization a repository belongs to), not
// with a token.
func (c *Client) IsApp() bool {
	_, ok := c.auth.(*appAuth)
	return ok
}

// Installation is the id of the App installation that covers repo: one
// call per repository per copy, cached. errs.NotFound where the App is not
// installed; errs.Invalid for a client that is not an App.
func (c *Client) Installation(ctx context.Context, repo Repo) (int64, error) {
	a, ok := c.auth.(*appAuth)
	if !ok {
		return 0, errs.E(errs.Invalid, "github: a token has no installations")
	}
	if err := checkRepo(repo); err != nil {
		return 0, err
	}
	id, err := a.installation(ctx, repo)
	return id, c.wrap(err, "find the installation of "+repo.String())
}
