package githubsim

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Handler returns the REST API as an http.Handler, for serving on an
// address of the caller's choosing (URL-building fields then use URL()).
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route := http.HandlerFunc(s.route)
		if !s.admit(w, r) { // User-Agent and rate limit (strict.go)
			return
		}
		if f := s.takeFault(r.Method, r.URL.Path); f != nil {
			s.serveFault(w, r, f, route)
			return
		}
		route(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if body != nil {
		_ = json.NewEncoder(w).Encode(body)
	}
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, errorJSON(message, ""))
}

func notFound(w http.ResponseWriter) { writeError(w, 404, "Not Found") }

// segments splits the escaped path so that an escaped "/" inside one
// segment (a branch name passed with url.PathEscape) stays inside it.
func segments(r *http.Request) []string {
	raw := strings.Trim(r.URL.EscapedPath(), "/")
	parts := strings.Split(raw, "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	return parts
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if s.serveManifest(w, r) || s.routeOAuth(w, r) {
		return
	}
	seg := segments(r)
	if len(seg) == 2 && seg[0] == "apps" && r.Method == http.MethodGet {
		s.getApp(w, seg[1])
		return
	}
	if len(seg) == 4 && seg[0] == "app" && seg[1] == "installations" && seg[3] == "access_tokens" && r.Method == http.MethodPost && s.opts.App != nil {
		s.handleAccessToken(w, r, seg[2])
		return
	}
	if s.webPage(w, r, seg) {
		return
	}
	if len(seg) < 4 || seg[0] != "repos" {
		notFound(w)
		return
	}
	full := seg[1] + "/" + seg[2]
	rest := seg[3:]
	if rest[0] == "installation" && len(rest) == 1 && r.Method == http.MethodGet && s.opts.App != nil {
		s.handleInstallation(w, r, full)
		return
	}
	if !s.authorized(r) {
		writeJSON(w, 401, errorJSON("Bad credentials", "https://docs.github.com/rest"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(full)]
	if rp == nil {
		notFound(w)
		return
	}
	if s.routeIssues(w, r, rp, rest) || s.routeCheckRuns(w, r, rp, rest) {
		return
	}
	m := r.Method
	switch {
	case rest[0] == "pulls" && len(rest) == 2 && m == http.MethodGet:
		s.getPull(w, rp, rest[1])
	case rest[0] == "pulls" && len(rest) == 3 && rest[2] == "merge" && m == http.MethodPut:
		s.putMerge(w, r, rp, rest[1])
	case rest[0] == "git" && len(rest) >= 4 && rest[1] == "ref" && rest[2] == "heads" && m == http.MethodGet:
		s.getRef(w, rp, strings.Join(rest[3:], "/"))
	case rest[0] == "git" && len(rest) == 2 && rest[1] == "refs" && m == http.MethodPost:
		s.createRef(w, r, rp)
	case rest[0] == "git" && len(rest) >= 4 && rest[1] == "refs" && rest[2] == "heads" && m == http.MethodPatch:
		s.updateRef(w, r, rp, strings.Join(rest[3:], "/"))
	case rest[0] == "git" && len(rest) >= 4 && rest[1] == "refs" && rest[2] == "heads" && m == http.MethodDelete:
		s.deleteRef(w, rp, strings.Join(rest[3:], "/"))
	case rest[0] == "branches" && len(rest) >= 4 && rest[len(rest)-2] == "protection" && rest[len(rest)-1] == "required_status_checks" && m == http.MethodGet:
		s.getRequiredChecks(w, rp, strings.Join(rest[1:len(rest)-2], "/"))
	case rest[0] == "rules" && len(rest) >= 3 && rest[1] == "branches" && m == http.MethodGet:
		s.getBranchRules(w, r, rp, strings.Join(rest[2:], "/"))
	case rest[0] == "compare" && len(rest) >= 2 && m == http.MethodGet:
		s.compare(w, rp, strings.Join(rest[1:], "/"))
	case rest[0] == "branches" && len(rest) >= 2 && m == http.MethodGet:
		s.getBranch(w, rp, strings.Join(rest[1:], "/"))
	case rest[0] == "merges" && len(rest) == 1 && m == http.MethodPost:
		s.postMerges(w, r, rp)
	case rest[0] == "commits" && len(rest) >= 3 && rest[len(rest)-1] == "status" && m == http.MethodGet:
		s.getCombinedStatus(w, r, rp, strings.Join(rest[1:len(rest)-1], "/"))
	case rest[0] == "commits" && len(rest) >= 3 && rest[len(rest)-1] == "check-runs" && m == http.MethodGet:
		s.getCheckRuns(w, r, rp, strings.Join(rest[1:len(rest)-1], "/"))
	case rest[0] == "commits" && len(rest) >= 3 && rest[len(rest)-1] == "check-suites" && m == http.MethodGet:
		s.getCheckSuites(w, r, rp, strings.Join(rest[1:len(rest)-1], "/"))
	case rest[0] == "statuses" && len(rest) == 2 && m == http.MethodPost:
		s.postStatus(w, r, rp, rest[1])
	default:
		notFound(w)
	}
}

// decode reads a JSON request body into v. GitHub parses the body before
// validating it against the operation's schema: what is not JSON is 400,
// JSON of the wrong type (null, as a client marshalling a nil pointer
// sends) is 422.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil || !json.Valid(raw) {
		writeError(w, 400, "Problems parsing JSON")
		return false
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		notAnObject(w, raw)
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		wrongType(w, raw, err)
		return false
	}
	return true
}

func validation(w http.ResponseWriter, message string) {
	writeJSON(w, 422, errorJSON(message, "https://docs.github.com/rest"))
}

func (s *Server) getPull(w http.ResponseWriter, rp *repo, num string) {
	n, err := strconv.Atoi(num)
	p := rp.pulls[n]
	if err != nil || p == nil {
		notFound(w)
		return
	}
	body := s.prJSON(rp, p)
	s.computeMergeability(rp, p) // for the next read (mergegate.go)
	writeJSON(w, 200, body)
}

func (s *Server) putMerge(w http.ResponseWriter, r *http.Request, rp *repo, num string) {
	n, err := strconv.Atoi(num)
	p := rp.pulls[n]
	if err != nil || p == nil {
		notFound(w)
		return
	}
	var body struct {
		CommitTitle   string `json:"commit_title"`
		CommitMessage string `json:"commit_message"`
		SHA           string `json:"sha"`
		MergeMethod   string `json:"merge_method"`
	}
	if r.ContentLength != 0 && !decode(w, r, &body) {
		return
	}
	if status, msg := s.mergeGate(rp, p, body.SHA); status != 0 { // branch protection and rulesets (mergegate.go)
		writeJSON(w, status, errorJSON(msg, docProtectedBranches))
		return
	}
	res := s.mergePull(rp, p, mergeRequest{
		method: body.MergeMethod, sha: body.SHA, title: body.CommitTitle, body: body.CommitMessage, by: "githubsim-app[bot]",
	})
	if res.status != 200 {
		writeJSON(w, res.status, errorJSON(res.message, "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"))
		return
	}
	writeJSON(w, 200, obj{"sha": res.sha, "merged": true, "message": res.message})
}

func (s *Server) getRef(w http.ResponseWriter, rp *repo, branch string) {
	sha := rp.git.branchHead(branch)
	if sha == "" {
		writeJSON(w, 404, errorJSON("Not Found", "https://docs.github.com/rest/git/refs#get-a-reference"))
		return
	}
	writeJSON(w, 200, s.refJSON(rp, branch, sha))
}

func (s *Server) createRef(w http.ResponseWriter, r *http.Request, rp *repo) {
	var body struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if !decode(w, r, &body) {
		return
	}
	if !strings.HasPrefix(body.Ref, "refs/") || strings.Count(body.Ref, "/") < 2 {
		validation(w, "Reference name must start with 'refs/' and have at least two slashes.")
		return
	}
	branch, ok := strings.CutPrefix(body.Ref, "refs/heads/")
	if !ok || branch == "" {
		validation(w, "Reference update failed")
		return
	}
	if rp.git.resolve(body.SHA) != body.SHA {
		validation(w, "Object does not exist")
		return
	}
	if rp.git.branchHead(branch) != "" {
		validation(w, "Reference already exists")
		return
	}
	if err := rp.git.setRef(branch, body.SHA); err != nil {
		validation(w, "Reference update failed")
		return
	}
	s.branchMoved(rp, branch, "", body.SHA, "githubsim-app[bot]")
	writeJSON(w, 201, s.refJSON(rp, branch, body.SHA))
}

func (s *Server) updateRef(w http.ResponseWriter, r *http.Request, rp *repo, branch string) {
	var body struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if !decode(w, r, &body) {
		return
	}
	old := rp.git.branchHead(branch)
	if old == "" {
		validation(w, "Reference does not exist")
		return
	}
	if rp.git.resolve(body.SHA) != body.SHA {
		validation(w, "Object does not exist")
		return
	}
	if !body.Force {
		if ff, err := rp.git.isAncestor(old, body.SHA); err != nil || !ff {
			validation(w, "Update is not a fast forward")
			return
		}
	}
	if err := rp.git.setRef(branch, body.SHA); err != nil {
		validation(w, "Reference update failed")
		return
	}
	s.branchMoved(rp, branch, old, body.SHA, "githubsim-app[bot]")
	writeJSON(w, 200, s.refJSON(rp, branch, body.SHA))
}

func (s *Server) deleteRef(w http.ResponseWriter, rp *repo, branch string) {
	old := rp.git.branchHead(branch)
	if old == "" {
		validation(w, "Reference does not exist")
		return
	}
	if s.deletionForbidden(rp, branch) {
		validation(w, msgRulesetDeletion)
		return
	}
	if err := rp.git.deleteRef(branch); err != nil {
		validation(w, "Reference update failed")
		return
	}
	s.branchMoved(rp, branch, old, "", "githubsim-app[bot]")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getBranch(w http.ResponseWriter, rp *repo, branch string) {
	sha := rp.git.branchHead(branch)
	if sha == "" {
		writeError(w, 404, "Branch not found")
		return
	}
	writeJSON(w, 200, obj{
		"name":           branch,
		"commit":         obj{"sha": sha, "url": s.apiURL("/repos/%s/commits/%s", rp.fullName(), sha)},
		"protected":      rp.protection[branch] != nil || len(s.rulesetsFor(rp, branch)) > 0,
		"protection":     s.protectionSummary(rp, branch),
		"protection_url": s.apiURL("/repos/%s/branches/%s/protection", rp.fullName(), url.PathEscape(branch)),
	})
}

// compare answers GET /repos/{o}/{r}/compare/{base}...{head}: how many
// commits head has that base lacks (ahead_by) and the reverse (behind_by),
// and the status GitHub derives from them.
func (s *Server) compare(w http.ResponseWriter, rp *repo, basehead string) {
	baseRev, headRev, ok := strings.Cut(basehead, "...")
	base, head := rp.git.resolve(baseRev), rp.git.resolve(headRev)
	if !ok || base == "" || head == "" {
		writeJSON(w, 404, errorJSON("Not Found", "https://docs.github.com/rest/commits/commits#compare-two-commits"))
		return
	}
	ahead, err1 := rp.git.count(head, base)
	behind, err2 := rp.git.count(base, head)
	mergeBase, err3 := rp.git.mergeBase(base, head)
	if err := errors.Join(err1, err2, err3); err != nil {
		writeError(w, 500, err.Error())
		return
	}
	status := "diverged"
	switch {
	case ahead == 0 && behind == 0:
		status = "identical"
	case behind == 0:
		status = "ahead"
	case ahead == 0:
		status = "behind"
	}
	writeJSON(w, 200, obj{
		"status": status, "ahead_by": ahead, "behind_by": behind, "total_commits": ahead,
		"base_commit":       obj{"sha": base},
		"merge_base_commit": obj{"sha": strings.TrimSpace(mergeBase)},
		"commits":           []any{},
	})
}

func (s *Server) getRequiredChecks(w http.ResponseWriter, rp *repo, branch string) {
	if rp.git.branchHead(branch) == "" {
		writeError(w, 404, "Branch not found")
		return
	}
	p, ok := rp.protection[branch]
	if !ok {
		writeJSON(w, 404, errorJSON("Branch not protected",
			"https://docs.github.com/rest/branches/branch-protection#get-status-checks-protection"))
		return
	}
	contexts, checks := requiredJSON(p.Checks)
	base := s.apiURL("/repos/%s/branches/%s/protection/required_status_checks", rp.fullName(), url.PathEscape(branch))
	writeJSON(w, 200, obj{
		"url":          base,
		"strict":       p.Strict,
		"contexts":     contexts,
		"contexts_url": base + "/contexts",
		"checks":       checks,
	})
}

func (s *Server) postMerges(w http.ResponseWriter, r *http.Request, rp *repo) {
	var body struct {
		Base          string `json:"base"`
		Head          string `json:"head"`
		CommitMessage string `json:"commit_message"`
	}
	if !decode(w, r, &body) {
		return
	}
	if body.Base == "" || body.Head == "" {
		validation(w, "Invalid request.\n\n\"base\" and \"head\" are required.")
		return
	}
	status, msg, c := s.mergeBranches(rp, body.Base, body.Head, body.CommitMessage, "githubsim-app[bot]")
	switch status {
	case 201:
		writeJSON(w, 201, s.commitJSON(rp, c, s.now()))
	case 204:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, status, errorJSON(msg, "https://docs.github.com/rest/branches/branches#merge-a-branch"))
	}
}

// page applies GitHub's page/per_page (default 30, at most 100) and sets the
// Link header with rel="next" and rel="last" as GitHub does.
func page(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	pg, _ := strconv.Atoi(q.Get("page"))
	if pg <= 0 {
		pg = 1
	}
	lo = min((pg-1)*per, n)
	hi = min(lo+per, n)
	last := max(1, (n+per-1)/per)
	if pg < last {
		link := func(p int, rel string) string {
			u := *r.URL
			v := u.Query()
			v.Set("page", strconv.Itoa(p))
			v.Set("per_page", strconv.Itoa(per))
			u.RawQuery = v.Encode()
			return fmt.Sprintf("<http://%s%s>; rel=%q", r.Host, u.RequestURI(), rel)
		}
		w.Header().Set("Link", link(pg+1, "next")+", "+link(last, "last"))
	}
	return lo, hi
}

func (s *Server) getCombinedStatus(w http.ResponseWriter, r *http.Request, rp *repo, ref string) {
	sha := rp.git.resolve(ref)
	if sha == "" {
		validation(w, "No commit found for SHA: "+ref)
		return
	}
	latest := latestStatuses(rp.statuses[sha])
	lo, hi := page(w, r, len(latest))
	items := []obj{}
	for _, st := range latest[lo:hi] {
		items = append(items, s.statusJSON(rp, st))
	}
	writeJSON(w, 200, obj{
		"state":       combinedState(latest),
		"statuses":    items,
		"sha":         sha,
		"total_count": len(latest),
		"repository":  s.repoJSON(rp),
		"commit_url":  s.apiURL("/repos/%s/commits/%s", rp.fullName(), sha),
		"url":         s.apiURL("/repos/%s/commits/%s/status", rp.fullName(), sha),
	})
}

func (s *Server) getCheckRuns(w http.ResponseWriter, r *http.Request, rp *repo, ref string) {
	sha := rp.git.resolve(ref)
	if sha == "" {
		validation(w, "No commit found for SHA: "+ref)
		return
	}
	q := r.URL.Query()
	var runs []*checkRun
	for _, c := range latestCheckRuns(q, rp.checks[sha]) {
		if name := q.Get("check_name"); name != "" && c.name != name {
			continue
		}
		if st := q.Get("status"); st != "" && c.status != st {
			continue
		}
		runs = append(runs, c)
	}
	// Newest first, as GitHub lists them. SetCheckRun updates a run of the
	// same name in place; the REST API makes a new one each time.
	lo, hi := page(w, r, len(runs))
	items := []obj{}
	for i := len(runs) - 1 - lo; i > len(runs)-1-hi; i-- {
		items = append(items, s.checkRunJSON(rp, runs[i]))
	}
	writeJSON(w, 200, obj{"total_count": len(runs), "check_runs": items})
}

func (s *Server) postStatus(w http.ResponseWriter, r *http.Request, rp *repo, sha string) {
	var body struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if !decode(w, r, &body) {
		return
	}
	if rp.git.resolve(sha) != sha {
		validation(w, "No commit found for SHA: "+sha)
		return
	}
	if e := s.statusInvalid(rp, sha, body.Context, body.State, body.Description, body.TargetURL); e != nil {
		validationFailed(w, docCreateStatus, e...)
		return
	}
	st, err := s.addStatus(rp, sha, body.Context, body.State, body.Description, body.TargetURL, s.restActor())
	if err != nil {
		validationFailed(w, docCreateStatus, fieldError("Status", "state", "invalid", ""))
		return
	}
	writeJSON(w, 201, s.statusJSON(rp, st))
}

// authorized accepts the configured static token or a live installation
// token; with neither configured every request is accepted.
func (s *Server) authorized(r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.Token == "" && s.opts.App == nil {
		return true
	}
	tok := bearer(r)
	if tok == "" {
		return false
	}
	if s.opts.Token != "" && tok == s.opts.Token {
		return true
	}
	exp, ok := s.tokens[tok]
	return ok && s.now().Before(exp)
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	for _, p := range []string{"Bearer ", "bearer ", "token "} {
		if t, ok := strings.CutPrefix(h, p); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// verifyJWT checks an App JWT as GitHub documents: RS256, signed by the
// app's key, iss the app id, issued not in the future (60 s of clock drift
// allowed), expiring within ten minutes of issue and not yet expired.
func (s *Server) verifyJWT(r *http.Request) (ok bool, message string) {
	app := s.opts.App
	if app == nil {
		return false, "Not Found"
	}
	tok := bearer(r)
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return false, "A JSON web token could not be decoded"
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat int64           `json:"iat"`
		Exp int64           `json:"exp"`
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil {
		return false, "A JSON web token could not be decoded"
	}
	if header.Alg != "RS256" {
		return false, "A JSON web token could not be decoded"
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(app.PublicKey, crypto.SHA256, digest[:], sig) != nil {
		return false, "A JSON web token could not be decoded"
	}
	iss := strings.Trim(string(claims.Iss), `"`)
	if iss != strconv.FormatInt(app.ID, 10) {
		return false, "Integration not found"
	}
	now := s.now().Unix()
	switch {
	case claims.Iat > now+60:
		return false, "'Issued at' claim ('iat') must be an Integer representing a time in the past."
	case claims.Exp <= now:
		return false, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires."
	case claims.Exp-claims.Iat > 600+60:
		return false, "'Expiration time' claim ('exp') is too far in the future."
	}
	return true, ""
}

func (s *Server) handleInstallation(w http.ResponseWriter, r *http.Request, full string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok, msg := s.verifyJWT(r); !ok {
		writeJSON(w, 401, errorJSON(msg, "https://docs.github.com/rest"))
		return
	}
	rp := s.repos[repoKey(full)]
	if rp == nil {
		notFound(w)
		return
	}
	writeJSON(w, 200, s.installationJSON(s.installationOf(rp.owner), rp.owner))
}

func (s *Server) handleAccessToken(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok, msg := s.verifyJWT(r); !ok {
		writeJSON(w, 401, errorJSON(msg, "https://docs.github.com/rest"))
		return
	}
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || !s.knownInstallation(n) {
		notFound(w)
		return
	}
	// The body (repositories, permissions) is optional, but when sent it
	// must be an object: go-github's nil options marshal to null.
	var opts struct {
		Repositories []string `json:"repositories"`
	}
	if r.ContentLength != 0 && !decode(w, r, &opts) {
		return
	}
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	tok := "ghs_" + hex.EncodeToString(b)
	exp := s.now().Add(s.opts.App.TokenTTL).UTC().Truncate(time.Second)
	s.tokens[tok] = exp
	writeJSON(w, 201, obj{
		"token":                tok,
		"expires_at":           ts(exp),
		"permissions":          obj{"contents": "write", "pull_requests": "write", "statuses": "write", "checks": "write"},
		"repository_selection": "all",
	})
}
