package queuesvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

func TestCollapse(t *testing.T) {
	for _, c := range []struct {
		name   string
		checks []github.Check
		want   map[string]string
	}{
		{"status success", []github.Check{{Kind: github.KindStatus, Name: "ci", State: "success"}}, map[string]string{"ci": "success"}},
		{"failure wins over success", []github.Check{
			{Kind: github.KindStatus, Name: "ci", State: "success"},
			{Kind: github.KindCheckRun, Name: "ci", Status: "completed", Conclusion: "failure"},
		}, map[string]string{"ci": "failure"}},
		{"success wins over pending", []github.Check{
			{Kind: github.KindCheckRun, Name: "ci", Status: "in_progress"},
			{Kind: github.KindStatus, Name: "ci", State: "success"},
		}, map[string]string{"ci": "success"}},
		{"stale check waits", []github.Check{{Kind: github.KindCheckRun, Name: "lint", Status: "completed", Conclusion: "stale"}}, map[string]string{"lint": "pending"}},
		{"queued check waits", []github.Check{{Kind: github.KindCheckRun, Name: "lint", Status: "queued"}}, map[string]string{"lint": "queued"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := collapse(c.checks)
			if diff := cmp.Diff(got, c.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// TestCollapseIdentifiesTheDecidingResult: the id of a name's state is the
// result that decided it, so a retry can tell a new result from the one
// that failed the run it repeats.
func TestCollapseIdentifiesTheDecidingResult(t *testing.T) {
	_, ids := collapse([]github.Check{
		{Kind: github.KindStatus, Name: "ci", State: "success", ID: 7},
		{Kind: github.KindCheckRun, Name: "ci", Status: "completed", Conclusion: "failure", ID: 7},
		{Kind: github.KindStatus, Name: "lint", State: "pending", ID: 9},
	})
	if diff := cmp.Diff(ids, map[string]string{"ci": "check_run:7", "lint": "status:9"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestEventIDIsDeterministic(t *testing.T) {
	got := EventID("event/0a1b-2c/17")
	if got != "msg_0a1b2c_17" {
		t.Errorf("EventID = %q", got)
	}
	if EventID("event/0a1b-2c/18") == got {
		t.Error("two transitions share an event id")
	}
}

// TestBatchEventWireForm: a batch event goes out without pr_number and
// author, with pr_numbers, and with the contract's millisecond timestamp.
func TestBatchEventWireForm(t *testing.T) {
	at := time.Date(2026, 7, 23, 1, 2, 3, 0, time.UTC)
	ev := mergequeue.Event{Type: "pull_request_batch.testing", Action: "testing", Timestamp: at, PRNumber: 2, Author: "dev", PRNumbers: []int{1, 2}, PRNumbersInBatch: []int{1, 2}}
	raw, err := json.Marshal(wireBatchEvent{wireEvent: wireEvent{Event: ev, Timestamp: at.Format(eventTimeFormat)}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	_, hasPR := got["pr_number"]
	_, hasAuthor := got["author"]
	if hasPR || hasAuthor || fmt.Sprint(got["pr_numbers"]) != "[1 2]" || got["timestamp"] != "2026-07-23T01:02:03.000Z" {
		t.Errorf("wire form: %s", raw)
	}
}

// TestFailedTestsOfUploads: a run's uploads give each failed test once;
// beyond store.MaxFailedTests, and the tests an upload did not list, are
// counted, not read.
func TestFailedTestsOfUploads(t *testing.T) {
	refs := func(from, to int) []store.FailedTestRef {
		var out []store.FailedTestRef
		for i := from; i < to; i++ {
			out = append(out, store.FailedTestRef{ID: fmt.Sprint(i), Name: fmt.Sprint("test ", i)})
		}
		return out
	}
	got, more := failedTests([]store.Upload{
		{FailedTests: refs(0, 30), FailedTestsTotal: 30},
		{FailedTests: refs(20, 50), FailedTestsTotal: 31}, // one it did not list
		{FailedTests: refs(45, 60), FailedTestsTotal: 15},
	})
	if diff := cmp.Diff(got, refs(0, store.MaxFailedTests)); diff != "" || more != 1+(60-store.MaxFailedTests) {
		t.Errorf("(-got +want):\n%s\nmore %d", diff, more)
	}
}

// TestGitHubFailureLoggedOncePerChange: the same failure of the same call
// of a queue, every tick, is logged once, then again after renoteAfter or
// when the failure changes.
func TestGitHubFailureLoggedOncePerChange(t *testing.T) {
	var logs bytes.Buffer
	now := time.Unix(0, 0)
	d := &Service{Log: slog.New(slog.NewTextHandler(&logs, nil)), Now: func() time.Time { return now }}
	k := store.QueueKey{Org: "acme", Repo: repository.Ref{Host: "github.com", Owner: "acme", Name: "shop"}, Branch: "main"}
	lines := func() int { return strings.Count(logs.String(), "GitHub did not answer") }
	for range 5 {
		d.noteGitHub(context.Background(), k, "checks", errors.New("no GitHub configured"))
		now = now.Add(time.Minute)
	}
	if n := lines(); n != 1 {
		t.Errorf("five ticks of one failure: %d lines, want 1", n)
	}
	d.noteGitHub(context.Background(), k, "checks", errors.New("502 bad gateway"))
	now = now.Add(renoteAfter)
	d.noteGitHub(context.Background(), k, "checks", errors.New("502 bad gateway"))
	if n := lines(); n != 3 {
		t.Errorf("after a new failure and renoteAfter: %d lines, want 3", n)
	}
}

// A test pull request's title fits GitHub's 256 characters: as many PRs
// as fit and how many more, a branch name too long cut.
func TestTestPRTitle(t *testing.T) {
	prs := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("#%d", 100001+i)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		prs    []string
		branch string
		want   string
	}{
		{"short", prs(2), "main", "[mainguard] test run for #100001, #100002 into main"},
		{"many", prs(40), "main", "[mainguard] test run for " + strings.Join(prs(40)[:23], ", ") + " and 17 more into main"},
		{"long branch", prs(1), strings.Repeat("b", 240), "[mainguard] test run for #100001 into " + strings.Repeat("b", 217) + "…"},
	} {
		got := testPRTitle(c.prs, c.branch)
		if got != c.want || len([]rune(got)) > maxPRTitle {
			t.Errorf("%s: %q (%d characters), want %q", c.name, got, len([]rune(got)), c.want)
		}
	}
}
