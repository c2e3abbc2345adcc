package github

import (
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
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/mainguard/mainguard/shared/errs"
)

// AppCredentials identify a GitHub App.
type AppCredentials struct {
	AppID      int64
	PrivateKey *rsa.PrivateKey
}

// ParsePrivateKey reads an App's PEM private key, PKCS#1 (what GitHub
// issues) or PKCS#8.
func ParsePrivateKey(pemBytes []byte) (*rsa.PrivateKey, error) {
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
	creds AppCredentials
	now   func() time.Time
	api   *gh.Client // authenticated with the app JWT

	mu       sync.Mutex
	installs map[Repo]int64
	tokens   map[int64]cachedToken
}

type cachedToken struct {
	token   string
	expires time.Time
}

func newAppAuth(creds AppCredentials, base string, transport http.RoundTripper, timeout time.Duration, now func() time.Time, ua string) (*appAuth, error) {
	if creds.AppID <= 0 || creds.PrivateKey == nil {
		return nil, errors.New("github: an app needs an id and a private key")
	}
	a := &appAuth{creds: creds, now: now, installs: map[Repo]int64{}, tokens: map[int64]cachedToken{}}
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
	jwt, err := SignAppJWT(t.a.creds.AppID, t.a.creds.PrivateKey, t.a.now())
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+jwt)
	return t.base.RoundTrip(req)
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
	it, _, err := a.api.Apps.CreateInstallationToken(ctx, id, nil)
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
