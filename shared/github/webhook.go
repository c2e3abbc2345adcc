package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
)

// VerifySignature reports whether header (X-Hub-Signature-256) is
// "sha256=" and the hex HMAC-SHA256 of body under secret, compared in
// constant time. An empty secret or header never verifies.
func VerifySignature(secret, body []byte, header string) bool {
	if len(secret) == 0 {
		return false
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// Event kinds: GitHub's X-GitHub-Event names the queue reacts to.
const (
	EventPullRequest = "pull_request"
	EventStatus      = "status"
	EventCheckRun    = "check_run"
	EventCheckSuite  = "check_suite"
	EventPush        = "push"
	// EventIssueComment is a comment on an issue or pull request: the
	// queue's comment commands.
	EventIssueComment = "issue_comment"
)

// HandledEvents are the kinds the queue reacts to: what the App's manifest
// subscribes to.
var HandledEvents = []string{EventPullRequest, EventIssueComment, EventStatus, EventCheckRun, EventCheckSuite, EventPush}

// Event is a webhook delivery reduced to what the queue reacts to. Fields
// that do not apply to a kind are zero.
type Event struct {
	// Kind is the X-GitHub-Event name; Ignored is true for kinds the queue
	// does not react to (ping, issues, …), which are otherwise left empty.
	Kind    string
	Ignored bool
	// Action is the payload's action (closed, synchronize, completed, …).
	Action string
	Repo   Repo

	// Pull request events.
	PR             int
	Merged         bool
	MergeCommitSHA string
	HeadSHA        string
	HeadRef        string
	BaseRef        string
	Draft          bool
	// BaseChangedFrom is the old base of an "edited" event that changed it.
	BaseChangedFrom string

	// status, check_run and check_suite events: the commit, the context or
	// check name, and its state (a status's state, or a check's conclusion
	// when completed, else its status).
	SHA     string
	Context string
	State   string
	// Branches whose head is SHA (status), or the suite's head branch.
	Branches []string
	// PRs the check run or suite belongs to.
	PRs []int

	// Sender is who caused the event (GitHub's sender.login).
	Sender string
	// Label is the label a pull_request "labeled" or "unlabeled" event
	// added or removed.
	Label string
	// issue_comment events: the issue or pull request number (PR), whether
	// it is a pull request, and the comment.
	IsPR        bool
	CommentID   int64
	CommentBody string
	// UpdatedAt is when what the event is about last changed: the
	// comment (issue_comment, its created_at until edited) or the pull
	// request (pull_request); zero for other kinds. GitHub signs no
	// delivery time, so this is how old a delivery's news is.
	UpdatedAt time.Time

	// push events: the ref ("refs/heads/main"), before and after shas, and
	// whether the ref was created or deleted.
	Ref     string
	Before  string
	After   string
	Created bool
	Deleted bool
}

type wireRepo struct {
	Name     string `json:"name"`
	FullName string `json:"full_name"`
	Owner    struct {
		Login string `json:"login"`
		Name  string `json:"name"`
	} `json:"owner"`
}

type wirePR struct {
	Number         int       `json:"number"`
	UpdatedAt      time.Time `json:"updated_at"`
	Merged         bool      `json:"merged"`
	MergeCommitSHA string    `json:"merge_commit_sha"`
	Draft          bool      `json:"draft"`
	Head           struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

type wireCheckRun struct {
	Name       string `json:"name"`
	HeadSHA    string `json:"head_sha"`
	HeadBranch string `json:"head_branch"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
	PRs        []struct {
		Number int `json:"number"`
	} `json:"pull_requests"`
	// A check run names its branch through its suite.
	CheckSuite *struct {
		HeadBranch string `json:"head_branch"`
	} `json:"check_suite"`
}

type wireEvent struct {
	Action      string    `json:"action"`
	Number      int       `json:"number"`
	Repository  *wireRepo `json:"repository"`
	PullRequest *wirePR   `json:"pull_request"`
	Changes     struct {
		Base *struct {
			Ref struct {
				From string `json:"from"`
			} `json:"ref"`
		} `json:"base"`
	} `json:"changes"`
	// status
	SHA      string `json:"sha"`
	Context  string `json:"context"`
	State    string `json:"state"`
	Branches []struct {
		Name string `json:"name"`
	} `json:"branches"`
	// check_run, check_suite
	CheckRun   *wireCheckRun `json:"check_run"`
	CheckSuite *wireCheckRun `json:"check_suite"`
	Sender     *struct {
		Login string `json:"login"`
	} `json:"sender"`
	Label *struct {
		Name string `json:"name"`
	} `json:"label"`
	// issue_comment
	Issue *struct {
		Number      int              `json:"number"`
		PullRequest *json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		ID        int64     `json:"id"`
		Body      string    `json:"body"`
		UpdatedAt time.Time `json:"updated_at"`
	} `json:"comment"`
	// push
	Ref     string `json:"ref"`
	Before  string `json:"before"`
	After   string `json:"after"`
	Created bool   `json:"created"`
	Deleted bool   `json:"deleted"`
}

// ParseEvent parses a webhook body given its X-GitHub-Event name. A kind the
// queue does not react to is returned with Ignored set and no error; a
// malformed body of a kind it reacts to is errs.Invalid.
func ParseEvent(event string, body []byte) (Event, error) {
	if !slices.Contains(HandledEvents, event) {
		return Event{Kind: event, Ignored: true}, nil
	}
	var w wireEvent
	if err := json.Unmarshal(body, &w); err != nil {
		return Event{}, errs.Wrap(errs.Invalid, err, "webhook body is not valid JSON")
	}
	if w.Repository == nil {
		return Event{}, errs.E(errs.Invalid, "webhook %s has no repository", event)
	}
	ev := Event{Kind: event, Action: w.Action, Repo: repoOf(w.Repository)}
	if w.Sender != nil {
		ev.Sender = w.Sender.Login
	}
	switch event {
	case EventPullRequest:
		if w.PullRequest == nil {
			return Event{}, errs.E(errs.Invalid, "pull_request webhook has no pull_request")
		}
		p := w.PullRequest
		ev.PR = p.Number
		if ev.PR == 0 {
			ev.PR = w.Number
		}
		ev.Merged, ev.Draft = p.Merged, p.Draft
		if p.Merged {
			ev.MergeCommitSHA = p.MergeCommitSHA
		}
		ev.HeadSHA, ev.HeadRef, ev.BaseRef, ev.UpdatedAt = p.Head.SHA, p.Head.Ref, p.Base.Ref, p.UpdatedAt
		if w.Changes.Base != nil {
			ev.BaseChangedFrom = w.Changes.Base.Ref.From
		}
		if w.Label != nil {
			ev.Label = w.Label.Name
		}
	case EventIssueComment:
		if w.Issue == nil || w.Comment == nil {
			return Event{}, errs.E(errs.Invalid, "issue_comment webhook has no issue or comment")
		}
		ev.PR, ev.IsPR = w.Issue.Number, w.Issue.PullRequest != nil
		ev.CommentID, ev.CommentBody, ev.UpdatedAt = w.Comment.ID, w.Comment.Body, w.Comment.UpdatedAt
	case EventStatus:
		ev.SHA, ev.Context, ev.State = w.SHA, w.Context, w.State
		for _, b := range w.Branches {
			ev.Branches = append(ev.Branches, b.Name)
		}
	case EventCheckRun, EventCheckSuite:
		c := w.CheckRun
		if event == EventCheckSuite {
			c = w.CheckSuite
		}
		if c == nil {
			return Event{}, errs.E(errs.Invalid, "%s webhook has no %s", event, event)
		}
		ev.SHA, ev.Context = c.HeadSHA, c.Name
		ev.State = c.Status
		if c.Status == "completed" {
			ev.State = c.Conclusion
		}
		branch := c.HeadBranch
		if branch == "" && c.CheckSuite != nil {
			branch = c.CheckSuite.HeadBranch
		}
		if branch != "" {
			ev.Branches = []string{branch}
		}
		for _, p := range c.PRs {
			ev.PRs = append(ev.PRs, p.Number)
		}
	case EventPush:
		ev.Ref, ev.Before, ev.After, ev.Created, ev.Deleted = w.Ref, w.Before, w.After, w.Created, w.Deleted
	}
	return ev, nil
}

func repoOf(r *wireRepo) Repo {
	owner := r.Owner.Login
	if owner == "" {
		owner = r.Owner.Name // push payloads of old hooks carry owner.name
	}
	name := r.Name
	if o, n, ok := strings.Cut(r.FullName, "/"); ok && (owner == "" || name == "") {
		owner, name = o, n
	}
	return Repo{Owner: owner, Name: name}
}
