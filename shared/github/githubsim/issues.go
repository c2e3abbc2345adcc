package githubsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Issues, comments, labels, reactions and collaborator permissions: what the
// merge queue's GitHub surface (comment commands, its PR comment, labels)
// uses. GitHub numbers issues and pull requests in one sequence, and a pull
// request is an issue for comments and labels; so here.

type issue struct {
	number        int
	title, author string
	createdAt     time.Time
}

type comment struct {
	id                   int64
	issue                int
	body, author         string
	createdAt, updatedAt time.Time
	reactions            []reaction
}

type reaction struct {
	id        int64
	content   string
	user      string
	createdAt time.Time
}

// Comment is a snapshot of an issue or pull request comment.
type Comment struct {
	ID        int64
	Issue     int
	Author    string
	Body      string
	Reactions []string // their contents, in order
}

// extras holds a repository's issues and what hangs off them, made on
// first use so repositories made before need nothing.
type extras struct {
	issues   map[int]*issue
	comments []*comment
	labels   map[int][]string  // issue number → names, in the order added
	perms    map[string]string // login, lower case → admin, write, read or none
}

func (r *repo) x() *extras {
	if r.extra == nil {
		r.extra = &extras{issues: map[int]*issue{}, labels: map[int][]string{}, perms: map[string]string{}}
	}
	return r.extra
}

// isIssue reports whether n names an issue or a pull request.
func (r *repo) isIssue(n int) bool { return r.pulls[n] != nil || r.x().issues[n] != nil }

func (r *repo) comment(id int64) *comment {
	for _, c := range r.x().comments {
		if c.id == id {
			return c
		}
	}
	return nil
}

// routeIssues serves the issue endpoints; false when the request is not
// one of them.
func (s *Server) routeIssues(w http.ResponseWriter, r *http.Request, rp *repo, rest []string) bool {
	m := r.Method
	switch {
	case rest[0] == "issues" && len(rest) == 3 && rest[2] == "comments" && m == http.MethodGet:
		s.listComments(w, r, rp, rest[1])
	case rest[0] == "issues" && len(rest) == 3 && rest[2] == "comments" && m == http.MethodPost:
		s.postComment(w, r, rp, rest[1])
	case rest[0] == "issues" && len(rest) == 3 && rest[1] == "comments" && m == http.MethodPatch:
		s.patchComment(w, r, rp, rest[2])
	case rest[0] == "issues" && len(rest) == 4 && rest[1] == "comments" && rest[3] == "reactions" && m == http.MethodPost:
		s.postReaction(w, r, rp, rest[2])
	case rest[0] == "issues" && len(rest) == 3 && rest[2] == "labels" && m == http.MethodGet:
		s.listLabels(w, rp, rest[1])
	case rest[0] == "issues" && len(rest) == 3 && rest[2] == "labels" && m == http.MethodPost:
		s.postLabels(w, r, rp, rest[1])
	case rest[0] == "issues" && len(rest) == 4 && rest[2] == "labels" && m == http.MethodDelete:
		s.deleteLabel(w, rp, rest[1], rest[3])
	case rest[0] == "collaborators" && len(rest) == 3 && rest[2] == "permission" && m == http.MethodGet:
		s.getPermission(w, rp, rest[1])
	case rest[0] == "pulls" && len(rest) == 1 && m == http.MethodGet:
		s.listPulls(w, r, rp)
	case rest[0] == "pulls" && len(rest) == 1 && m == http.MethodPost:
		s.createPull(w, r, rp)
	case rest[0] == "pulls" && len(rest) == 2 && m == http.MethodPatch:
		s.patchPull(w, r, rp, rest[1])
	default:
		return false
	}
	return true
}

func (s *Server) issueNumber(w http.ResponseWriter, rp *repo, num string) (int, bool) {
	n, err := strconv.Atoi(num)
	if err != nil || !rp.isIssue(n) {
		writeJSON(w, 404, errorJSON("Not Found", "https://docs.github.com/rest/issues/issues#get-an-issue"))
		return 0, false
	}
	return n, true
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request, rp *repo, num string) {
	n, ok := s.issueNumber(w, rp, num)
	if !ok {
		return
	}
	var cs []*comment
	for _, c := range rp.x().comments {
		if c.issue == n {
			cs = append(cs, c)
		}
	}
	lo, hi := page(w, r, len(cs))
	items := []obj{}
	for _, c := range cs[lo:hi] {
		items = append(items, s.commentJSON(rp, c))
	}
	writeJSON(w, 200, items)
}

func (s *Server) postComment(w http.ResponseWriter, r *http.Request, rp *repo, num string) {
	n, ok := s.issueNumber(w, rp, num)
	if !ok {
		return
	}
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	c := s.addComment(rp, n, appLogin, body)
	w.Header().Set("Location", s.apiURL("/repos/%s/issues/comments/%d", rp.fullName(), c.id))
	writeJSON(w, 201, s.commentJSON(rp, c))
}

func (s *Server) patchComment(w http.ResponseWriter, r *http.Request, rp *repo, id string) {
	n, _ := strconv.ParseInt(id, 10, 64)
	c := rp.comment(n)
	if c == nil {
		writeJSON(w, 404, errorJSON("Not Found", "https://docs.github.com/rest/issues/comments#update-an-issue-comment"))
		return
	}
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	s.editComment(rp, c, appLogin, body)
	writeJSON(w, 200, s.commentJSON(rp, c))
}

// commentBody reads a comment request's required body.
func commentBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var body struct {
		Body *string `json:"body"`
	}
	if !decode(w, r, &body) {
		return "", false
	}
	if body.Body == nil {
		validation(w, "Invalid request.\n\n\"body\" wasn't supplied.")
		return "", false
	}
	if utf8.RuneCountInString(*body.Body) > maxBody { // strict.go
		validationFailed(w, "https://docs.github.com/rest/issues/comments", tooLong("IssueComment", "body", maxBody))
		return "", false
	}
	return *body.Body, true
}

// The reaction contents GitHub accepts.
var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// postReaction answers 201 for a new reaction and 200 with the existing
// one when the caller already reacted so, as GitHub does.
func (s *Server) postReaction(w http.ResponseWriter, r *http.Request, rp *repo, id string) {
	n, _ := strconv.ParseInt(id, 10, 64)
	c := rp.comment(n)
	if c == nil {
		writeJSON(w, 404, errorJSON("Not Found", "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"))
		return
	}
	var body struct {
		Content string `json:"content"`
	}
	if !decode(w, r, &body) {
		return
	}
	if !slices.Contains(reactionContents, body.Content) {
		validationFailed(w, "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment",
			fieldError("Reaction", "content", "invalid", ""))
		return
	}
	for _, x := range c.reactions {
		if x.content == body.Content && x.user == appLogin {
			writeJSON(w, 200, reactionJSON(x))
			return
		}
	}
	x := reaction{id: s.id(), content: body.Content, user: appLogin, createdAt: s.now().UTC()}
	c.reactions = append(c.reactions, x)
	writeJSON(w, 201, reactionJSON(x))
}

func (s *Server) listLabels(w http.ResponseWriter, rp *repo, num string) {
	n, ok := s.issueNumber(w, rp, num)
	if !ok {
		return
	}
	writeJSON(w, 200, s.labelsJSON(rp, rp.x().labels[n]))
}

// postLabels adds labels (creating unknown ones, as GitHub does) and
// answers every label the issue now has; one it had already is no change.
func (s *Server) postLabels(w http.ResponseWriter, r *http.Request, rp *repo, num string) {
	n, ok := s.issueNumber(w, rp, num)
	if !ok {
		return
	}
	// GitHub takes {"labels": [...]} or the bare list (as go-github sends).
	var raw json.RawMessage
	if !decode(w, r, &raw) {
		return
	}
	var body struct {
		Labels []string `json:"labels"`
	}
	if err := json.Unmarshal(raw, &body.Labels); err != nil && json.Unmarshal(raw, &body) != nil {
		writeError(w, 400, "Problems parsing JSON")
		return
	}
	for _, l := range body.Labels {
		if strings.TrimSpace(l) == "" {
			validationFailed(w, docAddLabels, fieldError("Label", "name", "missing_field", ""))
			return
		}
		if utf8.RuneCountInString(l) > maxLabelName { // strict.go
			validationFailed(w, docAddLabels, tooLong("Label", "name", maxLabelName))
			return
		}
	}
	for _, l := range body.Labels {
		s.addLabel(rp, n, appLogin, l)
	}
	writeJSON(w, 200, s.labelsJSON(rp, rp.x().labels[n]))
}

func (s *Server) deleteLabel(w http.ResponseWriter, rp *repo, num, name string) {
	n, ok := s.issueNumber(w, rp, num)
	if !ok {
		return
	}
	if !s.removeLabel(rp, n, appLogin, name) {
		writeJSON(w, 404, errorJSON("Label does not exist", "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue"))
		return
	}
	writeJSON(w, 200, s.labelsJSON(rp, rp.x().labels[n]))
}

// getPermission answers a user's permission on the repository: what
// SetPermission gave, else read (anyone may read a public repository).
func (s *Server) getPermission(w http.ResponseWriter, rp *repo, login string) {
	perm := rp.x().perms[strings.ToLower(login)]
	if perm == "" {
		perm = "read"
	}
	role := perm
	if perm == "none" {
		role = "read"
	}
	u := userJSON(login)
	u["permissions"] = obj{"admin": perm == "admin", "maintain": perm == "admin", "push": perm == "admin" || perm == "write",
		"triage": perm != "none" && perm != "read", "pull": perm != "none"}
	u["role_name"] = role
	writeJSON(w, 200, obj{"permission": perm, "role_name": role, "user": u})
}

// listPulls answers GET .../pulls with GitHub's state (open, closed, all;
// default open) and head ("owner:branch") filters, newest first.
func (s *Server) listPulls(w http.ResponseWriter, r *http.Request, rp *repo) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var ps []*pull
	for _, p := range slices.Backward(rp.sortedPulls()) {
		if (state != "all" && p.state != state) || (q.Get("head") != "" && q.Get("head") != rp.owner+":"+p.headRef) ||
			(q.Get("base") != "" && q.Get("base") != p.baseRef) {
			continue
		}
		ps = append(ps, p)
	}
	lo, hi := page(w, r, len(ps))
	items := []obj{}
	for _, p := range ps[lo:hi] {
		items = append(items, s.prJSON(rp, p))
	}
	writeJSON(w, 200, items)
}

// createPull opens a pull request as the app: 422 when head or base does
// not exist, or an open pull request from head into base exists already.
func (s *Server) createPull(w http.ResponseWriter, r *http.Request, rp *repo) {
	var body struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
		Draft bool   `json:"draft"`
	}
	if !decode(w, r, &body) {
		return
	}
	head := body.Head
	if o, b, ok := strings.Cut(head, ":"); ok && strings.EqualFold(o, rp.owner) {
		head = b
	}
	fail := func(field, code, message string) {
		e := obj{"resource": "PullRequest", "field": field, "code": code}
		if message != "" {
			e = obj{"resource": "PullRequest", "code": "custom", "message": message}
		}
		writeJSON(w, 422, obj{"message": "Validation Failed", "errors": []obj{e},
			"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"})
	}
	switch {
	case body.Title == "":
		fail("title", "missing_field", "")
		return
	case utf8.RuneCountInString(body.Title) > maxPullTitle: // strict.go
		validationFailed(w, docCreatePull, tooLong("PullRequest", "title", maxPullTitle))
		return
	case utf8.RuneCountInString(body.Body) > maxBody:
		validationFailed(w, docCreatePull, tooLong("PullRequest", "body", maxBody))
		return
	case rp.git.branchHead(head) == "":
		fail("head", "invalid", "")
		return
	case rp.git.branchHead(body.Base) == "":
		fail("base", "invalid", "")
		return
	}
	for _, p := range rp.pulls {
		if p.state == "open" && p.headRef == head && p.baseRef == body.Base {
			fail("", "", "A pull request already exists for "+rp.owner+":"+head+".")
			return
		}
	}
	p := s.newPull(rp, head, body.Base, body.Title, appLogin)
	p.draft = body.Draft
	s.emitPull(rp, p, "opened", nil)
	w.Header().Set("Location", s.apiURL("/repos/%s/pulls/%d", rp.fullName(), p.number))
	writeJSON(w, 201, s.prJSON(rp, p))
}

// patchPull updates a pull request's title or state (open, closed).
func (s *Server) patchPull(w http.ResponseWriter, r *http.Request, rp *repo, num string) {
	n, _ := strconv.Atoi(num)
	p := rp.pulls[n]
	if p == nil {
		notFound(w)
		return
	}
	var body struct {
		Title *string `json:"title"`
		State *string `json:"state"`
	}
	if !decode(w, r, &body) {
		return
	}
	if body.Title != nil {
		p.title = *body.Title
	}
	now := s.now().UTC()
	p.updatedAt = now
	switch {
	case body.State == nil || *body.State == p.state || p.merged:
	case *body.State == "closed":
		p.state, p.closedAt = "closed", &now
		s.emitPull(rp, p, "closed", nil)
	case *body.State == "open":
		p.state, p.closedAt = "open", nil
		s.emitPull(rp, p, "reopened", nil)
	default:
		validation(w, "Validation Failed")
		return
	}
	writeJSON(w, 200, s.prJSON(rp, p))
}

const (
	docAddLabels  = "https://docs.github.com/rest/issues/labels#add-labels-to-an-issue"
	docCreatePull = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
)

// appLogin is who the REST API acts as: the queue's GitHub App.
const appLogin = "githubsim-app[bot]"

// The operations below are shared by the REST handlers and the control
// API; callers hold s.mu.

func (s *Server) newPull(r *repo, head, base, title, author string) *pull {
	r.nextPR++
	now := s.now().UTC()
	p := &pull{
		id: s.id(), number: r.nextPR, title: title, author: author, headRef: head, baseRef: base,
		headSHA: r.git.branchHead(head), state: "open", createdAt: now, updatedAt: now,
	}
	r.pulls[p.number] = p
	return p
}

func (s *Server) addComment(r *repo, n int, author, body string) *comment {
	now := s.now().UTC()
	c := &comment{id: s.id(), issue: n, body: body, author: author, createdAt: now, updatedAt: now}
	r.x().comments = append(r.x().comments, c)
	s.emitComment(r, c, "created", author, nil)
	return c
}

func (s *Server) editComment(r *repo, c *comment, by, body string) {
	old := c.body
	c.body, c.updatedAt = body, s.now().UTC()
	s.emitComment(r, c, "edited", by, obj{"body": obj{"from": old}})
}

func (s *Server) addLabel(r *repo, n int, by, name string) {
	x := r.x()
	if slices.ContainsFunc(x.labels[n], func(l string) bool { return strings.EqualFold(l, name) }) {
		return
	}
	x.labels[n] = append(x.labels[n], name)
	s.touch(r, n)
	s.emitLabel(r, n, "labeled", by, name)
}

func (s *Server) removeLabel(r *repo, n int, by, name string) bool {
	x := r.x()
	i := slices.IndexFunc(x.labels[n], func(l string) bool { return strings.EqualFold(l, name) })
	if i < 0 {
		return false
	}
	name = x.labels[n][i]
	x.labels[n] = slices.Delete(x.labels[n], i, i+1)
	s.touch(r, n)
	s.emitLabel(r, n, "unlabeled", by, name)
	return true
}

// touch moves pull request n's updated_at to now, as GitHub does when
// its labels change.
func (s *Server) touch(r *repo, n int) {
	if p := r.pulls[n]; p != nil {
		p.updatedAt = s.now().UTC()
	}
}

// Control API.

// OpenIssue opens an issue (not a pull request) and returns its number.
func (s *Server) OpenIssue(full, title, author string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return 0, err
	}
	r.nextPR++
	r.x().issues[r.nextPR] = &issue{number: r.nextPR, title: title, author: author, createdAt: s.now().UTC()}
	return r.nextPR, nil
}

// AddComment comments on an issue or pull request as author (an
// issue_comment "created" webhook) and returns the comment's id.
func (s *Server) AddComment(full string, number int, author, body string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return 0, err
	}
	if !r.isIssue(number) {
		return 0, fmt.Errorf("githubsim: no issue %s#%d", full, number)
	}
	return s.addComment(r, number, author, body).id, nil
}

// EditComment changes a comment's body as by (an "edited" webhook).
func (s *Server) EditComment(full string, id int64, by, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return err
	}
	c := r.comment(id)
	if c == nil {
		return fmt.Errorf("githubsim: no comment %d", id)
	}
	s.editComment(r, c, by, body)
	return nil
}

// Comments lists the comments on an issue or pull request, oldest first.
func (s *Server) Comments(full string, number int) ([]Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return nil, err
	}
	var out []Comment
	for _, c := range r.x().comments {
		if c.issue != number {
			continue
		}
		cc := Comment{ID: c.id, Issue: c.issue, Author: c.author, Body: c.body}
		for _, x := range c.reactions {
			cc.Reactions = append(cc.Reactions, x.content)
		}
		out = append(out, cc)
	}
	return out, nil
}

// AddLabel labels an issue or pull request as by (a "labeled" webhook on
// a pull request).
func (s *Server) AddLabel(full string, number int, by, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return err
	}
	if !r.isIssue(number) {
		return fmt.Errorf("githubsim: no issue %s#%d", full, number)
	}
	s.addLabel(r, number, by, name)
	return nil
}

// RemoveLabel removes a label as by (an "unlabeled" webhook).
func (s *Server) RemoveLabel(full string, number int, by, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return err
	}
	if !s.removeLabel(r, number, by, name) {
		return fmt.Errorf("githubsim: %s#%d has no label %q", full, number, name)
	}
	return nil
}

// Labels lists the labels of an issue or pull request, in the order added.
func (s *Server) Labels(full string, number int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return nil, err
	}
	return slices.Clone(r.x().labels[number]), nil
}

// SetPermission gives login a permission on the repository: admin, write,
// read or none (GitHub's collaborator permission values).
func (s *Server) SetPermission(full, login, perm string) error {
	switch perm {
	case "admin", "write", "read", "none":
	default:
		return fmt.Errorf("githubsim: bad permission %q", perm)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return err
	}
	r.x().perms[strings.ToLower(login)] = perm
	return nil
}

// PullRequests lists a repository's pull requests by number.
func (s *Server) PullRequests(full string) ([]PullRequest, error) {
	s.mu.Lock()
	r, err := s.lookup(full)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	var ns []int
	for _, p := range r.sortedPulls() {
		ns = append(ns, p.number)
	}
	s.mu.Unlock()
	out := make([]PullRequest, 0, len(ns))
	for _, n := range ns {
		p, err := s.PR(full, n)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Shapes.

func (s *Server) issueURL(r *repo, n int) string {
	return s.apiURL("/repos/%s/issues/%d", r.fullName(), n)
}

func (s *Server) commentJSON(r *repo, c *comment) obj {
	return obj{
		"id":                 c.id,
		"node_id":            fmt.Sprintf("IC_%d", c.id),
		"url":                s.apiURL("/repos/%s/issues/comments/%d", r.fullName(), c.id),
		"html_url":           fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", r.fullName(), c.issue, c.id),
		"issue_url":          s.issueURL(r, c.issue),
		"body":               c.body,
		"user":               userJSON(c.author),
		"created_at":         ts(c.createdAt),
		"updated_at":         ts(c.updatedAt),
		"author_association": "NONE",
	}
}

func reactionJSON(x reaction) obj {
	return obj{"id": x.id, "node_id": fmt.Sprintf("REA_%d", x.id), "user": userJSON(x.user), "content": x.content, "created_at": ts(x.createdAt)}
}

func (s *Server) labelJSON(r *repo, name string) obj {
	return obj{
		"id":          loginID("label:" + name),
		"node_id":     fmt.Sprintf("LA_%d", loginID("label:"+name)),
		"url":         s.apiURL("/repos/%s/labels/%s", r.fullName(), url.PathEscape(name)),
		"name":        name,
		"description": nil,
		"color":       "ededed",
		"default":     false,
	}
}

func (s *Server) labelsJSON(r *repo, names []string) []obj {
	out := []obj{}
	for _, n := range names {
		out = append(out, s.labelJSON(r, n))
	}
	return out
}

// issueJSON is the issue a comment webhook names: a pull request's carries
// a pull_request object, which is how a receiver tells the two apart.
func (s *Server) issueJSON(r *repo, n int) obj {
	o := obj{
		"id": int64(n), "node_id": fmt.Sprintf("I_%d", n), "number": n,
		"url":      s.issueURL(r, n),
		"html_url": fmt.Sprintf("https://github.com/%s/issues/%d", r.fullName(), n),
		"labels":   s.labelsJSON(r, r.x().labels[n]),
		"locked":   false,
		"comments": 0,
	}
	for _, c := range r.x().comments {
		if c.issue == n {
			o["comments"] = o["comments"].(int) + 1
		}
	}
	if p := r.pulls[n]; p != nil {
		o["title"], o["user"], o["state"], o["created_at"] = p.title, userJSON(p.author), p.state, ts(p.createdAt)
		o["draft"] = p.draft
		o["pull_request"] = obj{
			"url":       s.apiURL("/repos/%s/pulls/%d", r.fullName(), n),
			"html_url":  fmt.Sprintf("https://github.com/%s/pull/%d", r.fullName(), n),
			"merged_at": tsPtr(p.mergedAt),
		}
	} else if i := r.x().issues[n]; i != nil {
		o["title"], o["user"], o["state"], o["created_at"] = i.title, userJSON(i.author), "open", ts(i.createdAt)
	}
	return o
}

func (s *Server) emitComment(r *repo, c *comment, action, by string, changes obj) {
	if s.hook.url == "" {
		return
	}
	payload := obj{
		"action":     action,
		"issue":      s.issueJSON(r, c.issue),
		"comment":    s.commentJSON(r, c),
		"repository": s.repoJSON(r),
		"sender":     userJSON(by),
	}
	if changes != nil {
		payload["changes"] = changes
	}
	s.emit("issue_comment", payload)
}

// emitLabel announces a label change: a pull_request webhook on a pull
// request (an issues webhook on an issue, which the queue ignores, is not
// sent).
func (s *Server) emitLabel(r *repo, n int, action, by, name string) {
	p := r.pulls[n]
	if s.hook.url == "" || p == nil {
		return
	}
	s.emit("pull_request", obj{
		"action":       action,
		"number":       n,
		"pull_request": s.prJSON(r, p),
		"label":        s.labelJSON(r, name),
		"repository":   s.repoJSON(r),
		"sender":       userJSON(by),
	})
}
