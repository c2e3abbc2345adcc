package healthsvc_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/klauspost/compress/zstd"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
	"github.com/mainguard/mainguard/shared/testhealth/junit"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

var repo = repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}

// env is a fresh table with organization acme and its repository, a
// bundle folder and the service over them.
type env struct {
	t     *testing.T
	s     *store.Store
	svc   *healthsvc.Service
	dir   blobs.Dir
	clock *testkit.Clock
	ids   int
	mu    sync.Mutex
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := testkit.NewClock(time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC))
	s := storetest.New(t, c.Now)
	ctx := context.Background()
	if _, err := s.CreateOrg(ctx, "acme", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateRepo(ctx, "acme", repo, store.RepoSettings{}); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, s: s, dir: blobs.Dir{Root: t.TempDir()}, clock: c}
	e.svc = &healthsvc.Service{
		Store: s, Blobs: e.dir, Now: c.Now, Log: slog.New(slog.DiscardHandler),
		Viewer: healthview.Viewer{PublicAppURL: "https://app.example"},
		NewID: func() string {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.ids++
			return fmt.Sprintf("msg_%04d", e.ids)
		},
	}
	return e
}

// commit is one CI run: results on a commit of a branch.
type commit struct {
	sha, branch string
	pr          int
	at          time.Time
	files       [][]byte
	codeowners  []byte
	mutateMeta  func(*bundle.Meta)
}

// upload records an upload, stores its bundle and ingests it.
func (e *env) upload(c commit) store.Upload {
	e.t.Helper()
	ctx := context.Background()
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", e.next())
	up := store.Upload{ID: id, Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", id), CreatedAt: e.clock.Now()}
	if err := e.s.CreateUpload(ctx, up); err != nil {
		e.t.Fatal(err)
	}
	at := c.at
	if at.IsZero() {
		at = e.clock.Now()
	}
	meta := bundle.Meta{Org: "acme", BundleUploadID: id, UploadTime: at,
		Repo: bundle.Repo{Host: repo.Host, Owner: repo.Owner, Name: repo.Name, HeadSHA: c.sha, HeadBranch: c.branch}}
	if c.pr > 0 {
		meta.Envs = map[string]string{"GITHUB_REF": fmt.Sprintf("refs/pull/%d/merge", c.pr)}
	}
	if c.mutateMeta != nil {
		c.mutateMeta(&meta)
	}
	in := bundle.WriteInput{Meta: meta, Codeowners: c.codeowners}
	for i, f := range c.files {
		in.JUnit = append(in.JUnit, bundle.File{OriginalPath: fmt.Sprintf("report-%d.xml", i), Body: f})
	}
	var buf bytes.Buffer
	if err := bundle.Write(&buf, in); err != nil {
		e.t.Fatal(err)
	}
	if err := e.dir.Put(up.BlobKey, &buf, 20<<20); err != nil {
		e.t.Fatal(err)
	}
	if err := e.svc.Ingest(ctx, "acme", id); err != nil {
		e.t.Fatalf("ingest: %v", err)
	}
	got, err := e.s.GetUpload(ctx, "acme", id)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func (e *env) next() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ids++
	return e.ids
}

// report is a JUnit file of cases: "name" passes, "name!" fails with msg.
func report(file string, cases ...string) []byte {
	var b strings.Builder
	b.WriteString(`<testsuites><testsuite name="suite">`)
	for _, c := range cases {
		name, failed := strings.CutSuffix(c, "!")
		fmt.Fprintf(&b, `<testcase classname="pkg" name="%s" file="%s" time="0.1">`, name, file)
		if failed {
			fmt.Fprintf(&b, `<failure message="expected 200, got %d at 0x%x"/>`, 500+len(name), 0xc000+len(name))
		}
		b.WriteString(`</testcase>`)
	}
	b.WriteString(`</testsuite></testsuites>`)
	return []byte(b.String())
}

func (e *env) test(name string) testhealth.TestCase {
	e.t.Helper()
	id := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/web", File: "src/app_test.go", Classname: "pkg", Parent: "suite", Name: name})
	tc, err := e.s.GetTestCase(context.Background(), "acme", repo, id)
	if err != nil {
		e.t.Fatalf("test %s: %v", name, err)
	}
	return tc
}

func TestIngestCountsRunsOnceAndClassifies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// Main is green, then a PR run retries "login" (fail, then pass on the
	// same commit), then "checkout" fails on five commits of main.
	e.upload(commit{sha: "a1", branch: "main", files: [][]byte{report("src/app_test.go", "login", "checkout")},
		codeowners: []byte("/src/ @acme/web\n")})
	e.upload(commit{sha: "b2", branch: "feature", pr: 7, files: [][]byte{report("src/app_test.go", "login!", "login", "checkout")}})
	login := e.test("login")
	if login.Status.Value != testhealth.Flaky || !strings.Contains(login.Status.Reason, "failed and passed on commit b2 (feature)") {
		t.Errorf("login status: %+v", login.Status)
	}
	if got := testhealth.FailureRate(login, testhealth.Week, e.clock.Now()); got < 0.33 || got > 0.34 {
		t.Errorf("login 7d failure rate %v, want 1/3", got)
	}
	if n := testhealth.PullRequestsImpacted(login, e.clock.Now()); n != 1 {
		t.Errorf("login PRs impacted %d, want 1", n)
	}
	if got := strings.Join(login.Codeowners, ","); got != "@acme/web" {
		t.Errorf("login codeowners %q", got)
	}
	fails := testhealth.MostCommonFailures(login, 5, e.clock.Now())
	if len(fails) != 1 || fails[0].Count != 1 || !strings.HasPrefix(fails[0].Summary, "expected 200, got 505") {
		t.Errorf("login failures %+v", fails)
	}
	for i := range 5 {
		e.clock.Advance(time.Hour)
		e.upload(commit{sha: fmt.Sprintf("c%d", i), branch: "main", files: [][]byte{report("src/app_test.go", "login", "checkout!")}})
	}
	checkout := e.test("checkout")
	// Broken on the fourth commit, which settled the third (none was
	// retried).
	if checkout.Status.Value != testhealth.Broken || !strings.Contains(checkout.Status.Reason, "broken-streak: every attempt failed on the last 3 commits on main") {
		t.Errorf("checkout status: %+v", checkout.Status)
	}
	// Five failures of one message with different numbers: one cluster.
	if fails := testhealth.MostCommonFailures(checkout, 5, e.clock.Now()); len(fails) != 1 || fails[0].Count != 5 {
		t.Errorf("checkout clusters %+v", fails)
	}
	// Each status change wrote its event, in the same transaction.
	evs, err := e.s.PendingEvents(ctx, "acme", 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type+":"+strings.Split(strings.Split(ev.Payload, `"current_status":{"value":"`)[1], `"`)[0])
	}
	if got := strings.Join(types, " "); got != "test_case.status_changed:flaky test_case.status_changed:broken" {
		t.Errorf("events: %s", got)
	}
	// One pass on main resolves the streak.
	e.clock.Advance(time.Hour)
	e.upload(commit{sha: "d1", branch: "main", files: [][]byte{report("src/app_test.go", "checkout")}})
	if got := e.test("checkout").Status; got.Value != testhealth.Healthy {
		t.Errorf("checkout after a pass: %+v", got)
	}
	// Recovery: nine days on without a run, the sweep lets login go (it
	// stopped running: no evidence will come).
	e.clock.Advance(9 * 24 * time.Hour)
	if _, err := e.svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	login = e.test("login")
	if got := login.Status; got.Value != testhealth.Healthy || !strings.Contains(got.Reason, "was flaky") {
		t.Errorf("login after recovery: %+v", got)
	}
	// The health write dropped the counters that left every window (kept
	// 8 days, by whole hours and days).
	if len(login.PassedByHour)+len(login.FailedByHour)+len(login.Failures)+len(login.FailedPRs) != 0 {
		t.Errorf("stale counters kept: %v %v %v %v", login.PassedByHour, login.FailedByHour, login.Failures, login.FailedPRs)
	}
}

func TestIngestIsIdempotentPerUpload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	up := e.upload(commit{sha: "a1", branch: "main", files: [][]byte{report("src/app_test.go", "login", "login!")}})
	before := e.test("login")
	// The object-created event delivered again, and the upload re-marked as
	// if the first ingest crashed before finishing: runs are not counted twice.
	if err := e.svc.Ingest(ctx, "acme", up.ID); err != nil {
		t.Fatal(err)
	}
	after := e.test("login")
	if fmt.Sprint(after.PassedByHour, after.FailedByHour) != fmt.Sprint(before.PassedByHour, before.FailedByHour) {
		t.Errorf("counted twice: %v %v → %v %v", before.PassedByHour, before.FailedByHour, after.PassedByHour, after.FailedByHour)
	}
	// Failed runs are stored once each; passing runs are counted only.
	runs, err := e.s.FailedRunsBetween(ctx, "acme", repo, e.clock.Now().Add(-time.Hour), e.clock.Now().Add(time.Hour))
	if err != nil || len(runs) != 1 {
		t.Fatalf("failed runs: %d, %v", len(runs), err)
	}
}

func TestCrashedIngestResumesWithoutDoubleCounting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// Record half the runs of an upload by hand, as an ingest that crashed
	// after its first transaction would have; then ingest the upload.
	id := "00000000-0000-4000-8000-00000000abcd"
	files := [][]byte{report("src/app_test.go", "a", "b!", "c")}
	up := store.Upload{ID: id, Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", id), CreatedAt: e.clock.Now()}
	if err := e.s.CreateUpload(ctx, up); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	meta := bundle.Meta{Org: "acme", BundleUploadID: id, UploadTime: e.clock.Now(),
		Repo: bundle.Repo{Host: repo.Host, Owner: repo.Owner, Name: repo.Name, HeadSHA: "s1", HeadBranch: "main"}}
	if err := bundle.Write(&buf, bundle.WriteInput{Meta: meta, JUnit: []bundle.File{{Body: files[0]}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.dir.Put(up.BlobKey, &buf, 20<<20); err != nil {
		t.Fatal(err)
	}
	aID := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/web", File: "src/app_test.go", Classname: "pkg", Parent: "suite", Name: "a"})
	err := e.s.RecordRuns(ctx, testhealth.UploadRuns{Org: "acme", Repo: repo, Upload: id, At: e.clock.Now(), SHA: "s1", Branch: "main", Monitored: true},
		[]testhealth.TestRuns{{Test: testhealth.TestCase{ID: aID, Name: "a", FilePath: "src/app_test.go", Parent: "suite", Classname: "pkg"}, Runs: []testhealth.Run{{Seq: 0, Status: "passed"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Ingest(ctx, "acme", id); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][2]int{"a": {1, 0}, "b": {0, 1}, "c": {1, 0}} {
		tc := e.test(name)
		p, f := sum(tc.PassedByHour), sum(tc.FailedByHour)
		if p != want[0] || f != want[1] {
			t.Errorf("%s: %d passed %d failed, want %v", name, p, f, want)
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestConcurrentIngestsLoseNoRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const uploads = 8
	var ids []string
	for i := range uploads {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", 100+i)
		up := store.Upload{ID: id, Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", id), CreatedAt: e.clock.Now()}
		if err := e.s.CreateUpload(ctx, up); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		meta := bundle.Meta{Org: "acme", BundleUploadID: id, UploadTime: e.clock.Now(),
			Repo: bundle.Repo{Host: repo.Host, Owner: repo.Owner, Name: repo.Name, HeadSHA: fmt.Sprintf("s%d", i), HeadBranch: "main"}}
		cases := []string{"shared", "other"}
		if i%2 == 1 {
			cases = []string{"shared!", "other"}
		}
		if err := bundle.Write(&buf, bundle.WriteInput{Meta: meta, JUnit: []bundle.File{{Body: report("src/app_test.go", cases...)}}}); err != nil {
			t.Fatal(err)
		}
		if err := e.dir.Put(up.BlobKey, &buf, 20<<20); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	var wg sync.WaitGroup
	errc := make(chan error, uploads)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- e.svc.Ingest(ctx, "acme", id)
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	shared := e.test("shared")
	if p, f := sum(shared.PassedByHour), sum(shared.FailedByHour); p != uploads/2 || f != uploads/2 {
		t.Errorf("shared: %d passed, %d failed; want %d each", p, f, uploads/2)
	}
	if p := sum(e.test("other").PassedByHour); p != uploads {
		t.Errorf("other: %d passed, want %d", p, uploads)
	}
}

func TestBadBundlesAreRecordedAsFailedAndChangeNothing(t *testing.T) {
	t.Parallel()
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(testkit.JUnitDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name   string
		put    func(e *env, key string) []byte // raw bytes to store, nil: use the bundle
		c      commit
		reason string
	}{
		{name: "not zstd", put: func(*env, string) []byte { return []byte("just some text, not a bundle") }, reason: "zstd"},
		{name: "zstd but not tar", put: func(*env, string) []byte { return zstdOf(t, []byte(strings.Repeat("x", 2000))) }, reason: "tar"},
		{name: "no meta.json", put: func(*env, string) []byte {
			return tarZstd(t, []tarFile{{name: "junit/0", body: report("src/app_test.go", "good")}})
		}, reason: "meta.json"},
		{name: "2 GB compression bomb", put: func(_ *env, key string) []byte { return bomb(t, key) }, reason: "junit/0"},
		{name: "other organization", c: commit{mutateMeta: func(m *bundle.Meta) { m.Org = "other" }}, reason: `names organization "other"`},
		{name: "other repository", c: commit{mutateMeta: func(m *bundle.Meta) { m.Repo.Name = "api" }}, reason: "names repository github.com/acme/api"},
		{name: "other upload id", c: commit{mutateMeta: func(m *bundle.Meta) { m.BundleUploadID = "11111111-1111-4111-8111-111111111111" }}, reason: "names upload"},
		{name: "external entity", c: commit{files: [][]byte{fixture("xxe-external-entity.xml")}}, reason: "junit/0"},
		{name: "truncated", c: commit{files: [][]byte{report("src/app_test.go", "good"), fixture("corrupt-truncated.xml")}}, reason: "junit/1"},
		{name: "not XML", c: commit{files: [][]byte{[]byte("PK\x03\x04 a zip file")}}, reason: "junit/0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			if c.c.files == nil {
				c.c.files = [][]byte{report("src/app_test.go", "good")}
			}
			c.c.sha, c.c.branch = "s1", "main"
			var up store.Upload
			if c.put != nil {
				id := "00000000-0000-4000-8000-000000000bad"
				up = store.Upload{ID: id, Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", id), CreatedAt: e.clock.Now()}
				if err := e.s.CreateUpload(ctx, up); err != nil {
					t.Fatal(err)
				}
				if err := e.dir.Put(up.BlobKey, bytes.NewReader(c.put(e, up.BlobKey)), 20<<20); err != nil {
					t.Fatal(err)
				}
				if err := e.svc.Ingest(ctx, "acme", id); err != nil {
					t.Fatal(err)
				}
				up, _ = e.s.GetUpload(ctx, "acme", id)
			} else {
				up = e.upload(c.c)
			}
			t.Logf("refused: %s", up.Reason)
			if up.State != store.UploadFailed || !strings.Contains(up.Reason, c.reason) {
				t.Errorf("upload %s %q, want FAILED with %q", up.State, up.Reason, c.reason)
			}
			id := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/web", File: "src/app_test.go", Classname: "pkg", Parent: "suite", Name: "good"})
			if _, err := e.s.GetTestCase(ctx, "acme", repo, id); !errs.Is(err, errs.NotFound) {
				t.Errorf("a refused upload recorded a test: %v", err)
			}
		})
	}
}

// TestEveryFixtureIngests sends each real report of the fixtures folder in
// its own upload: the good ones are ingested with the counts the parser
// gives, the two bad ones are refused with a reason.
func TestEveryFixtureIngests(t *testing.T) {
	t.Parallel()
	dir := testkit.JUnitDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	n := 0
	for _, ent := range entries {
		if !strings.HasSuffix(ent.Name(), ".xml") {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want, perr := junit.Parse(bytes.NewReader(body), junit.Limits{}, nil)
		up := e.upload(commit{sha: "f" + ent.Name(), branch: "main", files: [][]byte{body}})
		switch {
		case perr != nil:
			if up.State != store.UploadFailed || up.Reason == "" {
				t.Errorf("%s: %s %q, want refused", ent.Name(), up.State, up.Reason)
			}
		case up.State != store.UploadIngested || up.Runs != want.Runs || up.Passed != want.Passed ||
			up.Failed != want.Failed+want.Errored || up.Skipped != want.Skipped:
			t.Errorf("%s: %s %q runs %d/%d/%d/%d, want %d/%d/%d/%d", ent.Name(), up.State, up.Reason,
				up.Runs, up.Passed, up.Failed, up.Skipped, want.Runs, want.Passed, want.Failed+want.Errored, want.Skipped)
		}
		n++
	}
	if n != 42 {
		t.Errorf("%d fixtures, want 42", n)
	}
}

func zstdOf(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type tarFile struct {
	name string
	body []byte
}

// tarZstd builds a bundle by hand, so that it can be wrong in ways
// bundle.Write refuses to be.
func tarZstd(t testing.TB, files []tarFile) []byte {
	t.Helper()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return zstdOf(t, tb.Bytes())
}

// bomb is a bundle whose junit/0 decompresses to 2 GB of spaces: a 16 MiB
// zstd frame repeated (a multi-frame stream is one stream to a decoder),
// after a good meta.json for the upload of key.
func bomb(t testing.TB, key string) []byte {
	t.Helper()
	_, id, err := blobs.ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"version":"1","org":"acme","repo":{"repo":{"host":"github.com","owner":"acme","name":"web"},"repo_head_sha":"s1","repo_head_branch":"main"},"bundle_upload_id":%q,"upload_time_epoch":1784770370}`, id)
	const declared, chunk = 2 << 30, 16 << 20
	var head bytes.Buffer
	tw := tar.NewWriter(&head) // never closed: the body follows in other frames
	for _, h := range []*tar.Header{
		{Name: "meta.json", Mode: 0o644, Size: int64(len(meta)), Typeflag: tar.TypeReg},
		{Name: "junit/0", Mode: 0o644, Size: declared, Typeflag: tar.TypeReg},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Name == "meta.json" {
			_, _ = tw.Write([]byte(meta))
		}
	}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	out := zw.EncodeAll(head.Bytes(), nil)
	frame := zw.EncodeAll(bytes.Repeat([]byte{' '}, chunk), nil)
	for range declared / chunk {
		out = append(out, frame...)
	}
	return append(out, zw.EncodeAll(make([]byte, 1024), nil)...)
}

// TestTestBranchUploadsKeepTheirFailedTests: an upload of a merge-queue
// test branch keeps the tests that failed in it (not those that passed on a
// retry within it) and is found by its sha from the time given; an upload
// of another branch keeps its failed tests too but is not indexed (no
// index write to pay), nor is a test-branch upload without failures, or
// one refused.
func TestTestBranchUploadsKeepTheirFailedTests(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const sha = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	since := e.clock.Now()
	up := e.upload(commit{sha: sha, branch: "trunk-merge/pr-7/0f1e", files: [][]byte{
		report("src/app_test.go", "checkout!", "retried!", "retried", "fine"),
	}})
	want := []store.FailedTestRef{{ID: e.test("checkout").ID, Name: "checkout", Failed: 1}}
	if diff := cmp.Diff(up.FailedTests, want); diff != "" || up.FailedTestsTotal != 1 {
		t.Errorf("failed tests of the upload (-got +want):\n%s (total %d)", diff, up.FailedTestsTotal)
	}
	long := strings.Repeat("é", 300) // 600 bytes
	if up := e.upload(commit{sha: "7c7c", branch: "trunk-merge/pr-9/5e6f", files: [][]byte{report("src/app_test.go", long+"!")}}); len(up.FailedTests) != 1 ||
		up.FailedTests[0].Name != strings.Repeat("é", 128) {
		t.Errorf("a long failed test's name is kept as %v", up.FailedTests)
	}
	e.upload(commit{sha: sha, branch: "feature/x", files: [][]byte{report("src/app_test.go", "checkout!")}})
	e.upload(commit{sha: sha, branch: "trunk-merge/pr-7/1a2b", files: [][]byte{report("src/app_test.go", "checkout")}})
	got, err := e.s.TestBranchUploads(ctx, "acme", repo, sha, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != up.ID {
		t.Errorf("uploads of %s: %v, want only the failed test-branch one %s", sha[:7], got, up.ID)
	}
	e.clock.Advance(time.Minute)
	if got, _ := e.s.TestBranchUploads(ctx, "acme", repo, sha, e.clock.Now()); len(got) != 0 {
		t.Errorf("uploads since a minute after it: %v, want none", got)
	}
	if got, _ := e.s.TestBranchUploads(ctx, "other", repo, sha, since); len(got) != 0 {
		t.Errorf("another organization sees %v", got)
	}
	refused := e.upload(commit{sha: "6b6b", branch: "trunk-merge/pr-8/3c4d", files: [][]byte{[]byte("not XML")}})
	if got, _ := e.s.TestBranchUploads(ctx, "acme", repo, "6b6b", since); refused.State != store.UploadFailed || len(got) != 0 {
		t.Errorf("a refused upload (%s) is evidence: %v", refused.State, got)
	}
}

// TestHealthWritesOnlyWhatMatters: classifying again writes nothing when
// only the evidence moved (a read states it as of then) or a few counters
// left every window; it writes once PruneBatch of them have.
func TestHealthWritesOnlyWhatMatters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	now := e.clock.Now()
	tc := testhealth.TestCase{Org: "acme", Repo: repo, ID: "00000000-0000-5000-8000-00000000aaaa", Name: "t", FirstSeen: now.Add(-10 * testhealth.Day),
		Status:                testhealth.TestStatus{Value: testhealth.Flaky, Reason: "failure-rate: failure rate 50.0% (stale)", Timestamp: now.Add(-time.Hour)},
		LastRun:               now,
		MonitoredPassedByHour: map[string]int{testhealth.HourKey(now): 20}, MonitoredFailedByHour: map[string]int{testhealth.HourKey(now): 5},
		PassedByHour: map[string]int{testhealth.HourKey(now): 20}, FailedByHour: map[string]int{testhealth.HourKey(now): 5},
	}
	old := now.Add(-9 * testhealth.Day)
	for h := range 10 { // 10 stale hours: 20 counters, below PruneBatch
		tc.PassedByHour[testhealth.HourKey(old.Add(-time.Duration(h)*time.Hour))] = 1
		tc.MonitoredPassedByHour[testhealth.HourKey(old.Add(-time.Duration(h)*time.Hour))] = 1
	}
	if err := e.s.PutTestCase(ctx, tc); err != nil {
		t.Fatal(err)
	}
	settings := testhealth.SettingsOf(testhealth.HealthSettings{}, "main")
	reclassify := func() testhealth.TestCase {
		t.Helper()
		if err := e.svc.Reclassify(ctx, "acme", repo, settings, nil, []string{tc.ID}); err != nil {
			t.Fatal(err)
		}
		return e.testByID(tc.ID)
	}
	got := reclassify()
	if got.Rev != 0 || got.Status.Reason != tc.Status.Reason || len(got.PassedByHour) != 11 {
		t.Errorf("written though only the evidence moved and 20 counters went stale: rev %d, reason %q, %d hours", got.Rev, got.Status.Reason, len(got.PassedByHour))
	}
	if st := testhealth.Status(got, settings, now); st.Value != testhealth.Flaky || !strings.HasPrefix(st.Reason, "failure-rate: failure rate 20% over 25 runs in 7 days on main; recovery: ") {
		t.Errorf("read as %+v, want the evidence as of now", st)
	}
	for h := range 20 { // 40 more: past PruneBatch
		tc.PassedByHour[testhealth.HourKey(old.Add(-time.Duration(10+h)*time.Hour))] = 1
		tc.MonitoredPassedByHour[testhealth.HourKey(old.Add(-time.Duration(10+h)*time.Hour))] = 1
	}
	if err := e.s.PutTestCase(ctx, tc); err != nil {
		t.Fatal(err)
	}
	if got := reclassify(); got.Rev != 1 || len(got.PassedByHour) != 1 || len(got.MonitoredPassedByHour) != 1 {
		t.Errorf("after 60 stale counters: rev %d, %d hours left, %d monitored", got.Rev, len(got.PassedByHour), len(got.MonitoredPassedByHour))
	}
}

func (e *env) testByID(id string) testhealth.TestCase {
	e.t.Helper()
	tc, err := e.s.GetTestCase(context.Background(), "acme", repo, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return tc
}

// TestPassOnRetryAcrossUploads: a test that fails in one upload of a
// commit and passes in another is flaky, in either order; one that fails on
// a commit and passes on another is not. The uploads' batch records are
// the evidence (no item per test and commit).
func TestPassOnRetryAcrossUploads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Passing tests beside, so that no upload is set aside by the
	// infrastructure guard (more than 80% failed).
	with := func(cases ...string) [][]byte {
		return [][]byte{report("src/app_test.go", append(cases, "a", "b", "c", "d")...)}
	}
	e.upload(commit{sha: "x1", branch: "main", files: with("flip!", "steady!")})
	e.clock.Advance(time.Minute)
	e.upload(commit{sha: "x1", branch: "main", files: with("flip", "flop")})
	e.clock.Advance(time.Minute)
	e.upload(commit{sha: "x2", branch: "feature", pr: 4, files: with("flop", "steady")})
	e.clock.Advance(time.Minute)
	e.upload(commit{sha: "x2", branch: "feature", pr: 4, files: with("flop!")})
	for name, sha := range map[string]string{"flip": "x1 (main)", "flop": "x2 (feature)"} {
		if st := e.test(name).Status; st.Value != testhealth.Flaky || !strings.Contains(st.Reason, "failed and passed on commit "+sha) {
			t.Errorf("%s: %+v, want flaky on %s", name, st, sha)
		}
	}
	if v := testhealth.Previous(e.test("steady")); v != testhealth.Healthy {
		t.Errorf("steady, failed on x1 and passed on x2: %s", v)
	}
}

// crashingDB fails every UpdateItem after the first n, as a store would
// for an ingest whose process died.
type crashingDB struct {
	store.DB
	n atomic.Int64
}

func (c *crashingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if c.n.Add(-1) < 0 {
		return nil, errors.New("the process died")
	}
	return c.DB.UpdateItem(ctx, in, o...)
}

// crashedIngest is an ingest of 250 tests cut off after its first
// batches, as by its process's death: it returns the upload, left CREATED
// under the dead ingest's lease, its tests, and the passes counted of them.
func crashedIngest(t *testing.T, e *env) (id string, cases []string, counted func() int) {
	t.Helper()
	ctx := context.Background()
	for i := range 250 {
		cases = append(cases, fmt.Sprintf("case%03d", i))
	}
	id = "00000000-0000-4000-8000-00000000c0de"
	up := store.Upload{ID: id, Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", id), CreatedAt: e.clock.Now()}
	if err := e.s.CreateUpload(ctx, up); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	meta := bundle.Meta{Org: "acme", BundleUploadID: id, UploadTime: e.clock.Now(),
		Repo: bundle.Repo{Host: repo.Host, Owner: repo.Owner, Name: repo.Name, HeadSHA: "s1", HeadBranch: "main"}}
	if err := bundle.Write(&buf, bundle.WriteInput{Meta: meta, JUnit: []bundle.File{{Body: report("src/app_test.go", cases...)}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.dir.Put(up.BlobKey, &buf, 20<<20); err != nil {
		t.Fatal(err)
	}
	crashing := &crashingDB{DB: storetest.Client(t)}
	crashing.n.Store(120) // the lease, then about one batch
	svc := *e.svc
	svc.Store = store.New(crashing, e.s.Table(), e.clock.Now)
	svc.Workers = 1
	if err := svc.Ingest(ctx, "acme", id); err == nil {
		t.Fatal("the ingest did not fail")
	}
	counted = func() int {
		n := 0
		for _, c := range cases {
			n += sum(e.test(c).PassedByHour)
		}
		return n
	}
	tests := func() (n int) {
		for _, c := range cases {
			if _, err := e.s.GetTestCase(ctx, "acme", repo, testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/web", File: "src/app_test.go", Classname: "pkg", Parent: "suite", Name: c})); err == nil {
				n++
			}
		}
		return n
	}
	if n := tests(); n == 0 || n == len(cases) {
		t.Fatalf("%d of %d tests recorded before the crash; want some", n, len(cases))
	}
	if got, _ := e.s.GetUpload(ctx, "acme", id); got.State != store.UploadCreated || got.Lease == "" {
		t.Fatalf("after the crash: %s, lease %q", got.State, got.Lease)
	}
	return id, cases, counted
}

// unusedUpload is an upload whose bundle never came.
func unusedUpload(t *testing.T, e *env) store.Upload {
	t.Helper()
	up := store.Upload{ID: "00000000-0000-4000-8000-00000000dead", Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", "00000000-0000-4000-8000-00000000dead"), CreatedAt: e.clock.Now()}
	if err := e.s.CreateUpload(context.Background(), up); err != nil {
		t.Fatal(err)
	}
	return up
}

// TestCrashedIngestIsResumed cuts an ingest of 250 tests off after its
// first batches: the upload stays CREATED under a lease, which the
// scheduler leaves alone while it runs and takes over once it lapsed,
// resuming past the recorded batches so that every test counts once. An
// address never used expires.
func TestCrashedIngestIsResumed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id, cases, counted := crashedIngest(t, e)
	unused := unusedUpload(t, e)
	// While the lease runs, nobody takes the upload over.
	if n, err := e.svc.ResumeUploads(ctx, 4); err != nil || n != 0 {
		t.Fatalf("resumed %d (%v) while the lease ran", n, err)
	}
	if err := e.svc.Ingest(ctx, "acme", id); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.s.GetUpload(ctx, "acme", id); got.State != store.UploadCreated {
		t.Fatalf("a second ingest took a held upload: %s", got.State)
	}
	e.clock.Advance(healthsvc.LeaseTTL + store.ResumeGrace + time.Minute)
	if n, err := e.svc.ResumeUploads(ctx, 4); err != nil || n != 1 {
		t.Fatalf("resumed %d, %v; want the crashed upload", n, err)
	}
	if got, _ := e.s.GetUpload(ctx, "acme", id); got.State != store.UploadIngested || got.Runs != len(cases) {
		t.Fatalf("after resuming: %s with %d runs", got.State, got.Runs)
	}
	if n := counted(); n != len(cases) {
		t.Errorf("%d passes counted for %d runs", n, len(cases))
	}
	// The unused address expires once it is due (half an hour after it was
	// created, by default).
	e.clock.Advance(30 * time.Minute)
	if n, err := e.svc.ResumeUploads(ctx, 4); err != nil || n != 1 {
		t.Fatalf("resumed %d, %v; want the unused upload", n, err)
	}
	if got, _ := e.s.GetUpload(ctx, "acme", unused.ID); got.State != store.UploadExpired || got.Reason == "" {
		t.Errorf("unused upload: %s %q, want EXPIRED with a reason", got.State, got.Reason)
	}
	if n, _ := e.svc.ResumeUploads(ctx, 4); n != 0 {
		t.Errorf("finished uploads are due again: %d", n)
	}
}

// TestInterruptedIngestIsTakenOver: the local server, at start, takes
// over at once the ingests its killed predecessor left, under their
// leases, past the batches they recorded (Interrupted, TakeOver); an
// upload whose ingest never started is none of them.
func TestInterruptedIngestIsTakenOver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id, cases, counted := crashedIngest(t, e)
	unusedUpload(t, e) // no ingest started: not interrupted
	ups, err := e.svc.Interrupted(ctx)
	if err != nil || len(ups) != 1 || ups[0].ID != id {
		t.Fatalf("interrupted: %v, %v; want the crashed upload alone", ups, err)
	}
	if err := e.svc.TakeOver(ctx, ups[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.s.GetUpload(ctx, "acme", id); got.State != store.UploadIngested || got.Runs != len(cases) {
		t.Fatalf("after the takeover: %s with %d runs", got.State, got.Runs)
	}
	if n := counted(); n != len(cases) {
		t.Errorf("%d passes counted for %d runs", n, len(cases))
	}
}

// TestDeployedResumeAnnouncesTheBundleAgain: with the bundles in S3, a due
// upload is not ingested by the scheduled function but announced again
// (its bundle copied onto itself, an object-created event for the ingest
// function); one without a bundle expires.
func TestDeployedResumeAnnouncesTheBundleAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	bucket := blobs.NewS3(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}, "mg-bundles", testkit.S3(t, "mg-bundles")+"/")
	svc := *e.svc
	svc.Blobs = bucket
	stored := store.Upload{ID: "00000000-0000-4000-8000-0000000000aa", Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", "00000000-0000-4000-8000-0000000000aa"), CreatedAt: e.clock.Now()}
	unused := store.Upload{ID: "00000000-0000-4000-8000-0000000000bb", Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", "00000000-0000-4000-8000-0000000000bb"), CreatedAt: e.clock.Now()}
	for _, up := range []store.Upload{stored, unused} {
		if err := e.s.CreateUpload(ctx, up); err != nil {
			t.Fatal(err)
		}
	}
	addr, err := bucket.PresignPut(ctx, stored.BlobKey, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, addr, strings.NewReader("the bundle"))
	req.Header.Set("Content-Type", "application/octet-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %v %v", resp, err)
	}
	e.clock.Advance(31 * time.Minute)
	if n, err := svc.ResumeUploads(ctx, 4); err != nil || n != 2 {
		t.Fatalf("resumed %d, %v; want both", n, err)
	}
	if got, _ := e.s.GetUpload(ctx, "acme", stored.ID); got.State != store.UploadCreated {
		t.Errorf("the stored upload was ingested by the scheduled function: %s", got.State)
	}
	if rc, err := bucket.Open(ctx, stored.BlobKey); err != nil {
		t.Errorf("the bundle after its announcement: %v", err)
	} else {
		rc.Close()
	}
	if got, _ := e.s.GetUpload(ctx, "acme", unused.ID); got.State != store.UploadExpired {
		t.Errorf("the unused upload: %s, want EXPIRED", got.State)
	}
}
