package web

import (
	"context"
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
)

// GitHubSignIn is "Sign in with GitHub": the GitHub App's user
// authorization (github.OAuth). A person who signs in so sees the
// organizations whose App installations they can read on GitHub
// (GET /user/installations, each installation mapped to the organization
// that recorded it), and in them each repository they can read on GitHub;
// what they may change follows their permission on the repository (write
// to pause, cancel, restart or override; access.go). Their GitHub token
// serves the sign-in and is dropped: the session keeps their login, and
// permissions are asked of GitHub with the App's own token, kept a minute.
//
// The same flow records an installation for an organization (the App's
// setup URL, /github/setup): someone signed in with an admin token of the
// organization, who can read the installation on GitHub, makes it the
// organization's.
type GitHubSignIn struct {
	OAuth    *github.OAuth
	Callback string // this app's /signin/github/callback, as registered with the App
}

// newGitHubSignIn is the sign-in cfg describes; nil without an App client.
func newGitHubSignIn(cfg config.Config) *GitHubSignIn {
	if cfg.GitHubAppClientID == "" {
		return nil
	}
	return &GitHubSignIn{
		OAuth: &github.OAuth{
			ClientID: cfg.GitHubAppClientID, ClientSecret: func(ctx context.Context) (string, error) { return clientSecret(ctx, cfg) },
			WebURL: cfg.GitHubWebURL, APIURL: cfg.GitHubAPIURL,
		},
		Callback: strings.TrimRight(cfg.PublicAppURL, "/") + "/signin/github/callback",
	}
}

// clientSecret is the App's OAuth client secret: the App secret's
// client_secret (mainguard github app-setup stores it from GitHub's
// manifest conversion; locally the secret is built from the environment,
// GITHUB_APP_CLIENT_SECRET included).
func clientSecret(ctx context.Context, cfg config.Config) (string, error) {
	if !cfg.HasSecret(config.SecretGitHubApp) {
		return "", errs.E(errs.Unavailable, "sign in with GitHub: the deployment has no GitHub App secret")
	}
	b, err := cfg.Secrets.Secret(ctx, config.SecretGitHubApp)
	if err != nil {
		return "", err
	}
	var app github.AppSecret
	if json.Unmarshal(b, &app) != nil || app.ClientSecret == "" {
		return "", errs.E(errs.Unavailable, "sign in with GitHub: the GitHub App secret has no client_secret (store the App's OAuth client secret in it)")
	}
	return app.ClientSecret, nil
}

// maxOrgs bounds the organizations one GitHub session lists (they ride in
// its cookie).
const maxOrgs = 20

// oauthFlow is what a trip through GitHub's authorization carries, in a
// signed cookie of its own: its nonce (the state GitHub hands back
// derives from it) and what to do on return.
type oauthFlow struct {
	Nonce string
	Next  string // sign-in: where to go once signed in
	// Setup: record installation Install for organization Org.
	Org     string
	Install int64
}

// flowCookie is the cookie of a trip through GitHub. SameSite=Lax: the
// return from GitHub is a navigation from another site, which a Strict
// cookie would not come back with.
func (w *Web) flowCookie() string {
	if w.sessions.secure {
		return "__Host-mainguard_github"
	}
	return "mainguard_github"
}

// startFlow sends the person to GitHub to authorize the App, f kept for
// their return.
func (w *Web) startFlow(rw http.ResponseWriter, r *http.Request, f oauthFlow) {
	f.Nonce = newNonce()
	payload := strings.Join([]string{f.Nonce, f.Next, f.Org, strconv.FormatInt(f.Install, 10)}, "|")
	mac, err := w.sessions.mac(r.Context(), "github-flow", payload)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	state, err := w.sessions.mac(r.Context(), "github-state", f.Nonce)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	http.SetCookie(rw, &http.Cookie{
		Name: w.flowCookie(), Value: base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(mac),
		Path: "/", MaxAge: 600, HttpOnly: true, Secure: w.sessions.secure, SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(rw, r, w.GitHub.OAuth.AuthorizeURL(w.GitHub.Callback, base64.RawURLEncoding.EncodeToString(state)), http.StatusSeeOther)
}

// endFlow reads and clears the flow of the person's return from GitHub;
// false when there is none, or GitHub's state is not its own (a forged
// return, or one from another browser: login CSRF).
func (w *Web) endFlow(rw http.ResponseWriter, r *http.Request) (oauthFlow, bool, error) {
	c, err := r.Cookie(w.flowCookie())
	if err != nil {
		return oauthFlow{}, false, nil
	}
	http.SetCookie(rw, &http.Cookie{Name: w.flowCookie(), Path: "/", MaxAge: -1, HttpOnly: true, Secure: w.sessions.secure, SameSite: http.SameSiteLaxMode})
	p64, m64, _ := strings.Cut(c.Value, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	got, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil {
		return oauthFlow{}, false, nil
	}
	want, err := w.sessions.mac(r.Context(), "github-flow", string(payload))
	if err != nil || !hmac.Equal(got, want) {
		return oauthFlow{}, false, err
	}
	parts := strings.Split(string(payload), "|")
	if len(parts) != 4 {
		return oauthFlow{}, false, nil
	}
	f := oauthFlow{Nonce: parts[0], Next: parts[1], Org: parts[2]}
	f.Install, _ = strconv.ParseInt(parts[3], 10, 64)
	state, err := w.sessions.mac(r.Context(), "github-state", f.Nonce)
	if err != nil {
		return oauthFlow{}, false, err
	}
	if got := r.URL.Query().Get("state"); got == "" || !hmac.Equal([]byte(got), []byte(base64.RawURLEncoding.EncodeToString(state))) {
		return oauthFlow{}, false, nil
	}
	return f, true, nil
}

// gitHubSignIn serves GET /signin/github: off to GitHub. No DynamoDB call.
func (w *Web) gitHubSignIn(rw http.ResponseWriter, r *http.Request) {
	if w.GitHub == nil {
		w.fail(rw, r, errs.E(errs.NotFound, "no GitHub sign-in"))
		return
	}
	w.startFlow(rw, r, oauthFlow{Next: safeNext(r.URL.Query().Get("next"))})
}

// gitHubCallback serves GET /signin/github/callback, where GitHub sends
// the person back: the code is exchanged, the person and their
// installations read (3 GitHub calls, then 1 GetItem per installation),
// and they are signed in to the organizations those installations belong
// to, or the installation of a setup is recorded.
func (w *Web) gitHubCallback(rw http.ResponseWriter, r *http.Request) {
	if w.GitHub == nil {
		w.fail(rw, r, errs.E(errs.NotFound, "no GitHub sign-in"))
		return
	}
	f, ok, err := w.endFlow(rw, r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if !ok {
		w.fail(rw, r, errs.E(errs.Forbidden, "this sign-in did not start here, or took longer than ten minutes; sign in again"))
		return
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		// access_denied: the person said no on GitHub.
		w.fail(rw, r, errs.E(errs.Forbidden, "GitHub did not sign you in (%s); sign in again", api.Clip(e)))
		return
	}
	ctx := r.Context()
	token, err := w.GitHub.OAuth.Exchange(ctx, q.Get("code"), w.GitHub.Callback)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	login, installs, err := w.GitHub.OAuth.User(ctx, token)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if f.Install != 0 {
		w.finishSetup(rw, r, f, login, installs)
		return
	}
	orgs, err := w.orgsOf(ctx, installs)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if len(orgs) == 0 {
		w.fail(rw, r, errs.E(errs.Forbidden, "@%s can read no organization of this deployment on GitHub: an administrator records an organization's App installation (mainguard org set --github-installation)", login))
		return
	}
	if err := w.sessions.start(rw, r, session{Orgs: orgs, Login: login}); err != nil {
		w.fail(rw, r, err)
		return
	}
	w.continueTo(rw, r, landing(f.Next, orgs), "Signed in as @"+login+".")
}

// orgsOf are the organizations that recorded installs, without repeats,
// at most maxOrgs.
func (w *Web) orgsOf(ctx context.Context, installs []github.UserInstallation) ([]string, error) {
	var orgs []string
	for _, in := range installs {
		rec, ok, err := w.Store.InstallationOf(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		if ok && !slices.Contains(orgs, rec.Org) && len(orgs) < maxOrgs {
			orgs = append(orgs, rec.Org)
		}
	}
	slices.Sort(orgs)
	return orgs, nil
}

// continuePage is the page that takes a person on once signed in.
type continuePage struct {
	Message, Next string
}

// continueTo answers 200 with a page that moves on to next at once: the
// return from GitHub is a navigation another site started, on which a
// browser would not send the new SameSite=Strict session cookie through a
// redirect; a navigation this page starts is this site's own.
func (w *Web) continueTo(rw http.ResponseWriter, r *http.Request, next, message string) {
	if err := w.render(rw, r, http.StatusOK, nil, view{Title: "Signed in", Refresh: next}, continuePage{Message: message, Next: next}); err != nil {
		w.fail(rw, r, err)
	}
}

// gitHubSetup serves GET /github/setup?installation_id=…, the App's setup
// URL GitHub sends someone to once they installed it: signed in with an
// admin token of an organization, they go to GitHub to show they can read
// the installation, and it becomes the organization's (finishSetup).
func (w *Web) gitHubSetup(rw http.ResponseWriter, r *http.Request) {
	w.page(func(rw http.ResponseWriter, r *http.Request, s session) error {
		if w.GitHub == nil {
			return errs.E(errs.NotFound, "no GitHub App sign-in is configured")
		}
		id, err := strconv.ParseInt(r.URL.Query().Get("installation_id"), 10, 64)
		if err != nil || id <= 0 {
			return errs.E(errs.Invalid, "the address needs ?installation_id= and a positive integer")
		}
		if s.Login != "" {
			return errs.E(errs.Forbidden, "recording an installation needs an admin token of the organization: sign out and sign in with one")
		}
		if err := s.principal.Require(api.ScopeAdmin, "Recording an installation"); err != nil {
			return err
		}
		w.startFlow(rw, r, oauthFlow{Org: s.Org, Install: id})
		return nil
	})(rw, r)
}

// finishSetup records installation f.Install for organization f.Org once
// GitHub showed that the person can read it (1 transaction, 4 write
// units).
func (w *Web) finishSetup(rw http.ResponseWriter, r *http.Request, f oauthFlow, login string, installs []github.UserInstallation) {
	i := slices.IndexFunc(installs, func(in github.UserInstallation) bool { return in.ID == f.Install })
	if i < 0 {
		w.fail(rw, r, errs.E(errs.Forbidden, "@%s cannot read installation %d on GitHub, so it cannot be recorded for %s", login, f.Install, f.Org))
		return
	}
	in, err := w.Store.AddInstallation(r.Context(), f.Org, f.Install, installs[i].Account, false)
	if errs.Is(err, errs.Conflict) {
		// The other organization's name is the administrators' to know.
		err = errs.E(errs.Conflict, "installation %d belongs to another organization of this deployment; an administrator moves it with mainguard org set --github-installation", f.Install)
	}
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	w.continueTo(rw, r, orgHref(f.Org), fmt.Sprintf("The App's installation %d on %s now belongs to %s.", in.ID, in.Account, f.Org))
}
