package driver

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/github"
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
			if diff := cmp.Diff(collapse(c.checks), c.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
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
