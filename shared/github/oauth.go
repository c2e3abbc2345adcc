package github

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/mainguard/mainguard/shared/errs"
)

// OAuth is a GitHub App's user authorization ("Sign in with GitHub"), the
// web application flow GitHub documents: the person is sent to
// {web}/login/oauth/authorize, comes back with a code, which
// POST {web}/login/oauth/access_token exchanges for a user access token;
// GET /user and GET /user/installations (on the API) then say who they are
// and which of the App's installations they can read. The user token is
// used for these calls only and kept nowhere.
type OAuth struct {
	ClientID string
	// ClientSecret reads the client's secret when a code is exchanged: a
	// deployment keeps it in the App's secret (AppSecret.ClientSecret),
	// read when needed, never in its environment.
	ClientSecret func(context.Context) (string, error)
	// WebURL is GitHub's web address (WebURL of the API's); APIURL the
	// REST API root, as Config.BaseURL.
	WebURL, APIURL string
	// HTTP carries the calls; a client with DefaultTimeout when nil.
	HTTP *http.Client
}

func (o *OAuth) client() *http.Client {
	if o.HTTP == nil {
		return &http.Client{Timeout: DefaultTimeout}
	}
	return o.HTTP
}

// AuthorizeURL is where a person is sent to authorize the App: back to
// redirect with a code and state.
func (o *OAuth) AuthorizeURL(redirect, state string) string {
	q := url.Values{"client_id": {o.ClientID}, "redirect_uri": {redirect}, "state": {state}}
	return strings.TrimSuffix(o.WebURL, "/") + "/login/oauth/authorize?" + q.Encode()
}

// Exchange trades the code GitHub handed back for a user access token.
// A code that is wrong, used or expired is errs.Invalid (GitHub answers
// 200 with an error field); an unreachable GitHub errs.Unavailable.
func (o *OAuth) Exchange(ctx context.Context, code, redirect string) (string, error) {
	secret, err := o.ClientSecret(ctx)
	if err != nil {
		return "", err
	}
	form := url.Values{"client_id": {o.ClientID}, "client_secret": {secret}, "code": {code}, "redirect_uri": {redirect}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.WebURL, "/")+"/login/oauth/access_token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", errs.Wrap(errs.Internal, err, "github: sign-in request")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := o.client().Do(req)
	if err != nil {
		return "", errs.Wrap(errs.Unavailable, err, "github: sign-in: unreachable")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", errs.Wrap(errs.Unavailable, err, "github: sign-in: answer cut")
	}
	if resp.StatusCode != http.StatusOK {
		return "", errs.E(errs.Unavailable, "github: sign-in: %d from %s", resp.StatusCode, req.URL.Path)
	}
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return "", errs.Wrap(errs.Unavailable, err, "github: sign-in: the answer is not JSON")
	}
	switch {
	case out.Error == "incorrect_client_credentials":
		// Ours to fix, not the person's: the deployment's client secret.
		return "", errs.E(errs.Internal, "github: sign-in: GitHub refused the App's client id or secret (GITHUB_APP_CLIENT_ID, the App secret's client_secret)")
	case out.Error != "":
		return "", errs.E(errs.Invalid, "github: sign-in: %s (%s)", out.Error, out.Description)
	case out.AccessToken == "":
		return "", errs.E(errs.Unavailable, "github: sign-in: no access token in the answer")
	}
	return out.AccessToken, nil
}

// UserInstallation is an installation of the App a person can read.
type UserInstallation struct {
	ID      int64
	Account string // the account it is installed on
}

// User is who a user access token belongs to and which of the App's
// installations they can read: GET /user and GET /user/installations,
// every page (at most 10 pages of 100).
func (o *OAuth) User(ctx context.Context, token string) (string, []UserInstallation, error) {
	base := strings.TrimSuffix(o.APIURL, "/") + "/"
	if o.APIURL == "" {
		base = "https://api.github.com/"
	}
	hc := *o.client()
	hc.Transport = bearer{token: token, base: hc.Transport}
	c, err := newGH(base, &hc, "mainguard")
	if err != nil {
		return "", nil, errs.Wrap(errs.Internal, err, "github: sign-in client")
	}
	w := &Client{now: time.Now} // for wrap: how long a rate limit lasts
	u, _, err := c.Users.Get(ctx, "")
	if err != nil {
		return "", nil, w.wrap(err, "read the signed-in user")
	}
	var out []UserInstallation
	opt := &gh.ListOptions{PerPage: 100}
	for range 10 {
		page, resp, err := c.Apps.ListUserInstallations(ctx, opt)
		if err != nil {
			return "", nil, w.wrap(err, "list the user's installations")
		}
		for _, in := range page {
			out = append(out, UserInstallation{ID: in.GetID(), Account: in.GetAccount().GetLogin()})
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return u.GetLogin(), out, nil
}

// bearer adds a user access token to each request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}
