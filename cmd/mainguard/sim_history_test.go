package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/mergequeue/queuesim"
)

// TestRecommendJudgesWhatTheQueueRan: a history recorded under the
// autopilot is judged against the autopilot (its row is the queue's own,
// the autopilot-off row says so, and no recommendation turns on what was
// on); a history recorded with the autopilot off is judged against its
// fixed settings, as before.
func TestRecommendJudgesWhatTheQueueRan(t *testing.T) {
	var replay queuesim.Replay
	for i := range 30 {
		replay.Arrivals = append(replay.Arrivals, time.Duration(i)*3*time.Minute)
		replay.Bad = append(replay.Bad, i%10 == 4)
	}
	replay.Durations = []time.Duration{10 * time.Minute}
	actual := queuesim.Actual{PRs: 30, RunTime: 10 * time.Minute}
	two := 2
	bounds := mergequeue.AutopilotPatch{AutopilotMaxConcurrency: &two, AutopilotMaxBatch: &two}
	run := func(own mergequeue.QueuePatch) string {
		t.Helper()
		var buf bytes.Buffer
		if err := recommend(&buf, replay, actual, own, bounds, 1); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}

	on, off := true, false
	var ranAutopilot mergequeue.QueuePatch
	ranAutopilot.Autopilot = &on
	out := run(ranAutopilot)
	for _, re := range []string{
		`(?m)^ *autopilot off +\d+ `,
		`(?m)^ *the queue's own settings \(autopilot\) +\d+ `,
		`\nrecommendation: (keep the autopilot on; no fixed setting tried merges 2% more per hour\.|turn the autopilot off \(updateQueue autopilot: false\), concurrency \d with [^:]+: \+\d+% merges per hour \(\d+\.\d\d against \d+\.\d\d\))`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("a queue that ran the autopilot: no %s in\n%s", re, out)
		}
	}
	if strings.Contains(out, "turn the autopilot on") {
		t.Errorf("a queue that ran the autopilot is told to turn it on:\n%s", out)
	}

	var ranFixed mergequeue.QueuePatch
	ranFixed.Autopilot = &off
	out = run(ranFixed)
	for _, re := range []string{`(?m)^ *the queue's own settings +\d+ `, `(?m)^ *autopilot +\d+ `, `\nrecommendation: `} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("a queue with the autopilot off: no %s in\n%s", re, out)
		}
	}
	if strings.Contains(out, "autopilot off") || strings.Contains(out, "(autopilot)") {
		t.Errorf("a queue with the autopilot off is described as running it:\n%s", out)
	}
}
