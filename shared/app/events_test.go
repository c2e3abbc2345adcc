package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
	svix "github.com/svix/svix-webhooks/go"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// delivery is one request as a webhook receiver saw it.
type delivery struct {
	ID        string // webhook-id
	SvixID    string // svix-id
	Type      string // the payload's type field
	Body      []byte
	VerifyErr error // from the official Svix library
}

// whReceiver is a webhook endpoint that verifies every request with the
// official Svix library and answers with the next of its statuses (the
// last one forever).
type whReceiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	secret   string
	statuses []int
	got      []delivery
}

func newWhReceiver(tb testing.TB, statuses ...int) *whReceiver {
	tb.Helper()
	rc := &whReceiver{statuses: append([]int{}, statuses...)}
	if len(rc.statuses) == 0 {
		rc.statuses = []int{http.StatusNoContent}
	}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		d := delivery{ID: r.Header.Get("webhook-id"), SvixID: r.Header.Get("svix-id"), Body: body}
		wh, err := svix.NewWebhook(rc.secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		d.VerifyErr = err
		var head struct{ Type string }
		_ = json.Unmarshal(body, &head)
		d.Type = head.Type
		rc.got = append(rc.got, d)
		w.WriteHeader(rc.statuses[min(len(rc.got), len(rc.statuses))-1])
	}))
	tb.Cleanup(rc.srv.Close)
	return rc
}

// subscribe registers the receiver as an endpoint of org, as `mainguard
// webhook add` does, and keeps its secret to verify with.
func (rc *whReceiver) subscribe(tb testing.TB, h *harness, org string, types ...string) store.WebhookEndpoint {
	tb.Helper()
	ctx := context.Background()
	ep, err := webhooks.NewEndpoint(ctx, h.app.Guard, rc.srv.URL+"/hook", types)
	if err != nil {
		tb.Fatal(err)
	}
	ep, err = h.app.Store.AddWebhookEndpoint(ctx, org, ep)
	if err != nil {
		tb.Fatal(err)
	}
	rc.mu.Lock()
	rc.secret = ep.Secret
	rc.mu.Unlock()
	return ep
}

func (rc *whReceiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// streamInsert is the deliver-webhooks function's event for the outbox
// events of org waiting now, as DynamoDB Streams writes it (keys only
// matter to the function).
func streamInsert(tb testing.TB, h *harness, org string) events.DynamoDBEvent {
	tb.Helper()
	pending, err := h.app.Store.PendingEvents(context.Background(), org, 100)
	if err != nil {
		tb.Fatal(err)
	}
	var recs []map[string]any
	for _, ev := range pending {
		recs = append(recs, map[string]any{
			"eventID": "1", "eventName": "INSERT", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
			"dynamodb": map[string]any{
				"Keys": map[string]any{
					"PK": map[string]string{"S": "ORG#" + org + "#EVENT#" + ev.ID},
					"SK": map[string]string{"S": "EVENT"},
				},
				"NewImage": map[string]any{
					"event_id": map[string]string{"S": ev.ID}, "org": map[string]string{"S": org},
					"type": map[string]string{"S": ev.Type},
				},
				"StreamViewType": "NEW_IMAGE", "SequenceNumber": "1", "SizeBytes": 100,
			},
		})
	}
	raw, _ := json.Marshal(map[string]any{"Records": recs})
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		tb.Fatal(err)
	}
	return ev
}

// ingest uploads one CI run of an acme repository and ingests it as the
// deployed function does, from the bucket's object-created event.
func ingest(tb testing.TB, h *harness, repo repository.Ref, id, sha, branch string, pr int, junit string) {
	tb.Helper()
	ctx := context.Background()
	up := store.Upload{ID: id, Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", id), CreatedAt: h.Now()}
	if err := h.app.Store.CreateUpload(ctx, up); err != nil {
		tb.Fatal(err)
	}
	meta := bundle.Meta{Org: "acme", BundleUploadID: id, UploadTime: h.Now(),
		Repo: bundle.Repo{Host: repo.Host, Owner: repo.Owner, Name: repo.Name, HeadSHA: sha, HeadBranch: branch}}
	if pr > 0 {
		meta.Envs = map[string]string{"GITHUB_REF": fmt.Sprintf("refs/pull/%d/merge", pr)}
	}
	var buf bytes.Buffer
	err := bundle.Write(&buf, bundle.WriteInput{Meta: meta, JUnit: []bundle.File{{OriginalPath: "report.xml", Body: []byte(junit)}}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := (blobs.Dir{Root: h.app.Config.BundleDir}).Put(up.BlobKey, &buf, 20<<20); err != nil {
		tb.Fatal(err)
	}
	s3ev := events.S3Event{Records: []events.S3EventRecord{{S3: events.S3Entity{Object: events.S3Object{Key: up.BlobKey}}}}}
	if err := h.app.Health.IngestS3(ctx, s3ev); err != nil {
		tb.Fatal(err)
	}
	if got, err := h.app.Store.GetUpload(ctx, "acme", id); err != nil || got.State != store.UploadIngested {
		tb.Fatalf("upload %s: %s %q %v", id, got.State, got.Reason, err)
	}
}

// retriedLogin is a run in which "login" fails, then passes on a retry of
// the same commit: pass-on-retry makes it flaky.
const retriedLogin = `<testsuites><testsuite name="suite">` +
	`<testcase classname="pkg" name="login" file="src/login_test.go" time="0.2"><failure message="expected 200, got 503"/></testcase>` +
	`<testcase classname="pkg" name="login" file="src/login_test.go" time="0.1"/>` +
	`<testcase classname="pkg" name="logout" file="src/login_test.go" time="0.1"/>` +
	`</testsuite></testsuites>`

// mobile is the repository of the test-health event scenario.
var mobile = repository.Ref{Host: "github.com", Owner: "acme", Name: "mobile"}

// eventScenario makes events happen through the code that writes them
// when deployed. Each runs on a fresh harness (t0 clock, event ids
// msg_0001…) with a receiver subscribed to every event of acme.
type eventScenario struct {
	name string
	// types are the events the scenario must produce; each is
	// compared with testdata/events/<type>.json.
	types []string
	run   func(t *testing.T, h *harness)
	// queue, instead of run, drives a merge queue of acme/shop on a
	// simulated GitHub (main protected by the required status "ci"), with
	// the merge queue's ids fixed (00000000-0000-4000-8000-…).
	queue func(t *testing.T, h *harness, sim *githubsim.Server)
	// among, instead of types, are events the scenario must produce
	// among others (whose golden files other scenarios hold): only these
	// are compared with their golden files.
	among []string
}

// shop is the repository of the merge-queue event scenarios.
const shop = "acme/shop"

// mergeQueueTypes are the merge-queue events the scenarios cover; the
// pull_request_batch.* twins are not, as batching is not implemented.
var mergeQueueTypes = []string{
	"pull_request.submitted", "pull_request.queued", "pull_request.testing", "pull_request.pending_failure",
	"pull_request.failed", "pull_request.canceled", "pull_request.merged",
}

// shopQueue creates acme/shop's queue and submits PR #1 through the API;
// the submission advances the queue at once, to TESTING. Every merge-queue
// scenario starts so, with the same ids and times, so the submitted, queued
// and testing events they share have one golden file each.
func shopQueue(t *testing.T, h *harness, sim *githubsim.Server) int {
	t.Helper()
	shopQueueWith(t, h, nil)
	if _, err := sim.CommitFile(shop, "feature", "feature.txt", "feature\n", "add feature"); err != nil {
		t.Fatal(err)
	}
	n, err := sim.OpenPR(shop, "feature", "main", "Add feature", "ada")
	if err != nil {
		t.Fatal(err)
	}
	h.Advance(time.Minute)
	if resp := h.call(t, "submit-pull-request", event("/submitPullRequest", shopBody(map[string]any{"pr": map[string]any{"number": n}}))); resp.StatusCode != 200 {
		t.Fatalf("submitPullRequest: %d %s", resp.StatusCode, resp.Body)
	}
	// GitHub answers the submit's first read of the PR with mergeable
	// null; the next read knows: the queue takes the PR on then.
	if err := h.app.MergeQueue.Driver.Advance(context.Background(), shopKey); err != nil {
		t.Fatal(err)
	}
	return n
}

// shopBody is a merge-queue request's body for acme/shop's main, with extra.
func shopBody(extra map[string]any) map[string]any {
	m := map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "shop"}, "targetBranch": "main"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// outboxHolds reports whether acme's outbox holds an event of type typ.
func outboxHolds(t *testing.T, h *harness, typ string) bool {
	t.Helper()
	pending, err := h.app.Store.PendingEvents(context.Background(), "acme", 100)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(pending, func(e store.Event) bool { return e.Type == typ })
}

// shopQueueWith claims acme/shop for acme and creates its queue with the
// settings given, the merge queue's ids fixed.
func shopQueueWith(t *testing.T, h *harness, settings map[string]any) {
	t.Helper()
	seq := 0
	var mu sync.Mutex
	newID := func() string {
		mu.Lock()
		defer mu.Unlock()
		seq++
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", seq)
	}
	h.app.MergeQueue.NewID, h.app.MergeQueue.Driver.NewID = newID, newID
	if _, err := h.app.Store.ClaimRepo(context.Background(), "acme", "acme", "shop", false); err != nil {
		t.Fatal(err)
	}
	if resp := h.call(t, "create-queue", event("/createQueue", shopBody(settings))); resp.StatusCode != 200 {
		t.Fatalf("createQueue: %d %s", resp.StatusCode, resp.Body)
	}
}

var shopKey = store.QueueKey{Org: "acme", Repo: repository.Ref{Host: "github.com", Owner: "acme", Name: "shop"}, Branch: "main"}

// shopCI sets "ci" to state on every test branch and PR branch of
// acme/shop (as CI on pull requests does: GitHub merges none without it),
// then advances the queue a minute later, as a tick would (without the
// test health sweep a tick also runs, whose events are not this
// scenario's).
func shopCI(t *testing.T, h *harness, sim *githubsim.Server, state string, prBranches ...string) {
	t.Helper()
	branches, err := sim.Branches(shop)
	if err != nil {
		t.Fatal(err)
	}
	if prBranches == nil {
		prBranches = []string{"feature"}
	}
	for _, b := range branches {
		if head, err := sim.BranchHead(shop, b); err == nil && (strings.HasPrefix(b, "trunk-merge/") || slices.Contains(prBranches, b)) {
			if err := sim.SetStatus(shop, head, "ci", state, "", "https://ci.example/"+head[:7]); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.Advance(time.Minute)
	if err := h.app.MergeQueue.Driver.Advance(context.Background(), shopKey); err != nil {
		t.Fatal(err)
	}
}

// eventScenarios cover every webhook event type. Merge-queue events
// (pull_request.* and pull_request_batch.*) belong here too: a scenario
// that drives the queue through its endpoints and ticks, listing the types
// it produces, with their golden files beside these.
var eventScenarios = []eventScenario{
	{
		name:  "merge queue: merged",
		types: []string{"pull_request.submitted", "pull_request.queued", "pull_request.testing", "pull_request.merged"},
		queue: func(t *testing.T, h *harness, sim *githubsim.Server) {
			shopQueue(t, h, sim)
			shopCI(t, h, sim, "success")
		},
	},
	{
		name: "merge queue: failed",
		types: []string{"pull_request.submitted", "pull_request.queued", "pull_request.testing",
			"pull_request.pending_failure", "pull_request.failed"},
		queue: func(t *testing.T, h *harness, sim *githubsim.Server) {
			shopQueue(t, h, sim)
			shopCI(t, h, sim, "failure")
		},
	},
	{
		name:  "merge queue: canceled",
		types: []string{"pull_request.submitted", "pull_request.queued", "pull_request.testing", "pull_request.canceled"},
		queue: func(t *testing.T, h *harness, sim *githubsim.Server) {
			n := shopQueue(t, h, sim)
			h.Advance(time.Minute)
			resp := h.call(t, "cancel-pull-request", event("/cancelPullRequest", map[string]any{
				"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "shop"}, "targetBranch": "main",
				"pr": map[string]any{"number": n},
			}))
			if resp.StatusCode != 200 {
				t.Fatalf("cancelPullRequest: %d %s", resp.StatusCode, resp.Body)
			}
		},
	},
	{
		// The autopilot (ours) raises concurrency once three runs have
		// ended with pull requests still waiting: five PRs, CI passing.
		name:  "merge queue: autopilot",
		among: []string{"merge_queue.autopilot_changed"},
		queue: func(t *testing.T, h *harness, sim *githubsim.Server) {
			shopQueueWith(t, h, map[string]any{"autopilot": true})
			branches := []string{"one", "two", "three", "four", "five"}
			for _, b := range branches {
				if _, err := sim.CommitFile(shop, b, b+".txt", b+"\n", "add "+b); err != nil {
					t.Fatal(err)
				}
				n, err := sim.OpenPR(shop, b, "main", "Add "+b, "ada")
				if err != nil {
					t.Fatal(err)
				}
				h.Advance(time.Minute)
				if resp := h.call(t, "submit-pull-request", event("/submitPullRequest", shopBody(map[string]any{"pr": map[string]any{"number": n}}))); resp.StatusCode != 200 {
					t.Fatalf("submitPullRequest: %d %s", resp.StatusCode, resp.Body)
				}
			}
			for round := 0; !outboxHolds(t, h, "merge_queue.autopilot_changed"); round++ {
				if round == 40 {
					t.Fatal("no autopilot change after 40 rounds of CI")
				}
				h.Advance(10 * time.Minute) // a run takes ten minutes
				shopCI(t, h, sim, "success", branches...)
			}
		},
	},
	{
		name: "test health",
		types: []string{
			healthview.EventStatusChanged,
			healthview.EventQuarantineSetting,
			healthview.EventTicketLinked,
		},
		run: func(t *testing.T, h *harness) {
			ctx := context.Background()
			// A repository of its own, so the payloads do not follow the
			// harness's seed: Jira tickets, quarantine on but not automatic.
			on, off := true, false
			_, err := h.app.Store.UpdateRepo(ctx, "acme", mobile, store.RepoSettings{
				JiraBaseURL: ptr("https://acme.atlassian.net"),
				Health:      testhealth.HealthSettings{QuarantineEnabled: &on, AutoQuarantine: &off},
			})
			if err != nil {
				t.Fatal(err)
			}
			// A pull request's CI retries login: it becomes flaky.
			h.Advance(time.Minute)
			ingest(t, h, mobile, "00000000-0000-4000-8000-000000000001", "b2c3d4e5f6a7", "feature/login", 41, retriedLogin)
			pending, err := h.app.Store.PendingEvents(ctx, "acme", 10)
			if err != nil || len(pending) != 1 {
				t.Fatalf("after the ingest: %d events, %v", len(pending), err)
			}
			var changed healthview.StatusChanged
			if err := json.Unmarshal([]byte(pending[0].Payload), &changed); err != nil {
				t.Fatal(err)
			}
			login := changed.TestCase.ID
			// Someone quarantines it for good, with a reason.
			h.Advance(time.Minute)
			if _, err := h.app.Health.SetOverride(ctx, "acme", mobile, login, testhealth.AlwaysQuarantine, time.Time{},
				healthview.Actor{FullName: "Ada Lovelace", Email: "ada@acme.example"}, "flaky on every PR"); err != nil {
				t.Fatal(err)
			}
			// And links a ticket to it through the API.
			h.Advance(time.Minute)
			resp := h.call(t, "link-ticket-to-test-case", event("/flaky-tests/link-ticket-to-test-case",
				map[string]any{"test_case_id": login, "external_ticket_id": "KAN-7", "repo": mobile}))
			if resp.StatusCode != 200 {
				t.Fatalf("link-ticket: %d %s", resp.StatusCode, resp.Body)
			}
		},
	},
}

// runScenario makes sc happen on a fresh harness (with a simulated GitHub
// for a merge-queue scenario), after before, and returns the harness.
func runScenario(t *testing.T, sc eventScenario, before func(h *harness)) *harness {
	t.Helper()
	var h *harness
	tweak := func(c *config.Config) { c.BundleDir = t.TempDir() }
	var sim *githubsim.Server
	if sc.queue != nil {
		var err error
		sim, err = githubsim.New(t.TempDir(), githubsim.Options{Now: func() time.Time {
			if h == nil { // while the repository is made
				return t0
			}
			return h.Now()
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sim.Close() })
		if _, err := sim.CreateRepo(shop, "main"); err != nil {
			t.Fatal(err)
		}
		if err := sim.SetRequiredStatusChecks(shop, "main", []string{"ci"}); err != nil {
			t.Fatal(err)
		}
		tweak = func(c *config.Config) {
			c.BundleDir, c.GitHubAPIURL, c.GitHubToken = t.TempDir(), sim.URL(), "local"
		}
	}
	h = newHarness(t, tweak)
	before(h)
	if sc.queue != nil {
		sc.queue(t, h, sim)
	} else {
		sc.run(t, h)
	}
	return h
}

// TestEventPayloadsGolden makes each event happen, delivers it through the
// deliver-webhooks function as the table's stream would invoke it, checks
// every delivery with the official Svix library and compares each payload
// with its golden file (-update rewrites them).
func TestEventPayloadsGolden(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, sc := range eventScenarios {
		t.Run(sc.name, func(t *testing.T) {
			var rc *whReceiver
			h := runScenario(t, sc, func(h *harness) {
				rc = newWhReceiver(t)
				rc.subscribe(t, h, "acme")
			})

			fn, ok := h.app.EventFunction("deliver-webhooks")
			if !ok {
				t.Fatal("no deliver-webhooks function")
			}
			deliver, ok := fn.(func(context.Context, events.DynamoDBEvent) error)
			if !ok {
				t.Fatalf("deliver-webhooks handler is a %T", fn)
			}
			if err := deliver(context.Background(), streamInsert(t, h, "acme")); err != nil {
				t.Fatal(err)
			}

			// Events are sent several at once: the order of arrival is not
			// the order of writing.
			got := rc.deliveries()
			var types []string
			for _, d := range got {
				types = append(types, d.Type)
			}
			slices.Sort(types)
			if sc.among != nil {
				for _, typ := range sc.among {
					if !slices.Contains(types, typ) {
						t.Fatalf("delivered event types %v, none a %s", types, typ)
					}
				}
			} else if d := cmp.Diff(types, slices.Sorted(slices.Values(sc.types))); d != "" {
				t.Fatalf("delivered event types (-got +want):\n%s", d)
			}
			pending, err := h.app.Store.PendingEvents(context.Background(), "acme", 10)
			if err != nil || len(pending) != 0 {
				t.Errorf("outbox after delivery: %d events, %v", len(pending), err)
			}
			for _, d := range got {
				covered[d.Type] = true
				if d.VerifyErr != nil {
					t.Errorf("%s: Svix verification failed: %v", d.Type, d.VerifyErr)
				}
				if !strings.HasPrefix(d.ID, "msg_") || d.SvixID != d.ID {
					t.Errorf("%s: webhook-id %q, svix-id %q", d.Type, d.ID, d.SvixID)
				}
				if sc.among == nil || slices.Contains(sc.among, d.Type) {
					compareGoldenEvent(t, d)
				}
			}
		})
	}
	for _, typ := range append([]string{healthview.EventStatusChanged, healthview.EventQuarantineSetting, healthview.EventTicketLinked}, mergeQueueTypes...) {
		if !covered[typ] {
			t.Errorf("no scenario delivered %s", typ)
		}
	}
}

// compareGoldenEvent compares a delivered payload, as JSON, with
// testdata/events/<type>.json.
func compareGoldenEvent(t *testing.T, d delivery) {
	t.Helper()
	path := filepath.Join("testdata", "events", d.Type+".json")
	var got any
	if err := json.Unmarshal(d.Body, &got); err != nil {
		t.Fatalf("%s: payload is not JSON: %v\n%s", d.Type, err, d.Body)
	}
	testkit.GoldenJSON(t, path, got)
}

// TestTickDeliversWhatTheStreamMissed is a crash between writing an event
// and delivering it: the stream function never runs, and the scheduled
// function's tick delivers the event, retries a failed attempt when its
// backoff has passed (same webhook-id), and then leaves it alone.
func TestTickDeliversWhatTheStreamMissed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	// The first attempt fails; the receiver takes only ticket links, so
	// whatever else the tick's sweep writes is not sent to it.
	rc := newWhReceiver(t, http.StatusServiceUnavailable, http.StatusOK)
	rc.subscribe(t, h, "acme", healthview.EventTicketLinked)
	resp := h.call(t, "link-ticket-to-test-case", event("/flaky-tests/link-ticket-to-test-case",
		map[string]any{"test_case_id": testID, "external_ticket_id": "KAN-1", "repo": web}))
	if resp.StatusCode != 200 {
		t.Fatalf("link-ticket: %d %s", resp.StatusCode, resp.Body)
	}
	tick := func(wantDeliveries int) {
		t.Helper()
		if err := h.app.Tick(ctx); err != nil {
			t.Fatalf("tick: %v", err)
		}
		if got := rc.deliveries(); len(got) != wantDeliveries {
			t.Fatalf("after the tick at %s: %d deliveries, want %d", h.Now().Format(time.TimeOnly), len(got), wantDeliveries)
		}
	}
	tick(1) // attempt 1: 503
	h.Advance(webhooks.Backoff[0] - time.Second)
	tick(1) // not due yet
	h.Advance(time.Second)
	tick(2) // attempt 2: 200
	h.Advance(time.Hour)
	tick(2) // delivered: nothing more

	got := rc.deliveries()
	if got[0].ID != got[1].ID || got[0].VerifyErr != nil || got[1].VerifyErr != nil || !bytes.Equal(got[0].Body, got[1].Body) {
		t.Errorf("the retry differs from the first attempt: %+v", got)
	}
	pending, err := h.app.Store.PendingEvents(ctx, "acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range pending {
		if ev.Type == healthview.EventTicketLinked {
			t.Errorf("the delivered event %s is still in the outbox", ev.ID)
		}
	}
	ep := onlyEndpoint(t, h, "acme")
	log, err := h.app.Store.EndpointAttempts(ctx, "acme", ep, 10)
	if err != nil || len(log) != 2 || log[0].StatusCode != 200 || log[1].StatusCode != 503 || log[1].Error != "HTTP 503" {
		t.Errorf("delivery log: %+v %v", log, err)
	}
}

// onlyEndpoint is the id of the one webhook endpoint of org.
func onlyEndpoint(tb testing.TB, h *harness, org string) string {
	tb.Helper()
	eps, err := h.app.Store.WebhookEndpoints(context.Background(), org)
	if err != nil || len(eps) != 1 {
		tb.Fatalf("endpoints: %+v %v", eps, err)
	}
	return eps[0].ID
}
