package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
)

// The session cookie's name. Under https it carries the __Host- prefix,
// which browsers honour only on Secure cookies of path / set by the host
// itself: no subdomain and no plain-http page can set or shadow it. Plain
// http (the local server) cannot have it.
const (
	cookieName       = "mainguard_session"
	secureCookieName = "__Host-" + cookieName
)

// SessionTTL is how long a sign-in lasts, at most: a session ends as
// soon as it is signed out (a revocation the table keeps until then), or
// its token is revoked (Web.signedIn).
const SessionTTL = 8 * time.Hour

// session is a signed-in person: with an API token, the token's
// organization and the token's hash (never the token), by which each page
// checks the token still holds; with GitHub, their login and the
// organizations whose App installations they can read on GitHub. Org is
// the organization a page is of (page sets it from the path).
type session struct {
	Org     string
	Orgs    []string // every organization the session may see
	Login   string   // GitHub sign-in: the person's GitHub login; "" with a token
	Expires time.Time
	Nonce   string // random per sign-in; the CSRF token and the session id derive from it
	Token   string // store.HashToken of the token signed in with; "" with GitHub
	// principal is the token's organization and scopes, as the auth cache
	// has them (not in the cookie: a token's scopes are the table's).
	principal api.Principal
}

// ID names the session in the table's revocations: the SHA-256 of its
// nonce, which tells nothing of its CSRF token (an HMAC of the nonce).
func (s session) ID() string {
	h := sha256.Sum256([]byte("session\x00" + s.Nonce))
	return base64.RawURLEncoding.EncodeToString(h[:16])
}

// sessions signs and reads session cookies with the deployment's secret.
type sessions struct {
	secret func(ctx context.Context) ([]byte, error)
	secure bool // Secure __Host- cookies: the app is served over https
	now    func() time.Time
}

// name is the session cookie's name.
func (m sessions) name() string {
	if m.secure {
		return secureCookieName
	}
	return cookieName
}

// sessionVersion starts every session cookie's payload: a cookie of
// another form (an older release's) is no session, and its owner signs
// in again.
const sessionVersion = "s2"

// value is s as a cookie value: the fields, then their MAC, base64url.
func (m sessions) value(ctx context.Context, s session) (string, error) {
	payload := strings.Join([]string{sessionVersion, strings.Join(s.Orgs, ","), s.Login,
		strconv.FormatInt(s.Expires.Unix(), 10), s.Nonce, s.Token}, "|")
	mac, err := m.mac(ctx, "session", payload)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(mac), nil
}

// read is the request's session; false when there is none, or its cookie
// is forged, malformed or expired (all alike: sign in again). It does not
// ask whether it was revoked (Web.signedIn does).
func (m sessions) read(r *http.Request) (session, bool, error) {
	c, err := r.Cookie(m.name())
	if err != nil {
		return session{}, false, nil
	}
	p64, m64, ok := strings.Cut(c.Value, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	got, err2 := base64.RawURLEncoding.DecodeString(m64)
	if !ok || err1 != nil || err2 != nil {
		return session{}, false, nil
	}
	want, err := m.mac(r.Context(), "session", string(payload))
	if err != nil {
		return session{}, false, err
	}
	if !hmac.Equal(got, want) {
		return session{}, false, nil
	}
	parts := strings.Split(string(payload), "|")
	if len(parts) != 6 || parts[0] != sessionVersion || parts[1] == "" {
		return session{}, false, nil
	}
	exp, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil || !m.now().Before(time.Unix(exp, 0)) {
		return session{}, false, nil
	}
	orgs := strings.Split(parts[1], ",")
	return session{Org: orgs[0], Orgs: orgs, Login: parts[2], Expires: time.Unix(exp, 0), Nonce: parts[4], Token: parts[5]}, true, nil
}

// newNonce is 16 random bytes, base64url.
func newNonce() string {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	return base64.RawURLEncoding.EncodeToString(nonce[:])
}

// signInToken is the sign-in form's CSRF token for the sign-in cookie's
// nonce.
func (m sessions) signInToken(ctx context.Context, nonce string) (string, error) {
	mac, err := m.mac(ctx, "signin", nonce)
	return base64.RawURLEncoding.EncodeToString(mac), err
}

// start makes a new session and sets its cookie: s's organizations and
// who signed in (Login or Token); its nonce and expiry are made here.
func (m sessions) start(w http.ResponseWriter, r *http.Request, s session) error {
	s.Expires, s.Nonce = m.now().Add(SessionTTL), newNonce()
	v, err := m.value(r.Context(), s)
	if err != nil {
		return err
	}
	http.SetCookie(w, m.cookie(v, int(SessionTTL.Seconds())))
	return nil
}

// end clears the session cookie.
func (m sessions) end(w http.ResponseWriter) { http.SetCookie(w, m.cookie("", -1)) }

// cookie is the session cookie holding v for maxAge seconds (-1: gone).
// Max-Age, not Expires: the browser counts it from its own clock, and the
// signed expiry inside is checked against the server's.
func (m sessions) cookie(v string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: m.name(), Value: v, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: m.secure, SameSite: http.SameSiteStrictMode,
	}
}

// csrf is the CSRF token of s's forms.
func (m sessions) csrf(ctx context.Context, s session) (string, error) {
	mac, err := m.mac(ctx, "csrf", s.Nonce)
	return base64.RawURLEncoding.EncodeToString(mac), err
}

// checkCSRF reports whether the form's csrf field is s's token.
func (m sessions) checkCSRF(r *http.Request, s session) (bool, error) {
	want, err := m.csrf(r.Context(), s)
	if err != nil {
		return false, err
	}
	got := r.PostFormValue("csrf")
	return got != "" && hmac.Equal([]byte(got), []byte(want)), nil
}

// mac is the HMAC-SHA256 of msg under the secret, for one purpose (a
// session's MAC is never a valid CSRF token, nor the other way round).
func (m sessions) mac(ctx context.Context, purpose, msg string) ([]byte, error) {
	key, err := m.secret(ctx)
	if err != nil {
		return nil, err
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(purpose + "\x00" + msg))
	return h.Sum(nil), nil
}
