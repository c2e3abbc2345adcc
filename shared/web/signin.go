package web

import (
	"crypto/hmac"
	"net/http"
	"net/url"
	"strings"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
)

// signInPage is the sign-in form's data.
type signInPage struct {
	Next    string
	Message string // why the last attempt failed, plainly
	CSRF    string // the form's token, from the sign-in cookie's nonce
	GitHub  bool   // "Sign in with GitHub" is offered
}

// signInCookie holds the nonce the sign-in form's CSRF token derives from,
// so that only a form this site served signs anyone in: another site
// cannot sign a visitor into its own organization (login CSRF). Strict,
// so a cross-site post arrives without it.
const signInCookie = "mainguard_signin"

// signInForm serves GET /signin: no DynamoDB call.
func (w *Web) signInForm(rw http.ResponseWriter, r *http.Request) {
	nonce := ""
	if c, err := r.Cookie(signInCookie); err == nil && len(c.Value) >= 16 {
		nonce = c.Value
	} else {
		nonce = newNonce()
		http.SetCookie(rw, &http.Cookie{
			Name: signInCookie, Value: nonce, Path: "/signin", MaxAge: 3600,
			HttpOnly: true, Secure: w.sessions.secure, SameSite: http.SameSiteStrictMode,
		})
	}
	token, err := w.sessions.signInToken(r.Context(), nonce)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	page := signInPage{Next: safeNext(r.URL.Query().Get("next")), CSRF: token, GitHub: w.GitHub != nil}
	if err := w.render(rw, r, http.StatusOK, nil, view{Title: "Sign in"}, page); err != nil {
		w.fail(rw, r, err)
	}
}

// signInAgain renders the sign-in form with message and status.
func (w *Web) signInAgain(rw http.ResponseWriter, r *http.Request, status int, next, csrf, message string) {
	page := signInPage{Next: next, Message: message, CSRF: csrf, GitHub: w.GitHub != nil}
	if err := w.render(rw, r, status, nil, view{Title: "Sign in"}, page); err != nil {
		w.fail(rw, r, err)
	}
}

// signInFormToken is the sign-in form's CSRF token that the request
// carries, checked against its sign-in cookie: "" when either is missing
// or they do not match.
func (w *Web) signInFormToken(r *http.Request) (string, error) {
	c, err := r.Cookie(signInCookie)
	if err != nil || len(c.Value) < 16 {
		return "", nil
	}
	want, err := w.sessions.signInToken(r.Context(), c.Value)
	if err != nil {
		return "", err
	}
	if got := r.PostFormValue("csrf"); got == "" || !hmac.Equal([]byte(got), []byte(want)) {
		return "", nil
	}
	return want, nil
}

// signIn serves POST /signin: 1 GetItem (the token's item). A token that
// is not accepted, for whatever reason (unknown, revoked, malformed), gets
// the form again with one plain sentence, so the answer tells a guesser
// nothing; failures count against the client's address as the API's do,
// after the token was checked, so a valid token always signs in. A token
// without the read scope (an uploader's) is refused with a sentence that
// says so: it is valid, and its holder knows it.
func (w *Web) signIn(rw http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(rw, r.Body, 64<<10)
	next := safeNext(r.PostFormValue("next"))
	csrf, err := w.signInFormToken(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if csrf == "" {
		w.fail(rw, r, errForbidden)
		return
	}
	hash := store.HashToken(strings.TrimSpace(r.PostFormValue("token")))
	p, err := w.Auth.AuthenticateHash(r.Context(), hash)
	if err != nil && errs.Is(err, errs.Unauthorized) {
		if w.SignInFailures != nil {
			if ok, _ := w.SignInFailures.Fail(r.Context(), api.ClientAddress(r)); !ok {
				w.fail(rw, r, errs.E(errs.RateLimited, "too many failed sign-ins"))
				return
			}
		}
		w.signInAgain(rw, r, http.StatusUnauthorized, next, csrf, "That token was not accepted. Check it and try again.")
		return
	}
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if !p.Allows(api.ScopeRead) {
		w.signInAgain(rw, r, http.StatusForbidden, next, csrf, "That token cannot read (its scopes: "+api.ScopesString(p.Scopes)+"): sign in with a token that has the read scope.")
		return
	}
	if err := w.sessions.start(rw, r, session{Orgs: []string{p.Org}, Token: hash}); err != nil {
		w.fail(rw, r, err)
		return
	}
	http.Redirect(rw, r, landing(next, []string{p.Org}), http.StatusSeeOther)
}

// landing is where a person goes once signed in: next when it is a page of
// one of their organizations (or the App's setup page, which is every
// organization's), else their first organization's home.
func landing(next string, orgs []string) string {
	if strings.HasPrefix(next, "/github/setup?") {
		return next
	}
	for _, org := range orgs {
		if next != "" && strings.HasPrefix(strings.ToLower(next), "/"+strings.ToLower(org)) {
			return next
		}
	}
	return "/" + url.PathEscape(orgs[0])
}

// signOut serves POST /signout (a form, CSRF-checked): the session is
// revoked in the table (1 PutItem, kept until it would have expired), so
// that its cookie, should anyone have kept a copy, opens nothing more.
func (w *Web) signOut(rw http.ResponseWriter, r *http.Request, s session) error {
	if err := w.Auth.RevokeSession(r.Context(), s.ID(), s.Expires); err != nil {
		return err
	}
	w.sessions.end(rw)
	http.Redirect(rw, r, "/signin", http.StatusSeeOther)
	return nil
}

// safeNext keeps a return address only when it is a path of this site:
// "//host" and "/\host" would leave it.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return ""
	}
	return next
}
