package healthsvc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/billing"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
	"github.com/mainguard/mainguard/shared/testhealth/codeowners"
	"github.com/mainguard/mainguard/shared/testhealth/failures"
	"github.com/mainguard/mainguard/shared/testhealth/junit"
)

// Ingest records the bundle of an upload: once, whatever how often it is
// called for the same upload (the object-created event may be delivered
// twice, and a crashed ingest is simply run again). The bundle is read
// twice: first to check all of it, so that a bad bundle is refused without
// any of its runs recorded; then to record its runs, a batch of tests at a
// time (a batch already recorded by an interrupted ingest is skipped, a
// batch half recorded counts each test once: store.RecordBatch). Once all
// are in, a test that failed here and passed in another upload of the
// commit, or the other way round, is flaky by pass-on-retry. A refused bundle is recorded as a failed upload with the reason and
// Ingest returns nil: there is nothing to retry. An error means the store or
// the bundle store failed, and the ingest should run again.
func (s *Service) Ingest(ctx context.Context, org, uploadID string) error {
	return s.ingest(ctx, org, uploadID, leaseName())
}

// ingest is Ingest under the lease named lease.
func (s *Service) ingest(ctx context.Context, org, uploadID, lease string) error {
	ctx, bill := billing.WithBill(ctx) // filled only when the store's client is a billing.Meter (DDB_BILL)
	up, claimed, err := s.claim(ctx, org, uploadID, lease)
	if err != nil || !claimed {
		return err
	}
	repo, err := s.Store.GetRepo(ctx, org, up.Repo)
	if err != nil {
		return err
	}
	settings := repo.Settings()

	check, err := s.check(ctx, up)
	if errs.Is(err, errs.NotFound) {
		return s.end(ctx, up, store.UploadExpired, expiredReason)
	}
	var refused *bundle.Error
	if errors.As(err, &refused) {
		return s.end(ctx, up, store.UploadFailed, refused.Reason)
	}
	if err != nil {
		return err
	}
	at := uploadTime(check.meta, s.Now())
	owners, err := s.codeowners(ctx, up, check, at)
	if err != nil {
		return err
	}
	cases, failedCases := check.guard.Counts()
	runs := uploadRuns(check.meta, at, settings, settings.Guarded(cases, failedCases))
	runs.Org, runs.Repo, runs.Upload = org, repo.Ref, uploadID
	check.failed = check.guard.FailedIDs()
	sum, rec, err := s.record(ctx, up, lease, runs, settings, owners, check)
	if err != nil {
		return err
	}
	if !runs.Guarded && runs.SHA != "" && len(check.failed) < maxFailedIDs {
		if err := s.passOnRetry(ctx, runs, settings, check.failed); err != nil {
			return err
		}
	}
	up.Files, up.Tests, up.Runs = sum.Files, rec.tests, sum.Runs
	up.Passed, up.Failed, up.Skipped = sum.Passed, sum.Failed+sum.Errored, sum.Skipped
	up.FailedTests, up.FailedTestsTotal = rec.failedTests()
	up.GuardCases, up.GuardFailed = cases, failedCases
	if err := s.finish(ctx, up, runs, settings); err != nil {
		return err
	}
	attrs := []any{"org", org, "upload", uploadID, "runs", sum.Runs, "guarded", runs.Guarded, "cases", cases, "failed_cases", failedCases}
	if t := bill.Total(); t.Calls > 0 {
		attrs = append(attrs, "ddb_billed_read", t.Read, "ddb_billed_write", t.Write+t.IndexWrite)
	}
	s.Log.Info("upload ingested", attrs...)
	return nil
}

// claim reads an upload and takes its lease: claimed false when there is
// nothing to do. One ingest at a time: a second delivery of the event
// while the first runs leaves it alone; a lease that lapsed (a crash, a
// timeout) is taken over, and the batches recorded under it are skipped.
func (s *Service) claim(ctx context.Context, org, uploadID, lease string) (up store.Upload, claimed bool, err error) {
	up, err = s.Store.GetUpload(ctx, org, uploadID)
	if err != nil {
		return up, false, err
	}
	if up.State != store.UploadCreated {
		return up, false, nil // done already
	}
	if err := s.Store.ClaimUpload(ctx, org, uploadID, lease, s.Now().Add(LeaseTTL)); err != nil {
		if errs.Is(err, errs.Conflict) {
			s.Log.InfoContext(ctx, "upload being ingested by another run", "org", org, "upload", uploadID)
			return up, false, nil
		}
		return up, false, err
	}
	return up, true, nil
}

// uploadRuns is what the runs of an upload share, as its meta tells:
// when and on what they ran, and whether they are monitored (on a
// monitored branch, not guarded). The caller names the upload.
func uploadRuns(meta bundle.Meta, at time.Time, settings testhealth.Settings, guarded bool) testhealth.UploadRuns {
	return testhealth.UploadRuns{
		At:  at,
		SHA: meta.Repo.HeadSHA, Branch: meta.Repo.HeadBranch, PR: meta.PullRequest(),
		Monitored: !guarded && testhealth.MatchBranch(settings.Branches, meta.Repo.HeadBranch),
		Guarded:   guarded,
	}
}

// record reads the bundle a second time and records its runs, a batch of
// tests at a time (skipping the batches recorded already), renewing the
// lease as batches go out.
func (s *Service) record(ctx context.Context, up store.Upload, lease string, runs testhealth.UploadRuns, settings testhealth.Settings, owners *codeowners.File, check checked) (bundle.Summary, *recorder, error) {
	var onCommit map[string]testhealth.CommitSoFar
	if runs.Monitored && runs.SHA != "" && len(check.failed) > 0 {
		// What the commit's earlier uploads showed of the tests failing
		// here: the broken streak counts a commit once.
		var err error
		if onCommit, err = s.Store.CommitSoFar(ctx, runs, check.failed); err != nil {
			return bundle.Summary{}, nil, err
		}
	}
	workers := s.Workers
	if workers <= 0 {
		workers = 8
	}
	done, err := s.Store.DoneBatches(ctx, runs)
	if err != nil {
		return bundle.Summary{}, nil, err
	}
	rec := newRecorder(ctx, s, runs, settings, owners, check.meta, workers, check.failed, done)
	rec.onCommit = onCommit
	rec.renew = func() {
		// Renewed as batches go out; a renewal that fails leaves the
		// ingest going, which stays correct (batches count once) if
		// another run takes over.
		if err := s.Store.ClaimUpload(ctx, runs.Org, runs.Upload, lease, s.Now().Add(LeaseTTL)); err != nil {
			s.Log.WarnContext(ctx, "upload lease not renewed", "org", runs.Org, "upload", runs.Upload, "err", err)
		}
	}
	rec.renewed = s.Now()
	sum, err := s.read(ctx, up, bundle.Handler{Run: rec.add})
	if err == nil {
		err = rec.close()
	} else {
		rec.abort()
	}
	return sum, rec, err
}

// passOnRetry reclassifies the tests that failed here and passed in
// another upload of the commit, or the other way round: pass-on-retry
// across uploads. Looked for once this upload's batches are recorded, so
// that of two uploads of a commit ingested at once, the later sees the
// earlier.
func (s *Service) passOnRetry(ctx context.Context, runs testhealth.UploadRuns, settings testhealth.Settings, failed map[string]bool) error {
	commits, err := s.Store.CommitEvidence(ctx, runs, failed)
	if err != nil || len(commits) == 0 {
		return err
	}
	ids := make([]string, 0, len(commits))
	for id := range commits {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return s.Reclassify(ctx, runs.Org, runs.Repo, settings, commits, ids)
}

// finish records the upload ingested, with what its runs share, and
// posts its check run.
func (s *Service) finish(ctx context.Context, up store.Upload, runs testhealth.UploadRuns, settings testhealth.Settings) error {
	up.State = store.UploadIngested
	up.SHA, up.Branch, up.PR = runs.SHA, runs.Branch, runs.PR
	up.RunsAt, up.Guarded = runs.At, runs.Guarded
	// The merge queue reads the failures of its test branches' uploads by
	// their commit: only those are indexed.
	up.Evidence = strings.HasPrefix(runs.Branch, repository.TestBranchPrefix)
	if err := ignoreDone(s.Store.FinishUpload(ctx, up)); err != nil {
		return err
	}
	s.postCheckRun(ctx, up, settings)
	return nil
}

// expiredReason is why an upload ended EXPIRED.
const expiredReason = "no bundle was uploaded before the upload address expired"

// LeaseTTL is how long an ingest holds its upload between renewals (it
// renews every third of it): a crashed ingest's upload is resumed by the
// scheduler once the lease has lapsed and store.ResumeGrace passed.
const LeaseTTL = 5 * time.Minute

// leaseName names one ingest run.
func leaseName() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ResumeUploads ingests, for every organization, the uploads due (at most
// perOrg of each): an address that expired unused ends EXPIRED, a bundle
// whose event was lost is ingested, an ingest that crashed is resumed past
// the batches it recorded. The scheduled tick calls it.
func (s *Service) ResumeUploads(ctx context.Context, perOrg int32) (int, error) {
	orgs, err := s.Store.ListOrgs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, org := range orgs {
		due, err := s.Store.DueUploads(ctx, org, s.Now(), perOrg)
		if err != nil {
			return n, err
		}
		for _, up := range due {
			if err := s.resume(ctx, up); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// Interrupted lists, for every organization, the uploads whose ingest
// started and never finished: the unfinished ones that hold a lease,
// lapsed or not (at most maxInterrupted of each organization, oldest due
// first; any beyond are resumed by ResumeUploads once due).
func (s *Service) Interrupted(ctx context.Context) ([]store.Upload, error) {
	orgs, err := s.Store.ListOrgs(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.Upload
	for _, org := range orgs {
		// Every unfinished upload is due by the end of time.
		pending, err := s.Store.DueUploads(ctx, org, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), maxInterrupted)
		if err != nil {
			return nil, err
		}
		for _, up := range pending {
			if up.Lease != "" {
				out = append(out, up)
			}
		}
	}
	return out, nil
}

// maxInterrupted bounds the unfinished uploads Interrupted looks at in one
// organization: one page of the pending index.
const maxInterrupted = 1000

// TakeOver ingests an interrupted upload (one of Interrupted's) now, under
// the lease its ingest held, so neither the lease nor the upload's due
// time holds it back; the batches that ingest recorded are skipped. Only
// for a caller that knows the ingest that held the lease has ended (the
// local server at start-up: `mainguard serve`); were it still running, two
// would run under one lease, each correct (a batch counts once) but one in
// vain. Deployed, no function knows that: ResumeUploads waits for the
// lease to lapse.
func (s *Service) TakeOver(ctx context.Context, up store.Upload) error {
	s.Log.InfoContext(ctx, "taking over an interrupted ingest", "org", up.Org, "upload", up.ID)
	return s.ingest(ctx, up.Org, up.ID, up.Lease)
}

// toucher is a bundle store that can announce a stored bundle again (S3:
// a copy onto itself is a new object-created event).
type toucher interface {
	Touch(ctx context.Context, key string) error
}

// resume has a due upload ingested: deployed, by announcing its bundle
// again, so that the ingest function (with its 15 minutes) runs, not the
// scheduled one; locally, here and now. No bundle: the address expired
// unused.
func (s *Service) resume(ctx context.Context, up store.Upload) error {
	t, ok := s.Blobs.(toucher)
	if !ok {
		s.Log.InfoContext(ctx, "resuming upload", "org", up.Org, "upload", up.ID)
		return s.Ingest(ctx, up.Org, up.ID)
	}
	err := t.Touch(ctx, up.BlobKey)
	if errs.Is(err, errs.NotFound) {
		return s.end(ctx, up, store.UploadExpired, expiredReason)
	}
	if err == nil {
		s.Log.InfoContext(ctx, "upload announced again for its ingest", "org", up.Org, "upload", up.ID)
	}
	return err
}

// Refuse records an upload as failed with reason, when its bundle will
// never be read (too large to store): nothing of it is recorded.
func (s *Service) Refuse(ctx context.Context, org, uploadID, reason string) error {
	up, err := s.Store.GetUpload(ctx, org, uploadID)
	if err != nil {
		return err
	}
	return s.end(ctx, up, store.UploadFailed, reason)
}

// end finishes an upload of which nothing is recorded, FAILED or EXPIRED,
// with the reason.
func (s *Service) end(ctx context.Context, up store.Upload, state, reason string) error {
	up.State, up.Reason = state, reason
	s.Log.InfoContext(ctx, "upload ended", "org", up.Org, "upload", up.ID, "state", state, "reason", reason)
	return ignoreDone(s.Store.FinishUpload(ctx, up))
}

// ignoreDone treats "already finished" as success: a concurrent ingest of
// the same upload finished it.
func ignoreDone(err error) error {
	if errs.Is(err, errs.Conflict) {
		return nil
	}
	return err
}

// checked is what the first reading of a bundle learned.
type checked struct {
	meta       bundle.Meta
	codeowners []byte
	// guard counts the test cases and those that failed without passing
	// on a retry inside the upload, for the infrastructure guard, and
	// remembers the tests with a failed run, up to maxFailedIDs.
	guard *testhealth.GuardCount
	// failed holds the ids of the tests with a failed run (any attempt),
	// up to maxFailedIDs: what pass-on-retry looks for on the commit.
	failed map[string]bool
}

// maxFailedIDs bounds the failed tests an ingest remembers for
// pass-on-retry; an upload where more failed looks for no evidence across
// uploads (within it, a failure and a pass are still seen when they share
// the first maxFailedIDs).
const maxFailedIDs = 200_000

// check reads the whole bundle without recording anything: the meta must
// name this organization, repository and upload, and every file must parse.
func (s *Service) check(ctx context.Context, up store.Upload) (checked, error) {
	c := checked{guard: testhealth.NewGuardCount(maxFailedIDs)}
	_, err := s.read(ctx, up, bundle.Handler{
		Meta: func(m bundle.Meta) error {
			if !strings.EqualFold(m.Org, up.Org) {
				return &bundle.Error{Reason: fmt.Sprintf("meta.json names organization %q, but the upload belongs to %q", m.Org, up.Org)}
			}
			ref := repository.Ref{Host: m.Repo.Host, Owner: m.Repo.Owner, Name: m.Repo.Name}
			if ref.Key() != up.Repo.Key() {
				return &bundle.Error{Reason: fmt.Sprintf("meta.json names repository %s, but the upload was created for %s", ref, up.Repo)}
			}
			if m.BundleUploadID != "" && !strings.EqualFold(m.BundleUploadID, up.ID) {
				return &bundle.Error{Reason: fmt.Sprintf("meta.json names upload %s, but the bundle was sent for upload %s", m.BundleUploadID, up.ID)}
			}
			c.meta = m
			return nil
		},
		Run: func(_ string, r junit.Run) error {
			failed := r.Status == junit.Failed || r.Status == junit.Errored
			passed := r.Status == junit.Passed
			if failed || passed {
				c.guard.Add(strings.ToLower(testID(c.meta, r)), r.Attempt, passed, failed)
			}
			return nil
		},
		Codeowners: func(text []byte) error {
			c.codeowners = bytes.Clone(text)
			return nil
		},
	})
	return c, err
}

// read runs one pass over the upload's bundle. A Handler's *bundle.Error
// comes back as itself, so the caller can tell a refusal from a failure.
func (s *Service) read(ctx context.Context, up store.Upload, h bundle.Handler) (bundle.Summary, error) {
	body, err := s.Blobs.Open(ctx, up.BlobKey)
	if err != nil {
		return bundle.Summary{}, err
	}
	defer body.Close()
	return bundle.Read(body, bundle.Limits{}, h)
}

// codeowners stores the bundle's CODEOWNERS if it brought one (the newest
// upload's file wins) and returns the file that applies to this upload,
// whose runs happened at at.
func (s *Service) codeowners(ctx context.Context, up store.Upload, c checked, at time.Time) (*codeowners.File, error) {
	text := c.codeowners
	if text != nil {
		if len(text) <= store.MaxCodeownersBytes {
			if err := s.Store.PutCodeowners(ctx, up.Org, up.Repo, store.Codeowners{Text: string(text), At: at}); err != nil {
				return nil, err
			}
		}
	} else {
		stored, err := s.Store.GetCodeowners(ctx, up.Org, up.Repo)
		if err != nil {
			return nil, err
		}
		if stored.Text == "" {
			return nil, nil
		}
		text = []byte(stored.Text)
	}
	f, err := codeowners.Parse(bytes.NewReader(text))
	if err != nil {
		// A CODEOWNERS we cannot read costs the owners, not the results.
		s.Log.Warn("CODEOWNERS unreadable", "org", up.Org, "upload", up.ID, "err", err)
		return nil, nil
	}
	return f, nil
}

// recorder groups runs by test into batches and records them on a few
// workers, classifying each batch of tests right after its runs are in.
type recorder struct {
	ctx      context.Context
	s        *Service
	up       testhealth.UploadRuns
	settings testhealth.Settings
	owners   *codeowners.File
	ownersOf map[string][]string // file → owners, per upload
	meta     bundle.Meta

	batch      store.RunBatch
	batches    int       // batches taken so far: the next one's number
	renew      func()    // renews the upload's lease
	renewed    time.Time // when it last did
	done       map[int]bool
	failedHere map[string]bool                   // tests with a failed run in the upload (checked.failed)
	onCommit   map[string]testhealth.CommitSoFar // of those, what the commit's earlier uploads showed
	seq        int
	tests      int // distinct tests per batch, summed (an upper bound across batches)

	// The tests that failed (id → name and failed runs, at most
	// maxFailedIDs of them) and, of those, the ones that passed too: the
	// upload's failures (failedTests), which its page, its labels and the
	// merge queue's evidence read.
	failing map[string]*store.FailedTestRef
	passing map[string]bool

	work chan numbered
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
}

// numbered is a batch with its number in the upload.
type numbered struct {
	n     int
	tests []testhealth.TestRuns
}

func newRecorder(ctx context.Context, s *Service, up testhealth.UploadRuns, settings testhealth.Settings, owners *codeowners.File, meta bundle.Meta, workers int, failed map[string]bool, done map[int]bool) *recorder {
	r := &recorder{
		ctx: ctx, s: s, up: up, settings: settings, owners: owners, ownersOf: map[string][]string{}, meta: meta,
		failedHere: failed, done: done,
		work: make(chan numbered, workers),
	}
	r.failing, r.passing = map[string]*store.FailedTestRef{}, map[string]bool{}
	for range workers {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for batch := range r.work {
				if r.failed() {
					continue
				}
				if err := r.record(batch); err != nil {
					r.fail(err)
				}
			}
		}()
	}
	return r
}

func (r *recorder) failed() bool { return r.firstErr() != nil }

func (r *recorder) firstErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// add takes one run of the bundle.
func (r *recorder) add(_ string, jr junit.Run) error {
	if err := r.firstErr(); err != nil {
		return err
	}
	id := testID(r.meta, jr)
	run := testhealth.Run{Seq: r.seq, Status: string(jr.Status), Attempt: jr.Attempt, Duration: jr.Duration}
	r.seq++
	switch lid := strings.ToLower(id); {
	case run.Failed() && r.failing[lid] != nil:
		r.failing[lid].Failed++
	case run.Failed() && len(r.failing) < maxFailedIDs:
		r.failing[lid] = &store.FailedTestRef{ID: lid, Name: jr.Name, Failed: 1}
	case jr.Status == junit.Passed && r.failedHere[lid]:
		r.passing[lid] = true
	}
	if run.Failed() {
		run.Message = jr.Message
		if jr.Message != "" {
			run.Cluster, run.Summary = failures.Key(jr.Message), failures.Summary(jr.Message)
		} else {
			run.Cluster, run.Summary = failures.Key("(no message)"), "(no message)"
		}
	}
	newTest := func() testhealth.TestRuns {
		tr := testhealth.TestRuns{Test: testhealth.TestCase{
			ID: id, Name: jr.Name, Variant: r.meta.Variant, FilePath: jr.File, Parent: jr.Parent, Classname: jr.Classname,
		}, OnCommit: r.onCommit[strings.ToLower(id)]}
		if r.owners != nil && jr.File != "" {
			owners, seen := r.ownersOf[jr.File]
			if !seen {
				owners = r.owners.Owners(jr.File)
				if owners == nil {
					owners = []string{}
				}
				if len(r.ownersOf) < 100_000 {
					r.ownersOf[jr.File] = owners
				}
			}
			tr.Codeowners = owners
		}
		return tr
	}
	if !r.batch.Add(id, newTest, run) {
		r.flush()
		r.batch.Add(id, newTest, run)
	}
	return nil
}

// failedTests lists the tests of the upload that failed and did not pass
// on a retry within it, by id, at most store.MaxFailedTests, and how many
// there are (at least: an upload counts maxFailedIDs failed tests at most).
func (r *recorder) failedTests() ([]store.FailedTestRef, int) {
	var out []store.FailedTestRef
	for id, ref := range r.failing {
		if !r.passing[id] {
			out = append(out, *ref)
		}
	}
	slices.SortFunc(out, func(a, b store.FailedTestRef) int { return strings.Compare(a.ID, b.ID) })
	n := len(out)
	return out[:min(n, store.MaxFailedTests)], n
}

func (r *recorder) flush() {
	batch := r.batch.Take()
	if len(batch) == 0 {
		return
	}
	if now := r.s.Now(); r.renew != nil && now.Sub(r.renewed) > LeaseTTL/3 {
		r.renew()
		r.renewed = now
	}
	n := r.batches
	r.batches++
	r.tests += len(batch)
	if r.done[n] {
		return // recorded by an earlier, interrupted ingest
	}
	r.work <- numbered{n, batch}
}

func (r *recorder) close() error {
	r.flush()
	close(r.work)
	r.wg.Wait()
	return r.firstErr()
}

func (r *recorder) abort() {
	r.fail(errors.New("ingest aborted"))
	close(r.work)
	r.wg.Wait()
}

// record counts one batch, classifies its tests from the counters the
// store returned, and records the batch as done. A test whose decision
// changes is decided again on the whole test (rare: its status, flake
// evidence or quarantine changes). A test that failed in this upload and
// passes in this batch failed and passed on the commit.
func (r *recorder) record(b numbered) error {
	ctx := r.ctx
	up := r.up
	up.Batch = b.n
	views, err := r.s.Store.RecordBatch(ctx, up, b.tests)
	if err != nil {
		return err
	}
	now := r.s.Now()
	var changed, passed, failed []string
	commits := map[string]testhealth.CommitResult{}
	for i, tr := range b.tests {
		id := strings.ToLower(tr.Test.ID)
		var commit *testhealth.CommitResult
		passes := slices.ContainsFunc(tr.Runs, func(run testhealth.Run) bool { return run.Status == "passed" })
		if passes {
			passed = append(passed, id)
		}
		if slices.ContainsFunc(tr.Runs, testhealth.Run.Failed) {
			failed = append(failed, id)
		}
		if !up.Guarded && up.SHA != "" && passes && r.failedHere[id] {
			commit = &testhealth.CommitResult{SHA: up.SHA, Branch: up.Branch, PassedAt: up.At, FailedAt: up.At}
			commits[id] = *commit
		}
		if _, ok := decide(views[i], commit, r.settings, now); ok {
			changed = append(changed, id)
		}
	}
	if len(changed) > 0 {
		if err := r.s.Reclassify(ctx, up.Org, up.Repo, r.settings, commits, changed); err != nil {
			return err
		}
	}
	return r.s.Store.PutBatchRecord(ctx, up, passed, failed)
}

// testID is the id of a run's test in an upload with meta m.
func testID(m bundle.Meta, jr junit.Run) string {
	return testhealth.TestID(testhealth.Identity{
		Org: m.Org, Repo: m.Repo.Host + "/" + m.Repo.Owner + "/" + m.Repo.Name,
		File: jr.File, Classname: jr.Classname, Parent: jr.Parent, Name: jr.Name, ExplicitID: jr.ID,
		Variant: m.Variant,
	})
}

// uploadTime is when an upload's runs happened: the uploader's time, but
// never in the future (a skewed CI clock must not put runs ahead of every
// window) and now when the bundle does not say.
func uploadTime(m bundle.Meta, now time.Time) time.Time {
	if m.UploadTime.IsZero() || m.UploadTime.After(now) {
		return now.UTC()
	}
	return m.UploadTime.UTC()
}
