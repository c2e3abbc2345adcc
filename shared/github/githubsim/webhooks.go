package githubsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

type hookTarget struct {
	url, secret string
}

// Delivery is one webhook the server sent (or tried to).
type Delivery struct {
	ID     string
	Event  string
	Action string // payload "action", "" for push and status
	Status int    // receiver's HTTP status, 0 when it could not be reached
	Err    string
}

// SetWebhook sets (or, with an empty url, clears) where the server delivers
// the webhooks of its own state changes, and the secret they are signed with.
func (s *Server) SetWebhook(url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = hookTarget{url: url, secret: secret}
}

// Deliver sends one signed webhook delivery, as GitHub does: a JSON POST with
// every header GitHub sends (hookHeaders: X-GitHub-Event, X-GitHub-Delivery
// a fresh id, X-Hub-Signature-256 sha256= and the hex HMAC-SHA256 of the
// body under secret, …). payload is marshalled unless it is already []byte.
// It returns the receiver's status.
func (s *Server) Deliver(ctx context.Context, url, secret, event string, payload any) (int, error) {
	body, ok := payload.([]byte)
	if !ok {
		var err error
		if body, err = json.Marshal(payload); err != nil {
			return 0, err
		}
	}
	s.mu.Lock()
	id := s.opts.NewID()
	s.mu.Unlock()
	d := Delivery{ID: id, Event: event, Action: actionOf(body)}
	status, err := s.send(ctx, url, secret, event, id, body)
	d.Status = status
	if err != nil {
		d.Err = err.Error()
	}
	s.deliveries.record(d)
	return status, err
}

func (s *Server) send(ctx context.Context, url, secret, event, id string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	s.hookHeaders(req.Header, secret, event, id, body)
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("webhook receiver answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

func actionOf(body []byte) string {
	var p struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(body, &p)
	return p.Action
}

// Deliveries returns every delivery made so far, oldest first.
func (s *Server) Deliveries() []Delivery {
	return s.deliveries.list()
}

// Flush waits until every webhook emitted so far has been delivered.
func (s *Server) Flush() { s.deliveries.flush() }

// deliveryQueue delivers emitted events in order from one goroutine, outside
// the server lock, so a receiver may call back into the server.
type deliveryQueue struct {
	s       *Server
	mu      sync.Mutex
	cond    *sync.Cond
	pending []pendingHook
	busy    bool
	stopped bool
	done    []Delivery
	exited  chan struct{}
}

type pendingHook struct {
	target  hookTarget
	event   string
	id      string
	payload []byte
}

func (q *deliveryQueue) init(s *Server) {
	q.s = s
	q.cond = sync.NewCond(&q.mu)
	q.exited = make(chan struct{})
	go q.loop()
}

func (q *deliveryQueue) loop() {
	defer close(q.exited)
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.stopped {
			q.cond.Wait()
		}
		if len(q.pending) == 0 && q.stopped {
			q.mu.Unlock()
			return
		}
		h := q.pending[0]
		q.pending = q.pending[1:]
		q.busy = true
		q.mu.Unlock()

		d := Delivery{ID: h.id, Event: h.event, Action: actionOf(h.payload)}
		status, err := q.s.send(context.Background(), h.target.url, h.target.secret, h.event, h.id, h.payload)
		d.Status = status
		if err != nil {
			d.Err = err.Error()
		}

		q.mu.Lock()
		q.done = append(q.done, d)
		q.busy = false
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}

func (q *deliveryQueue) enqueue(h pendingHook) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	q.pending = append(q.pending, h)
	q.cond.Broadcast()
}

func (q *deliveryQueue) record(d Delivery) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.done = append(q.done, d)
}

func (q *deliveryQueue) list() []Delivery {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]Delivery(nil), q.done...)
}

func (q *deliveryQueue) flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) > 0 || q.busy {
		q.cond.Wait()
	}
}

func (q *deliveryQueue) close() {
	q.mu.Lock()
	q.stopped = true
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.exited
}

// emit queues a webhook for delivery when a webhook URL is configured.
// Callers hold s.mu.
func (s *Server) emit(event string, payload obj) {
	if s.hook.url == "" {
		return
	}
	if s.opts.App != nil { // an App's webhooks name its installation
		payload["installation"] = obj{"id": s.opts.App.InstallationID, "node_id": fmt.Sprintf("MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u%d", s.opts.App.InstallationID)}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return
	}
	s.deliveries.enqueue(pendingHook{target: s.hook, event: event, id: s.opts.NewID(), payload: body})
}

func (s *Server) emitPull(r *repo, p *pull, action string, changes obj) {
	if s.hook.url == "" {
		return
	}
	payload := obj{
		"action":       action,
		"number":       p.number,
		"pull_request": s.prJSON(r, p),
		"repository":   s.repoJSON(r),
		"sender":       userJSON(p.author),
	}
	if changes != nil {
		payload["changes"] = changes
	}
	s.emit("pull_request", payload)
}

func (s *Server) emitPush(r *repo, branch, before, after, pusher string) {
	if s.hook.url == "" {
		return
	}
	const zero = "0000000000000000000000000000000000000000"
	payload := obj{
		"ref":         "refs/heads/" + branch,
		"before":      orDefault(before, zero),
		"after":       orDefault(after, zero),
		"created":     before == "",
		"deleted":     after == "",
		"forced":      false,
		"repository":  s.repoJSON(r),
		"pusher":      obj{"name": pusher, "email": pusher + "@users.noreply.github.com"},
		"sender":      userJSON(pusher),
		"head_commit": nil,
	}
	if after != "" {
		if c, err := r.git.commit(after); err == nil {
			payload["head_commit"] = obj{"id": c.SHA, "tree_id": c.Tree, "message": c.Message}
		}
	}
	s.emit("push", payload)
}

func (s *Server) emitStatus(r *repo, st *status) {
	if s.hook.url == "" {
		return
	}
	branches := []obj{}
	if names, err := r.git.branches(); err == nil {
		for _, b := range names {
			if r.git.branchHead(b) == st.sha {
				branches = append(branches, obj{"name": b, "commit": obj{"sha": st.sha}, "protected": r.protection[b] != nil})
			}
		}
	}
	payload := s.statusJSON(r, st)
	payload["sha"] = st.sha
	payload["name"] = r.fullName()
	payload["commit"] = obj{"sha": st.sha}
	payload["branches"] = branches
	payload["repository"] = s.repoJSON(r)
	payload["sender"] = userJSON("githubsim")
	delete(payload, "url")
	delete(payload, "node_id")
	delete(payload, "creator")
	s.emit("status", payload)
}

func (s *Server) emitCheckRun(r *repo, c *checkRun, action string) {
	if s.hook.url == "" {
		return
	}
	run := s.checkRunJSON(r, c)
	var prs []obj
	for _, p := range r.sortedPulls() {
		if p.state == "open" && p.headSHA == c.sha {
			prs = append(prs, obj{
				"number": p.number,
				"head":   obj{"ref": p.headRef, "sha": p.headSHA},
				"base":   obj{"ref": p.baseRef, "sha": r.git.branchHead(p.baseRef)},
			})
		}
	}
	if prs == nil {
		prs = []obj{}
	}
	run["pull_requests"] = prs
	var headBranch any
	if names, err := r.git.branches(); err == nil {
		for _, b := range names {
			if r.git.branchHead(b) == c.sha {
				headBranch = b
				break
			}
		}
	}
	run["check_suite"] = obj{"id": checkSuiteID(c.sha, c.appID), "head_branch": headBranch, "head_sha": c.sha, "pull_requests": prs}
	s.emit("check_run", obj{
		"action":     action,
		"check_run":  run,
		"repository": s.repoJSON(r),
		"sender":     userJSON("githubsim"),
	})
}

func orDefault(a, b string) string {
	if a == "" {
		return b
	}
	return a
}
