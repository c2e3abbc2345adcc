package mergequeue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
)

func TestParsePriority(t *testing.T) {
	for _, tc := range []struct {
		raw   any
		value int
		given bool
		bad   bool
	}{
		{raw: nil, value: 100},
		{raw: float64(0), value: 0, given: true},
		{raw: float64(255), value: 255, given: true},
		{raw: 42, value: 42, given: true},
		{raw: "URGENT", value: 0, given: true},
		{raw: "High", value: 10, given: true},
		{raw: "medium", value: 100, given: true},
		{raw: "low", value: 200, given: true},
		{raw: "17", value: 17, given: true},
		{raw: float64(256), bad: true},
		{raw: float64(-1), bad: true},
		{raw: 1.5, bad: true},
		{raw: "highest", bad: true},
		{raw: true, bad: true},
	} {
		value, given, err := ParsePriority(tc.raw)
		if tc.bad {
			if !errs.Is(err, errs.Invalid) || !strings.Contains(errs.MessageOf(err), "priority") {
				t.Errorf("ParsePriority(%#v) error = %v, want an invalid-priority error", tc.raw, err)
			}
			continue
		}
		if err != nil || value != tc.value || given != tc.given {
			t.Errorf("ParsePriority(%#v) = %d, %v, %v; want %d, %v", tc.raw, value, given, err, tc.value, tc.given)
		}
	}
}

func TestPriorityName(t *testing.T) {
	got := map[int]string{}
	for _, v := range []int{0, 1, 10, 11, 50, 100, 101, 200, 201, 255} {
		got[v] = PriorityName(v)
	}
	want := map[int]string{
		0: "urgent", 1: "high", 10: "high", 11: "medium", 50: "medium", 100: "medium",
		101: "low", 200: "low", 201: "low", 255: "low",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("names (-got +want):\n%s", diff)
	}
}

func counter() func() string {
	n := 0
	return func() string { n++; return "id-" + string(rune('a'+n)) }
}

func TestSubmitEpisodes(t *testing.T) {
	newID := counter()
	s := NewSnapshot(DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "app"}, "main"))
	s, out, err := Submit(s, SubmitRequest{PRNumber: 7}, t0, newID)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Entries[0]
	if e.State != NotReady || e.Priority != PriorityMedium || !e.DefaultPriority || e.Episode != 1 {
		t.Errorf("new entry = %+v", e)
	}
	if len(out.Transitions) != 1 || out.Transitions[0].From != "" || out.Transitions[0].Reason != ReasonAPIRequested {
		t.Errorf("transitions = %+v", out.Transitions)
	}
	// Resubmitting while active updates priority and noBatch only.
	s, out, err = Submit(s, SubmitRequest{PRNumber: 7, Priority: ptr(10), NoBatch: ptr(true)}, t0, newID)
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Entries[0]; e.Priority != 10 || e.DefaultPriority || !e.NoBatch || e.Episode != 1 || len(out.Transitions) != 0 {
		t.Errorf("resubmitted entry = %+v, transitions %v", e, out.Transitions)
	}
	// Cancel, resubmit: a new episode with the same id.
	s, _, err = Cancel(s, CancelRequest{PRNumber: 7}, t0)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err = Submit(s, SubmitRequest{PRNumber: 7}, t0, newID)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Entries[0]; got.ID != e.ID || got.Episode != 2 || got.State != NotReady {
		t.Errorf("after resubmit = %+v; want id %s, episode 2, NOT_READY", got, e.ID)
	}
	// A pruned entry keeps its id when the store passes it back.
	s2, _, _ := Submit(s, SubmitRequest{PRNumber: 8, EntryID: "stored-id"}, t0, newID)
	if got := s2.Entries[1].ID; got != "stored-id" {
		t.Errorf("id = %q, want the stored one", got)
	}
	if len(s.Entries) != 1 {
		t.Error("Submit changed the snapshot passed in")
	}
}

func TestCommandErrors(t *testing.T) {
	s := NewSnapshot(DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "app"}, "main"))
	for i, st := range []PRState{Merged, Failed, Cancelled, Pending, Testing} {
		s.Entries = append(s.Entries, Entry{ID: string(st), PRNumber: i + 1, State: st, Episode: 1})
	}
	for _, tc := range []struct {
		name string
		call func() error
		code errs.Code
		msg  string
	}{
		{"submit bad number", func() error { _, _, err := Submit(s, SubmitRequest{PRNumber: 0}, t0, counter()); return err },
			errs.Invalid, "pr.number must be a positive integer"},
		{"submit merged", func() error { _, _, err := Submit(s, SubmitRequest{PRNumber: 1}, t0, counter()); return err },
			errs.Invalid, "pull request 1 is already merged"},
		{"cancel merged", func() error { _, _, err := Cancel(s, CancelRequest{PRNumber: 1}, t0); return err },
			errs.Invalid, "pull request 1 is already merged"},
		{"cancel failed", func() error { _, _, err := Cancel(s, CancelRequest{PRNumber: 2}, t0); return err },
			errs.Invalid, "pull request 2 has already failed"},
		{"cancel cancelled", func() error { _, _, err := Cancel(s, CancelRequest{PRNumber: 3}, t0); return err },
			errs.NotFound, "pull request 3 is not submitted to this queue"},
		{"cancel unknown", func() error { _, _, err := Cancel(s, CancelRequest{PRNumber: 99}, t0); return err },
			errs.NotFound, "pull request 99 is not submitted to this queue"},
		{"restart pending", func() error { _, _, err := Restart(s, RestartRequest{PRNumber: 4}, t0); return err },
			errs.Invalid, "pull request 4 is PENDING; only a pull request in TESTING, TESTS_PASSED or PENDING_FAILURE can be restarted"},
		{"restart unknown", func() error { _, _, err := Restart(s, RestartRequest{PRNumber: 99}, t0); return err },
			errs.NotFound, "pull request 99 is not submitted to this queue"},
		{"state", func() error { _, _, err := UpdateQueue(s, QueuePatch{State: ptr("switching_modes")}, t0); return err },
			errs.Invalid, "state must be RUNNING, PAUSED or DRAINING"},
		{"mode", func() error { _, _, err := UpdateQueue(s, QueuePatch{Mode: ptr("double")}, t0); return err },
			errs.Invalid, "mode must be SINGLE or PARALLEL"},
		{"concurrency", func() error { _, _, err := UpdateQueue(s, QueuePatch{Concurrency: ptr(0)}, t0); return err },
			errs.Invalid, "concurrency must be at least 1"},
		{"depth", func() error { _, _, err := UpdateQueue(s, QueuePatch{PendingFailureDepth: ptr(-1)}, t0); return err },
			errs.Invalid, "pendingFailureDepth must be 0 or more"},
		{"merge method", func() error { _, _, err := UpdateQueue(s, QueuePatch{MergeMethod: ptr("fast")}, t0); return err },
			errs.Invalid, "mergeMethod must be MERGE_COMMIT, SQUASH or REBASE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if errs.CodeOf(err) != tc.code || errs.MessageOf(err) != tc.msg {
				t.Errorf("error = %v; want %s %q", err, tc.code, tc.msg)
			}
		})
	}
}

func TestUpdateQueue(t *testing.T) {
	s := NewSnapshot(DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "app"}, "main"))
	s, _, err := UpdateQueue(s, QueuePatch{
		State: ptr("paused"), Mode: ptr("Parallel"), Concurrency: ptr(5), MergeMethod: ptr("rebase"),
		RequiredStatuses: []string{"ci", "lint"},
	}, t0)
	if err != nil {
		t.Fatal(err)
	}
	q := s.Queue
	if q.State != QueuePaused || q.Mode != ModeParallel || q.Concurrency != 5 || q.MergeMethod != Rebase {
		t.Errorf("queue = %+v", q)
	}
	s, _, _ = UpdateQueue(s, QueuePatch{}, t0)
	if diff := cmp.Diff(s.Queue.RequiredStatuses, []string{"ci", "lint"}); diff != "" {
		t.Errorf("no list changed the statuses (-got +want):\n%s", diff)
	}
	s, _, _ = UpdateQueue(s, QueuePatch{RequiredStatuses: []string{}}, t0)
	if s.Queue.RequiredStatuses == nil || len(s.Queue.RequiredStatuses) != 0 {
		t.Errorf("statuses = %#v after an empty list, want an empty list (none required)", s.Queue.RequiredStatuses)
	}
	s, _, _ = UpdateQueue(s, QueuePatch{DeleteRequiredStatuses: true}, t0)
	if s.Queue.RequiredStatuses != nil {
		t.Errorf("statuses = %v after deleteRequiredStatuses", s.Queue.RequiredStatuses)
	}
}

// A snapshot survives the driver's DynamoDB round trip unchanged.
func TestSnapshotAttributeValueRoundTrip(t *testing.T) {
	s := newSim(t, 2)
	s.w.hold[2] = true
	for pr := 1; pr <= 3; pr++ {
		s.submit(pr, nil)
	}
	s.steps(3)
	item, err := attributevalue.MarshalMap(s.snap)
	if err != nil {
		t.Fatal(err)
	}
	var got Snapshot
	if err := attributevalue.UnmarshalMap(item, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, s.snap, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-got +want):\n%s", diff)
	}
}

func TestQueueOrder(t *testing.T) {
	s := newSim(t, 1)
	s.w.hold[1] = true
	s.w.openPR(4)
	s.w.prs[4].mergeability = NotMergeable
	s.submit(1, nil)
	s.steps(1) // 1 starts before the others arrive
	s.submit(2, ptr(200))
	s.submit(3, ptr(10))
	s.submit(4, nil)
	s.steps(2)
	var got []int
	for _, e := range QueueOrder(s.snap) {
		got = append(got, e.PRNumber)
	}
	if diff := cmp.Diff(got, []int{1, 3, 2}); diff != "" {
		t.Errorf("order (-got +want):\n%s", diff)
	}
	if r := ReadinessOf(s.entry(4), s.snap.Queue); r.GitHubMergeability != NotMergeable || !r.DoesBaseBranchMatch {
		t.Errorf("readiness of PR 4 = %+v", r)
	}
}

func TestCreateQueueAppliesTheDefaults(t *testing.T) {
	repo := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	mode, three := "parallel", 3
	s, err := CreateQueue(repo, "main", QueuePatch{Mode: &mode, Concurrency: &three}, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultQueue(repo, "main")
	want.Mode, want.Concurrency, want.BisectionConcurrency = ModeParallel, 3, 3
	if d := cmp.Diff(s.Queue, want, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("(-got +want):\n%s", d)
	}
	if s, err := CreateQueue(repo, "main", QueuePatch{}, t0); err != nil || s.Queue.Concurrency != 1 || s.Queue.BisectionConcurrency != 1 || s.Queue.Mode != ModeSingle {
		t.Errorf("without mode and concurrency: %+v %v", s.Queue, err)
	}
	zero := 0
	if _, err := CreateQueue(repo, "main", QueuePatch{Concurrency: &zero}, t0); !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "concurrency must be at least 1") {
		t.Errorf("concurrency 0: %v", err)
	}
}

func TestTargetsIntersect(t *testing.T) {
	api, web, apiDocs := NewTargets(false, []string{"api"}), NewTargets(false, []string{"web"}), NewTargets(false, []string{"docs", "api"})
	all, none := NewTargets(true, nil), NewTargets(false, []string{})
	for _, c := range []struct {
		name string
		a, b *Targets
		want bool
	}{
		{"shared name", api, apiDocs, true},
		{"disjoint names", api, web, false},
		{"ALL and a name", all, web, true},
		{"ALL and ALL", all, all, true},
		{"ALL and none", all, none, false},
		{"none and none", none, none, false},
		{"unknown and a name", nil, web, true},
	} {
		if got := c.a.Intersects(c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := c.b.Intersects(c.a); got != c.want {
			t.Errorf("%s (swapped): %v, want %v", c.name, got, c.want)
		}
	}
	// A name always meets itself, whatever else either list holds.
	many := make([]string, 500)
	for i := range many {
		many[i] = "target-" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
	}
	for _, n := range many[:50] {
		if !NewTargets(false, many).Intersects(NewTargets(false, []string{n})) {
			t.Fatalf("%q is in the list but does not intersect it", n)
		}
	}
}

func TestSpreadPrefixes(t *testing.T) {
	for _, c := range []struct {
		lo, hi, n int
		want      []int
	}{
		{0, 4, 1, []int{2}}, {0, 4, 2, []int{1, 2}}, {0, 8, 5, []int{1, 2, 4, 5, 6}},
		{2, 4, 5, []int{3}}, {3, 4, 5, nil}, {0, 8, 1, []int{4}}, {4, 8, 1, []int{6}},
	} {
		if got := spread(c.lo, c.hi, c.n); !slices.Equal(got, c.want) {
			t.Errorf("spread(%d, %d, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
		}
	}
}

// TestGitHubSurfaceSettings: the settings of the queue's GitHub surface
// are stored once they act, and a state label prefix that would make a
// label GitHub refuses is refused.
func TestGitHubSurfaceSettings(t *testing.T) {
	s := NewSnapshot(DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}, "main"))
	yes := true
	prefix := "queue/"
	s2, _, err := UpdateQueue(s, QueuePatch{CreatePrsForTestingBranches: &yes, LabelCommandsEnabled: &yes, StateLabelsEnabled: &yes, StateLabelPrefix: &prefix}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if q := s2.Queue; !q.CreatePrsForTestingBranches || !q.LabelCommandsEnabled || !q.StateLabelsEnabled || q.StateLabelPrefix != prefix {
		t.Errorf("settings not stored: %+v", q)
	}
	if got := StateLabel(prefix, PendingFailure); got != "queue/pending failure" {
		t.Errorf("StateLabel = %q", got)
	}
	for _, bad := range []string{"", "  ", strings.Repeat("x", MaxStateLabelPrefix+1), "a\nb"} {
		if _, _, err := UpdateQueue(s, QueuePatch{StateLabelPrefix: &bad}, t0); !errs.Is(err, errs.Invalid) {
			t.Errorf("stateLabelPrefix %q: %v", bad, err)
		}
	}
}

// TestNoticeRepeatedUntilNotified: a transition owes the PR's comment and
// state label (a Notify keyed by the transition); the queue stays active
// while it is owed, repeats it after RetryInterval, and settles it once
// the driver reports it done.
func TestNoticeRepeatedUntilNotified(t *testing.T) {
	s := NewSnapshot(DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}, "main"))
	ids := 0
	newID := func() string { ids++; return fmt.Sprint("id-", ids) }
	s, _, err := Submit(s, SubmitRequest{PRNumber: 7}, t0, newID)
	if err != nil {
		t.Fatal(err)
	}
	s, out, err := Cancel(s, CancelRequest{PRNumber: 7}, t0)
	if err != nil {
		t.Fatal(err)
	}
	notify := func(out Output) []Effect {
		return slices.DeleteFunc(slices.Clone(out.Effects), func(e Effect) bool { return e.Kind != EffectNotify })
	}
	n := notify(out)
	if len(n) != 1 || n[0].Notify.State != Cancelled || n[0].Notify.Reason != ReasonUserRequested || !n[0].Notify.Comment {
		t.Fatalf("notify effects of a cancel: %+v", n)
	}
	if !s.Active() {
		t.Fatal("a queue owing a PR comment is not active")
	}
	if _, out := Step(s, Observations{}, t0.Add(RetryInterval-time.Second), newID); len(notify(out)) != 0 {
		t.Errorf("repeated before RetryInterval: %+v", notify(out))
	}
	s, out = Step(s, Observations{}, t0.Add(RetryInterval), newID)
	if r := notify(out); len(r) != 1 || r[0].Key != n[0].Key {
		t.Fatalf("repeat = %+v, want %s again", r, n[0].Key)
	}
	s, _ = Step(s, Observations{Notified: []string{n[0].Key}}, t0.Add(RetryInterval+time.Second), newID)
	if s.Active() {
		t.Error("the queue stays active once its notice is done")
	}
}
