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
		inst, _, err := a.api.Apps.GetRepositoryInstallation(ctx, repo.Owner, repo.Name)
		if err != nil {
			return "", err
		}
		id = inst.GetID()
		a.mu.Lock()
		a.installs[repo] = id
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
