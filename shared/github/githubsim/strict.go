package githubsim

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// What GitHub refuses that a kinder test server would let through: a
// request without a User-Agent, more requests than the hour's rate limit,
// bodies of the wrong JSON type, and values over GitHub's limits (answered
// 422 with GitHub's errors[]). Every REST answer carries the X-RateLimit-*
// headers.

// CIAppID is the App the control API's statuses and check runs come from:
// GitHub Actions' real App id, so that a required check bound to it reads
// as on github.com.
const CIAppID int64 = 15368

// The rate limits GitHub documents per hour: an authenticated token's
// (installation tokens start at 5,000) and an unauthenticated client's.
const (
	tokenRateLimit = 5000
	anonRateLimit  = 60
)

// strictState is what the strict checks keep beyond the repositories.
type strictState struct {
	windows     map[string]*rateWindow // bearer token ("" unauthenticated) →
	apps        map[int64]string       // App id → slug (GET /apps/{slug})
	orgRulesets map[string][]*ruleset  // organization, lower case → (rulesets.go)
}

type rateWindow struct {
	limit, used int
	reset       time.Time
}

func (st *strictState) init(opts Options) {
	st.windows = map[string]*rateWindow{}
	st.apps = map[int64]string{CIAppID: "github-actions"}
	st.orgRulesets = map[string][]*ruleset{}
	if opts.App != nil {
		st.apps[opts.App.ID] = "githubsim-app"
	}
}

// actor is who a status is created by: a user login, and the App whose
// token it used (0: a user's own token, or none).
type actor struct {
	login string
	appID int64
}

// restActor is who REST writes act as: the App's bot through the App's
// installation token; with a static token, the same login and no App.
// Callers hold s.mu.
func (s *Server) restActor() actor {
	if s.opts.App != nil {
		return actor{login: appLogin, appID: s.opts.App.ID}
	}
	return actor{login: appLogin}
}

// AddApp makes an App known to the server: GET /apps/{slug} answers it,
// and SetStatusFrom and SetCheckRunFrom may report as it.
func (s *Server) AddApp(id int64, slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.strict.apps[id] = slug
}

// appSlug is an App's slug, "" for an unknown App. Callers hold s.mu.
func (s *Server) appSlug(id int64) string { return s.strict.apps[id] }

// admit answers what GitHub refuses before routing a request — no
// User-Agent (403), the rate limit spent (403 with x-ratelimit-remaining
// 0) — and otherwise counts the request against its token's hour and
// sets the X-RateLimit-* headers. It reports whether to go on.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("User-Agent") == "" {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header "+
			"(https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). "+
			"Check https://developer.github.com for other possible causes.\n")
		return false
	}
	tok := bearer(r)
	s.mu.Lock()
	now := s.now()
	win := s.strict.windows[tok]
	if win == nil || !now.Before(win.reset) {
		for k, x := range s.strict.windows { // forget spent windows (a JWT is one call's)
			if !now.Before(x.reset) {
				delete(s.strict.windows, k)
			}
		}
		limit := tokenRateLimit
		if tok == "" {
			limit = anonRateLimit
		}
		win = &rateWindow{limit: limit, reset: now.Add(time.Hour).Truncate(time.Second)}
		s.strict.windows[tok] = win
	}
	over := win.used >= win.limit
	if !over {
		win.used++
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(win.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(win.limit-win.used))
	h.Set("X-RateLimit-Used", strconv.Itoa(win.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(win.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	s.mu.Unlock()
	if over {
		writeJSON(w, http.StatusForbidden, errorJSON("API rate limit exceeded for installation.",
			"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit"))
		return false
	}
	return true
}

// getApp answers GET /apps/{slug} for the Apps the server knows.
func (s *Server) getApp(w http.ResponseWriter, slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, sl := range s.strict.apps {
		if sl == slug {
			writeJSON(w, 200, s.appJSON(id))
			return
		}
	}
	writeJSON(w, 404, errorJSON("Not Found", "https://docs.github.com/rest/apps/apps#get-an-app"))
}

func (s *Server) appJSON(id int64) obj {
	slug := s.appSlug(id)
	if slug == "" {
		slug = fmt.Sprintf("app-%d", id)
	}
	return obj{
		"id": id, "slug": slug, "node_id": fmt.Sprintf("A_%d", id), "name": slug,
		"owner":        obj{"login": "githubsim", "id": loginID("githubsim"), "type": "Organization"},
		"html_url":     "https://github.com/apps/" + slug,
		"external_url": "https://" + slug + ".example",
		"created_at":   "2026-01-01T00:00:00Z",
		"updated_at":   "2026-01-01T00:00:00Z",
	}
}

// Validation answers.

const (
	docCreateStatus      = "https://docs.github.com/rest/commits/statuses#create-a-commit-status"
	docProtectedBranches = "https://docs.github.com/articles/about-protected-branches"
)

// fieldError is one entry of a 422's errors[]: GitHub's resource, field and
// code (missing_field, invalid, already_exists, custom — with a message).
func fieldError(resource, field, code, message string) obj {
	e := obj{"resource": resource, "field": field, "code": code}
	if message != "" {
		e["message"] = message
	}
	return e
}

// tooLong is GitHub's error for a value over its length limit, counted in
// characters.
func tooLong(resource, field string, limit int) obj {
	return fieldError(resource, field, "custom", fmt.Sprintf("%s is too long (maximum is %d characters)", field, limit))
}

// validationFailed answers GitHub's 422 with its errors[].
func validationFailed(w http.ResponseWriter, doc string, errors ...obj) {
	writeJSON(w, http.StatusUnprocessableEntity, obj{"message": "Validation Failed", "errors": errors, "documentation_url": doc})
}

// notAnObject is GitHub's 422 for a body of the wrong JSON type.
func notAnObject(w http.ResponseWriter, raw []byte) {
	v := strings.TrimSpace(string(raw))
	if v == "null" {
		v = "nil"
	}
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	validation(w, fmt.Sprintf("Invalid request.\n\nFor 'links/0/schema', %s is not an object.", v))
}

// wrongType is GitHub's 422 for a body whose JSON does not fit the
// operation's schema: a value of the wrong type, or not an object.
func wrongType(w http.ResponseWriter, raw []byte, err error) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		validation(w, fmt.Sprintf("Invalid request.\n\nFor 'properties/%s', %s is not %s.", te.Field, te.Value, article(te.Type.Kind().String())))
		return
	}
	notAnObject(w, raw)
}

func article(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a number"
}

// GitHub's limits on what the client writes.
const (
	maxStatusDescription = 140
	maxStatusContext     = 255
	maxStatusesPerSHA    = 1000 // per sha and context
	maxLabelName         = 50
	maxBody              = 65536 // comment and pull request bodies
	maxPullTitle         = 256
)

// statusInvalid lists what GitHub refuses in a new commit status. Callers
// hold s.mu.
func (s *Server) statusInvalid(r *repo, sha, context, state, description, targetURL string) []obj {
	var errs []obj
	switch state {
	case "error", "failure", "pending", "success":
	default:
		errs = append(errs, fieldError("Status", "state", "invalid", ""))
	}
	if utf8.RuneCountInString(description) > maxStatusDescription {
		errs = append(errs, tooLong("Status", "description", maxStatusDescription))
	}
	if utf8.RuneCountInString(context) > maxStatusContext {
		errs = append(errs, tooLong("Status", "context", maxStatusContext))
	}
	if targetURL != "" && !strings.HasPrefix(targetURL, "http://") && !strings.HasPrefix(targetURL, "https://") {
		errs = append(errs, fieldError("Status", "target_url", "custom", "target_url must use http(s) scheme"))
	}
	if context == "" {
		context = "default"
	}
	n := 0
	for _, st := range r.statuses[sha] {
		if st.context == context {
			n++
		}
	}
	if n >= maxStatusesPerSHA {
		errs = append(errs, fieldError("Status", "", "custom", "This SHA and context has reached the maximum number of statuses."))
	}
	return errs
}

// hookHeaders sets every header GitHub sends with a webhook delivery: the
// event, the delivery id, the hook and what it is installed on (the App,
// an "integration", when one is configured, else the repository), both
// signatures (the legacy HMAC-SHA1 one and the HMAC-SHA256 one) and
// Hookshot's User-Agent.
func (s *Server) hookHeaders(h http.Header, secret, event, id string, body []byte) {
	typ, target := "repository", int64(0)
	if s.opts.App != nil {
		typ, target = "integration", s.opts.App.ID
	} else {
		var p struct {
			Repository struct {
				ID int64 `json:"id"`
			} `json:"repository"`
		}
		_ = json.Unmarshal(body, &p)
		target = p.Repository.ID
	}
	sign := func(h func() hash.Hash) string {
		mac := hmac.New(h, []byte(secret))
		mac.Write(body)
		return hex.EncodeToString(mac.Sum(nil))
	}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "GitHub-Hookshot/5e1d2f7")
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", id)
	h.Set("X-GitHub-Hook-ID", "1")
	h.Set("X-GitHub-Hook-Installation-Target-Type", typ)
	h.Set("X-GitHub-Hook-Installation-Target-ID", strconv.FormatInt(target, 10))
	h.Set("X-Hub-Signature", "sha1="+sign(sha1.New))
	h.Set("X-Hub-Signature-256", "sha256="+sign(sha256.New))
}
