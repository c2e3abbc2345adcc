package githubsim

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The GitHub App's user authorization, the web application flow GitHub
// documents for "Sign in with GitHub", and the two REST endpoints a user
// access token is for here:
//
//	GET  /login/oauth/authorize?client_id=&redirect_uri=&state=   the page where a person signs in and authorizes the App
//	POST /login/oauth/authorize                                    (its form) → 302 redirect_uri?code=&state=
//	POST /login/oauth/access_token                                 code → {"access_token":"ghu_…",…}; errors as 200 {"error":…}
//	GET  /user                                                     the token's user
//	GET  /user/installations                                       the App's installations the user can read
//
// As on GitHub: an unknown client_id is a 404 page; a redirect_uri that
// does not match the App's registered callback (its host and port, and a
// path under it) is sent back to the callback with
// error=redirect_uri_mismatch; a code is good once, for ten minutes, for
// the client and redirect_uri it was made for (else bad_verification_code
// or redirect_uri_mismatch); a wrong client secret is
// incorrect_client_credentials; user tokens last eight hours. There is no
// account here: the page asks who the person is, and anyone may be
// anyone. A person can read an installation when they can read a
// repository of its account (SetPermission; a repository nobody set one
// on is public, readable by all), or are the account.

// oauth is the flow's state, under Server.mu.
type oauth struct {
	codes map[string]*oauthCode
	users map[string]userToken // user access token → who and until when
}

type oauthCode struct {
	login, redirect string
	expires         time.Time
	used            bool
}

type userToken struct {
	login   string
	expires time.Time
}

const (
	codeTTL      = 10 * time.Minute
	userTokenTTL = 8 * time.Hour
)

func (s *Server) oauthState() *oauth {
	if s.oauth.codes == nil {
		s.oauth = oauth{codes: map[string]*oauthCode{}, users: map[string]userToken{}}
	}
	return &s.oauth
}

// routeOAuth serves the flow's pages and the user endpoints; false when r
// is none of them (or the server has no App client).
func (s *Server) routeOAuth(w http.ResponseWriter, r *http.Request) bool {
	app := s.opts.App
	if app == nil || app.ClientID == "" {
		return false
	}
	switch {
	case r.URL.Path == "/login/oauth/authorize" && r.Method == http.MethodGet:
		s.authorizePage(w, r)
	case r.URL.Path == "/login/oauth/authorize" && r.Method == http.MethodPost:
		s.authorize(w, r)
	case r.URL.Path == "/login/oauth/access_token" && r.Method == http.MethodPost:
		s.accessToken(w, r)
	case r.URL.Path == "/user" && r.Method == http.MethodGet:
		s.getUser(w, r)
	case r.URL.Path == "/user/installations" && r.Method == http.MethodGet:
		s.userInstallations(w, r)
	default:
		return false
	}
	return true
}

// callbackOK reports whether redirect may receive the App's codes: any
// address when no callback is registered, else one on the callback's
// scheme, host and port whose path is the callback's or under it.
func (a *App) callbackOK(redirect string) bool {
	if a.CallbackURL == "" {
		return redirect != ""
	}
	cb, err1 := url.Parse(a.CallbackURL)
	u, err2 := url.Parse(redirect)
	if err1 != nil || err2 != nil || u.Scheme != cb.Scheme || u.Host != cb.Host {
		return false
	}
	base := strings.TrimSuffix(cb.Path, "/")
	return u.Path == cb.Path || strings.HasPrefix(u.Path, base+"/")
}

// authorizeParams checks a request of the authorize page; ok false when
// it answered already.
func (s *Server) authorizeParams(w http.ResponseWriter, r *http.Request, q url.Values) (redirect string, ok bool) {
	app := s.opts.App
	if q.Get("client_id") != app.ClientID {
		http.Error(w, "Not Found", http.StatusNotFound)
		return "", false
	}
	redirect = q.Get("redirect_uri")
	if redirect == "" {
		redirect = app.CallbackURL
	}
	if !app.callbackOK(redirect) {
		if app.CallbackURL == "" {
			http.Error(w, "redirect_uri is required", http.StatusBadRequest)
			return "", false
		}
		back := url.Values{"error": {"redirect_uri_mismatch"}, "error_description": {"The redirect_uri MUST match the registered callback URL for this application."}, "state": {q.Get("state")}}
		http.Redirect(w, r, app.CallbackURL+"?"+back.Encode(), http.StatusFound)
		return "", false
	}
	return redirect, true
}

var authorizeHTML = template.Must(template.New("authorize").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorize githubsim-app</title></head>
<body><main>
<h1>Authorize githubsim-app</h1>
<form method="post" action="/login/oauth/authorize">
<input type="hidden" name="client_id" value="{{.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.Redirect}}">
<input type="hidden" name="state" value="{{.State}}">
<label>Username <input name="login" value="{{.Login}}" required autofocus></label>
<button type="submit" name="authorize" value="1">Authorize</button>
<button type="submit" name="cancel" value="1" formnovalidate>Cancel</button>
</form>
</main></body></html>`))

// authorizePage is where GitHub asks a person to sign in and authorize
// the App.
func (s *Server) authorizePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, ok := s.authorizeParams(w, r, q)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = authorizeHTML.Execute(w, struct{ ClientID, Redirect, State, Login string }{q.Get("client_id"), redirect, q.Get("state"), q.Get("login")})
}

// authorize is the page's form: back to redirect_uri with a code, or with
// error=access_denied when the person cancelled.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	redirect, ok := s.authorizeParams(w, r, r.PostForm)
	if !ok {
		return
	}
	login := strings.TrimSpace(r.PostForm.Get("login"))
	back := url.Values{"state": {r.PostForm.Get("state")}}
	if r.PostForm.Get("cancel") != "" || login == "" {
		back.Set("error", "access_denied")
		back.Set("error_description", "The user has denied your application access.")
	} else {
		code := randomHex(10)
		s.mu.Lock()
		s.oauthState().codes[code] = &oauthCode{login: login, redirect: redirect, expires: s.now().Add(codeTTL)}
		s.mu.Unlock()
		back.Set("code", code)
	}
	sep := "?"
	if strings.Contains(redirect, "?") {
		sep = "&"
	}
	http.Redirect(w, r, redirect+sep+back.Encode(), http.StatusFound)
}

// accessToken exchanges a code for a user access token. Its parameters
// come as a form, in the query or as JSON; it answers JSON when asked
// (Accept: application/json), else form encoding, and 200 with an error
// field when refused, as GitHub does.
func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	p := url.Values{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body map[string]string
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&body); err != nil {
			writeError(w, 400, "Problems parsing JSON")
			return
		}
		for k, v := range body {
			p.Set(k, v)
		}
	} else if err := r.ParseForm(); err == nil {
		p = r.Form
	}
	answer := func(v obj) {
		if strings.Contains(r.Header.Get("Accept"), "json") {
			writeJSON(w, 200, v)
			return
		}
		form := url.Values{}
		for k, x := range v {
			form.Set(k, fmt.Sprint(x))
		}
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		_, _ = w.Write([]byte(form.Encode()))
	}
	refuse := func(code, description string) {
		answer(obj{"error": code, "error_description": description, "error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#" + strings.ReplaceAll(code, "_", "-")})
	}
	app := s.opts.App
	if p.Get("client_id") != app.ClientID || p.Get("client_secret") != app.ClientSecret {
		refuse("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.oauthState()
	c := st.codes[p.Get("code")]
	if c == nil || c.used || !s.now().Before(c.expires) {
		refuse("bad_verification_code", "The code passed is incorrect or expired.")
		return
	}
	if redirect := p.Get("redirect_uri"); redirect != "" && redirect != c.redirect {
		refuse("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.")
		return
	}
	c.used = true
	tok := "ghu_" + randomHex(18)
	st.users[tok] = userToken{login: c.login, expires: s.now().Add(userTokenTTL)}
	answer(obj{
		"access_token": tok, "expires_in": int(userTokenTTL.Seconds()),
		"refresh_token": "ghr_" + randomHex(30), "refresh_token_expires_in": 15897600,
		"scope": "", "token_type": "bearer",
	})
}

// userOf is the login of the request's user access token; false (and
// 401 answered) when there is none or it expired.
func (s *Server) userOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	u, ok := s.oauthState().users[bearer(r)]
	if !ok || !s.now().Before(u.expires) {
		writeJSON(w, 401, errorJSON("Bad credentials", "https://docs.github.com/rest"))
		return "", false
	}
	return u.login, true
}

func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	login, ok := s.userOf(w, r)
	if !ok {
		return
	}
	u := userJSON(login)
	u["html_url"] = "https://github.com/" + login
	u["name"] = nil
	writeJSON(w, 200, u)
}

// userInstallations lists the installations login can read, by id, a
// page at a time (per_page up to 100, default 30; Link names the next).
func (s *Server) userInstallations(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	login, ok := s.userOf(w, r)
	if !ok {
		return
	}
	accounts := map[int64]string{}
	for _, rp := range s.repos {
		id := s.installationOf(rp.owner)
		if prev, seen := accounts[id]; seen && prev <= rp.owner {
			continue
		}
		if strings.EqualFold(rp.owner, login) || rp.x().perms[strings.ToLower(login)] != "none" {
			accounts[id] = rp.owner
		}
	}
	ids := make([]int64, 0, len(accounts))
	for id := range accounts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	from := min((page-1)*per, len(ids))
	to := min(from+per, len(ids))
	list := []obj{}
	for _, id := range ids[from:to] {
		list = append(list, s.installationJSON(id, accounts[id]))
	}
	if to < len(ids) {
		next := s.apiURL("/user/installations?per_page=%d&page=%d", per, page+1)
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, next))
	}
	writeJSON(w, 200, obj{"total_count": len(ids), "installations": list})
}

// installationOf is the id of the installation covering the account
// owner: its own (App.Installations), else App.InstallationID.
func (s *Server) installationOf(owner string) int64 {
	for account, id := range s.opts.App.Installations {
		if strings.EqualFold(account, owner) {
			return id
		}
	}
	return s.opts.App.InstallationID
}

// knownInstallation reports whether id is one of the App's installations.
func (s *Server) knownInstallation(id int64) bool {
	if id == s.opts.App.InstallationID {
		return true
	}
	for _, v := range s.opts.App.Installations {
		if v == id {
			return true
		}
	}
	return false
}

// installationJSON is an installation of the App on account.
func (s *Server) installationJSON(id int64, account string) obj {
	return obj{
		"id":                   id,
		"account":              obj{"login": account, "id": loginID(account), "type": "Organization"},
		"app_id":               s.opts.App.ID,
		"app_slug":             "githubsim-app",
		"target_id":            loginID(account),
		"target_type":          "Organization",
		"repository_selection": "all",
		"access_tokens_url":    s.apiURL("/app/installations/%d/access_tokens", id),
		"repositories_url":     s.apiURL("/installation/repositories"),
		"html_url":             fmt.Sprintf("https://github.com/organizations/%s/settings/installations/%d", account, id),
		"permissions":          obj{"contents": "write", "pull_requests": "write", "statuses": "write", "checks": "write", "metadata": "read"},
		"events":               []string{"pull_request", "push", "status", "check_run", "check_suite", "issue_comment"},
		"created_at":           ts(s.now()),
		"updated_at":           ts(s.now()),
	}
}
