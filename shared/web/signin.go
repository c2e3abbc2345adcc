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
	page := signInPage{Next: safeNext(r.URL.Query().Get("next")), CSRF: token}
	if err := w.render(rw, r, http.StatusOK, "signin.html", nil, view{Title: "Sign in", Page: page}); err != nil {
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
// nothing; failures count against the client's address as the API's do.
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
	client := api.ClientAddress(r)
	if w.SignInFailures != nil && client != "" {
		if blocked, _ := w.SignInFailures.Blocked(client); blocked {
			w.fail(rw, r, errs.E(errs.RateLimited, "too many failed sign-ins"))
			return
		}
	}
	hash := store.HashToken(strings.TrimSpace(r.PostFormValue("token")))
	org, err := w.Auth.AuthenticateHash(r.Context(), hash)
	if err != nil && errs.Is(err, errs.Unauthorized) {
		if w.SignInFailures != nil && client != "" {
			w.SignInFailures.Allow(client)
		}
		page := signInPage{Next: next, Message: "That token was not accepted. Check it and try again.", CSRF: csrf}
		if err := w.render(rw, r, http.StatusUnauthorized, "signin.html", nil, view{Title: "Sign in", Page: page}); err != nil {
			w.fail(rw, r, err)
		}
		return
	}
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if err := w.sessions.start(rw, r, org, hash); err != nil {
		w.fail(rw, r, err)
		return
	}
	if next == "" || !strings.HasPrefix(strings.ToLower(next), "/"+strings.ToLower(org)) {
		next = "/" + url.PathEscape(org)
	}
	http.Redirect(rw, r, next, http.StatusSeeOther)
}

// signOut serves POST /signout (a form, CSRF-checked): no DynamoDB call.
func (w *Web) signOut(rw http.ResponseWriter, r *http.Request, _ session) error {
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
