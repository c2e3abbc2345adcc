package githubsim

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"
)

// Check runs made through the REST API, as GitHub's "REST API endpoints
// for check runs" describe them:
//
//	POST  /repos/{o}/{r}/check-runs        create (201)
//	PATCH /repos/{o}/{r}/check-runs/{id}   update (200)
//	GET   /repos/{o}/{r}/check-runs/{id}   read (200)
//
// What GitHub refuses is refused here: only a GitHub App may write check
// runs (a static token, standing for a personal token, is 403), and only
// the App that made a check run may change it; name and head_sha are
// required, head_sha must be a commit of the repository; status is queued,
// in_progress or completed, and a conclusion is required with completed or
// completed_at (and implies completed); conclusion is one of GitHub's,
// never stale (GitHub alone sets it); an output needs a title and a summary
// of at most 65535 characters (text too). GitHub keeps every check run
// made, even of the same name on the same commit: a second POST makes a
// second run, which is why a client must find its run before making one.
// A server without a token or App configured takes any caller as one App.

// apiAppID stands for the App of callers of a server configured without
// authentication.
const apiAppID = 1001

// maxOutputChars is GitHub's bound on an output's summary and text.
const maxOutputChars = 65535

// CheckRunInfo is a snapshot of a check run.
type CheckRunInfo struct {
	ID                 int64
	Name, HeadSHA      string
	Status, Conclusion string
	DetailsURL         string
	ExternalID         string
	Title, Summary     string
	AppID              int64 // 0 for runs made through the control API (the CI)
}

// CheckRuns lists the check runs on sha in the order they were made.
func (s *Server) CheckRuns(full, sha string) ([]CheckRunInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return nil, err
	}
	var out []CheckRunInfo
	for _, c := range r.checks[sha] {
		out = append(out, CheckRunInfo{ID: c.id, Name: c.name, HeadSHA: c.sha, Status: c.status, Conclusion: c.conclusion,
			DetailsURL: c.detailsURL, ExternalID: c.externalID, Title: c.title, Summary: c.summary, AppID: c.appID})
	}
	return out, nil
}

// routeCheckRuns serves the check-run endpoints; false when the request is
// not one of them. The caller holds s.mu.
func (s *Server) routeCheckRuns(w http.ResponseWriter, r *http.Request, rp *repo, rest []string) bool {
	if rest[0] != "check-runs" {
		return false
	}
	switch m := r.Method; {
	case len(rest) == 1 && m == http.MethodPost:
		s.createCheckRun(w, r, rp)
	case len(rest) == 2 && m == http.MethodPatch:
		s.updateCheckRun(w, r, rp, rest[1])
	case len(rest) == 2 && m == http.MethodGet:
		if c := rp.checkRun(rest[1]); c != nil {
			writeJSON(w, 200, s.checkRunJSON(rp, c))
		} else {
			notFound(w)
		}
	default:
		return false
	}
	return true
}

func (r *repo) checkRun(id string) *checkRun {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	for _, runs := range r.checks {
		for _, c := range runs {
			if c.id == n {
				return c
			}
		}
	}
	return nil
}

// callerApp is the GitHub App a request acts as; ok is false for a caller
// that is no App. The caller holds s.mu.
func (s *Server) callerApp(r *http.Request) (id int64, ok bool) {
	if s.opts.Token == "" && s.opts.App == nil {
		return apiAppID, true
	}
	tok := bearer(r)
	if exp, live := s.tokens[tok]; live && s.now().Before(exp) && s.opts.App != nil {
		return s.opts.App.ID, true
	}
	return 0, false
}

// checkRunBody is the body of a create or an update; nil pointers are
// fields left out.
type checkRunBody struct {
	Name        *string    `json:"name"`
	HeadSHA     *string    `json:"head_sha"`
	DetailsURL  *string    `json:"details_url"`
	ExternalID  *string    `json:"external_id"`
	Status      *string    `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Output      *struct {
		Title   *string `json:"title"`
		Summary *string `json:"summary"`
		Text    *string `json:"text"`
	} `json:"output"`
}

var conclusions = map[string]bool{
	"action_required": true, "cancelled": true, "failure": true, "neutral": true,
	"success": true, "skipped": true, "timed_out": true,
}

// check validates a body as GitHub does; "" when it is acceptable.
func (b *checkRunBody) check(creating bool) string {
	if creating && (b.Name == nil || *b.Name == "") {
		return "Invalid request.\n\n\"name\" wasn't supplied."
	}
	if creating && (b.HeadSHA == nil || *b.HeadSHA == "") {
		return "Invalid request.\n\n\"head_sha\" wasn't supplied."
	}
	if b.Status != nil {
		switch *b.Status {
		case "queued", "in_progress", "completed":
		default:
			return fmt.Sprintf("Invalid request.\n\n%q is not a member of [\"queued\", \"in_progress\", \"completed\"].", *b.Status)
		}
	}
	if b.Conclusion != nil {
		if *b.Conclusion == "stale" {
			return "Invalid request.\n\nA check run's conclusion cannot be set to stale."
		}
		if !conclusions[*b.Conclusion] {
			return fmt.Sprintf("Invalid request.\n\n%q is not a member of the conclusions.", *b.Conclusion)
		}
	}
	if b.Conclusion == nil && ((b.Status != nil && *b.Status == "completed") || b.CompletedAt != nil) {
		return "Invalid request.\n\n\"conclusion\" wasn't supplied."
	}
	if o := b.Output; o != nil {
		if o.Title == nil || *o.Title == "" {
			return "Invalid request.\n\n\"title\" wasn't supplied."
		}
		if o.Summary == nil || *o.Summary == "" {
			return "Invalid request.\n\n\"summary\" wasn't supplied."
		}
		for _, t := range []*string{o.Summary, o.Text} {
			if t != nil && utf8.RuneCountInString(*t) > maxOutputChars {
				return fmt.Sprintf("Invalid request.\n\nOnly %d characters are allowed; %d were supplied.", maxOutputChars, utf8.RuneCountInString(*t))
			}
		}
	}
	return ""
}

// apply sets what the body names on c.
func (b *checkRunBody) apply(c *checkRun, now time.Time) {
	if b.Name != nil {
		c.name = *b.Name
	}
	if b.DetailsURL != nil {
		c.detailsURL = *b.DetailsURL
	}
	if b.ExternalID != nil {
		c.externalID = *b.ExternalID
	}
	if b.Status != nil {
		c.status = *b.Status
	}
	if b.Conclusion != nil {
		// A conclusion completes the run.
		c.conclusion, c.status = *b.Conclusion, "completed"
	}
	if c.status == "completed" && c.completedAt == nil {
		at := now
		if b.CompletedAt != nil {
			at = b.CompletedAt.UTC()
		}
		c.completedAt = &at
	}
	if b.Output != nil {
		c.title, c.summary = *b.Output.Title, *b.Output.Summary
	}
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request, rp *repo) {
	app, ok := s.callerApp(r)
	if !ok {
		writeJSON(w, 403, errorJSON("You must authenticate via a GitHub App.", "https://docs.github.com/rest/checks/runs#create-a-check-run"))
		return
	}
	var b checkRunBody
	if !decode(w, r, &b) {
		return
	}
	if msg := b.check(true); msg != "" {
		validation(w, msg)
		return
	}
	if rp.git.resolve(*b.HeadSHA) != *b.HeadSHA {
		validation(w, "No commit found for SHA: "+*b.HeadSHA)
		return
	}
	now := s.now().UTC()
	c := &checkRun{id: s.id(), sha: *b.HeadSHA, status: "queued", startedAt: now, appID: app}
	if b.StartedAt != nil {
		c.startedAt = b.StartedAt.UTC()
	}
	b.apply(c, now)
	rp.checks[c.sha] = append(rp.checks[c.sha], c)
	s.emitCheckRun(rp, c, "created")
	writeJSON(w, 201, s.checkRunJSON(rp, c))
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request, rp *repo, id string) {
	app, ok := s.callerApp(r)
	if !ok {
		writeJSON(w, 403, errorJSON("You must authenticate via a GitHub App.", "https://docs.github.com/rest/checks/runs#update-a-check-run"))
		return
	}
	c := rp.checkRun(id)
	if c == nil {
		notFound(w)
		return
	}
	if c.appID != app {
		writeJSON(w, 403, errorJSON(fmt.Sprintf("Invalid app_id `%d` - check run can only be modified by the GitHub App that created it.", app),
			"https://docs.github.com/rest/checks/runs#update-a-check-run"))
		return
	}
	var b checkRunBody
	if !decode(w, r, &b) {
		return
	}
	if b.HeadSHA != nil {
		validation(w, "Invalid request.\n\n\"head_sha\" is not a permitted key.")
		return
	}
	if msg := b.check(false); msg != "" {
		validation(w, msg)
		return
	}
	was := c.status
	b.apply(c, s.now().UTC())
	action := "rerequested"
	if c.status == "completed" && was != "completed" {
		action = "completed"
	}
	s.emitCheckRun(rp, c, action)
	writeJSON(w, 200, s.checkRunJSON(rp, c))
}

// latestCheckRuns applies the list filters of GET .../check-runs that
// GitHub documents beyond check_name and status: app_id, and filter —
// "latest" (the default) keeps the newest run of each name and App, "all"
// keeps every one. runs are oldest first, as made.
func latestCheckRuns(q url.Values, runs []*checkRun) []*checkRun {
	if app := q.Get("app_id"); app != "" {
		var kept []*checkRun
		for _, c := range runs {
			if strconv.FormatInt(c.appID, 10) == app {
				kept = append(kept, c)
			}
		}
		runs = kept
	}
	if q.Get("filter") == "all" {
		return runs
	}
	type nameApp struct {
		name string
		app  int64
	}
	newest := map[nameApp]int{}
	for i, c := range runs {
		newest[nameApp{c.name, c.appID}] = i
	}
	var kept []*checkRun
	for i, c := range runs {
		if newest[nameApp{c.name, c.appID}] == i {
			kept = append(kept, c)
		}
	}
	return kept
}
