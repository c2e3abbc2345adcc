package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Retention of history: failed-run items outlive the longest window (7
// days) and the contract's 30 days of history; batch records outlive the
// longest pass-on-retry recovery period (15 days).
const (
	RunRetention   = 35 * 24 * time.Hour
	BatchRetention = 16 * 24 * time.Hour
	// MaxBatchTests is how many tests one batch of an upload holds: its
	// record names them all and stays under 4 KB.
	MaxBatchTests = 100
	// MaxTransactActions is DynamoDB's limit of actions per transaction.
	MaxTransactActions = 100
	// maxRunsPerTest keeps one test's update expression small; further
	// runs of the test go to the next batch.
	maxRunsPerTest = 40
	// maxMessageBytes keeps a failed-run item under 1 KB, one write unit.
	maxMessageBytes = 512
)

// Counter folding: hours older than foldAge leave the counter item, for the
// meta item (exact) and a day sum (what classification reads), once
// foldBatch of them are there. The counter item then holds at most
// foldAge + foldBatch hours of counters.
const (
	foldAge   = 24
	foldBatch = 24
)

// RunBatch gathers the runs of one upload, test by test, into batches of at
// most MaxBatchTests tests.
type RunBatch struct {
	tests []testhealth.TestRuns
	index map[string]int // test id → position in tests
}

// Add adds run to the test of id, starting it with newTest (its identity
// and owners) when the batch does not hold it yet. It reports false, and
// adds nothing, when the run does not fit: record the batch (Take), and
// add it again.
func (b *RunBatch) Add(id string, newTest func() testhealth.TestRuns, run testhealth.Run) bool {
	i, ok := b.index[id]
	if !ok && len(b.tests) >= MaxBatchTests || ok && len(b.tests[i].Runs) >= maxRunsPerTest {
		return false
	}
	if !ok {
		if b.index == nil {
			b.index = map[string]int{}
		}
		b.tests = append(b.tests, newTest())
		i = len(b.tests) - 1
		b.index[id] = i
	}
	b.tests[i].Runs = append(b.tests[i].Runs, run)
	return true
}

// Take returns the batch's tests, for RecordBatch, and empties the batch.
func (b *RunBatch) Take() []testhealth.TestRuns {
	tests := b.tests
	*b = RunBatch{}
	return tests
}

// RecordRuns is RecordBatch without the counters it returns.
func (s *Store) RecordRuns(ctx context.Context, up testhealth.UploadRuns, tests []testhealth.TestRuns) error {
	_, err := s.RecordBatch(ctx, up, tests)
	return err
}

// RecordBatch counts the runs of one batch of an upload (up.Batch), test by
// test, with no transaction and no read:
//
//   - one UpdateItem of the test's counter item ADDs the runs to the hour's
//     packed counters and the streak, and returns the item as it was, so
//     that the counters after it are known without reading them;
//   - a test that failed gets one UpdateItem of its failure item (cluster
//     counts and texts, pull requests) and an item per failed run (indexed
//     by day for list-failing-tests), in BatchWriteItems;
//   - a test seen for the first time gets its meta item put, in the same
//     BatchWriteItems; one whose identity or owners changed, an update of it;
//   - a counter item holding foldBatch hours older than foldAge folds them
//     (one transaction, about once a day per test that runs all day).
//
// Each upload and batch is counted once: the counter and failure items
// keep the tokens of the last batches applied to them (batchTokens), and an
// update whose token is among them is refused by its condition, which
// answers with the item, so a repeated batch counts nothing and still
// learns the counters. Concurrent uploads of the same tests lose nothing:
// every counter is ADDed.
//
// It returns each test's counters as they stand after its runs
// (testhealth.TestCase with the counter item's fields: status value, rev,
// streak, hours, folded days), for classification.
func (s *Store) RecordBatch(ctx context.Context, up testhealth.UploadRuns, tests []testhealth.TestRuns) ([]testhealth.TestCase, error) {
	tok := batchToken(up.Upload, up.Batch)
	views := make([]testhealth.TestCase, len(tests))
	var runs []map[string]types.AttributeValue
	for i, tr := range tests {
		view, meta, err := s.recordTest(ctx, up, tok, tr)
		if err != nil {
			return nil, err
		}
		views[i] = view
		if meta != nil {
			runs = append(runs, meta)
		}
		for _, r := range tr.Runs {
			if r.Failed() {
				item, err := runItem(up, tr.Test.ID, r)
				if err != nil {
					return nil, err
				}
				runs = append(runs, item)
			}
		}
	}
	if err := s.putAll(ctx, runs); err != nil {
		return nil, err
	}
	return views, nil
}

// batchTokens is how many batch tokens an item keeps: a batch is counted
// twice only if it is retried after this many other batches touched the
// same test since its first attempt.
const batchTokens = 4

// batchToken names a batch of an upload in a few bytes (48 bits of its
// hash): tokens are kept on every counter item.
func batchToken(upload string, batch int) string {
	sum := sha256.Sum256([]byte(upload + "#" + strconv.Itoa(batch)))
	return base64.RawURLEncoding.EncodeToString(sum[:6])
}

// tokenUpdate makes u push tok onto the item's token ring, and returns the
// condition that tok is not on it yet.
func tokenUpdate(u *update, tok string) string {
	t := u.value(str(tok))
	none := u.value(str("-"))
	var seen []string
	for i := batchTokens - 1; i >= 0; i-- {
		n := u.name(attrBatchToken + strconv.Itoa(i))
		if i > 0 {
			prev := u.name(attrBatchToken + strconv.Itoa(i-1))
			u.set = append(u.set, n+" = if_not_exists("+prev+", "+none+")")
		} else {
			u.set = append(u.set, n+" = "+t)
		}
		seen = append(seen, n+" = "+t)
	}
	return "NOT (" + strings.Join(seen, " OR ") + ")"
}

// recordTest counts one test's runs of a batch and returns its counters,
// and the meta item to put when the test is new.
func (s *Store) recordTest(ctx context.Context, up testhealth.UploadRuns, tok string, tr testhealth.TestRuns) (testhealth.TestCase, map[string]types.AttributeValue, error) {
	id := strings.ToLower(tr.Test.ID)
	at := up.At.UTC()
	u := newUpdate()
	cond := tokenUpdate(u, tok)
	u.setTo(attrLastRun, num64(at.UnixNano()))
	ih := identityHash(tr.Test)
	u.setTo(attrIdentityHash, str(ih))
	if tr.Codeowners != nil {
		u.setTo(attrOwnersHash, str(ownersHash(tr.Codeowners)))
	}
	t := testhealth.TallyRuns(up, tr.Runs, tr.OnCommit)
	c := hourCounts{}
	if t.Monitored {
		c.mp, c.mf = t.Passed, t.Failed
	} else {
		c.op, c.of = t.Passed, t.Failed
	}
	u.setTo(attrLastUpload, str(up.Upload+" "+outcomeCode(t)))
	hour := at.Unix() / 3600
	if !c.zero() {
		u.add = append(u.add, u.name(hourAttr(attrHour, hour))+" "+u.value(c.number()))
	}
	countStreakAndEpisode(u, t, at)
	old, applied, err := s.updateOnce(ctx, testKey(up.Org, up.Repo, id), u, cond, types.ReturnValueAllOld)
	if err != nil {
		return testhealth.TestCase{}, nil, err
	}
	hot := decodeHot(old)
	view := hot.view(up.Org, up.Repo, id)
	if applied {
		t.Apply(&view, up.Upload, at)
	}
	// The meta item: put for a new test (nothing else writes it before its
	// first batch is recorded: a health write needs it to read the test),
	// updated when the identity or owners changed, and updated on a
	// repeated batch, which cannot tell whether the first attempt wrote it.
	var meta map[string]types.AttributeValue
	switch {
	case !hot.exists && applied:
		meta = newMeta(up, tr)
	case !applied || hot.identity != ih || tr.Codeowners != nil && hot.owners != ownersHash(tr.Codeowners):
		if err := s.updateMeta(ctx, up, tr, hot); err != nil {
			return testhealth.TestCase{}, nil, err
		}
	}
	if err := s.recordFailures(ctx, up, tok, tr); err != nil {
		return testhealth.TestCase{}, nil, err
	}
	if applied {
		hot.hours[hour] = hot.hours[hour].add(c)
	}
	if err := s.foldIfDue(ctx, up.Org, up.Repo, id, hot); err != nil {
		return testhealth.TestCase{}, nil, err
	}
	return view, meta, nil
}

// countStreakAndEpisode makes u count a test's tally of a batch into the
// counter item's broken streak and flaky episode.
func countStreakAndEpisode(u *update, t testhealth.Tally, at time.Time) {
	switch t.Streak {
	case testhealth.StreakReset:
		u.setTo(attrStreak, num(0))
		u.remove = append(u.remove, u.name(attrStreakOpen))
	case testhealth.StreakAdd:
		u.addN(attrStreak, 1)
		if t.Open {
			u.setTo(attrStreakOpen, num(1))
		} else {
			u.remove = append(u.remove, u.name(attrStreakOpen))
		}
	case testhealth.StreakSettle:
		u.remove = append(u.remove, u.name(attrStreakOpen))
	}
	if t.Monitored && t.Passed+t.Failed > 0 {
		u.add = append(u.add, u.name(attrEpisode)+" "+u.value(episodeCounts{t.Passed + t.Failed, t.Failed}.number()))
		if t.Failed > 0 {
			u.setTo(attrCleanRuns, num(0))
			u.setTo(attrLastFailure, num64(at.Unix()))
		} else {
			u.addN(attrCleanRuns, t.Passed)
		}
	}
}

// updateOnce runs a token-guarded update and returns the item as rv asks
// (as it was, or as it is after the update), and whether it applied; a
// refusal (the batch counted already) answers with the item as it is.
// Throttling and outages are retried.
func (s *Store) updateOnce(ctx context.Context, k map[string]types.AttributeValue, u *update, cond string, rv types.ReturnValue) (map[string]types.AttributeValue, bool, error) {
	in := &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: k,
		UpdateExpression:                    aws.String(u.expression()),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            u.names,
		ExpressionAttributeValues:           u.values,
		ReturnValues:                        rv,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnConsumedCapacity:              types.ReturnConsumedCapacityTotal,
	}
	for try := 0; ; try++ {
		out, err := s.db.UpdateItem(ctx, in)
		if err == nil {
			usageOf(ctx).add(cc(out.ConsumedCapacity)...)
			return out.Attributes, true, nil
		}
		usageOf(ctx).add()
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return ccf.Item, false, nil
		}
		err = translate(err)
		if !errs.Is(err, errs.Unavailable) || try >= 8 {
			return nil, false, err
		}
		if err := backoff(ctx, try+1); err != nil {
			return nil, false, err
		}
	}
}

// hotItem is what a counter item holds that classification reads.
type hotItem struct {
	hours     map[int64]hourCounts // h{hour}
	days      map[int64]dayCounts  // d{day}
	legacy    testhealth.TestCase  // an item of the earlier layout, as it was
	streak    int
	lastRun   time.Time
	status    string
	override  string
	flakeAt   time.Time
	rev       int
	identity  string // hash of the identity the meta item holds
	owners    string // hash of the owners the meta item holds
	exists    bool
	hasLegacy bool
	// The counters of the test's health that are not hours: the open
	// streak commit, the flaky episode, the clean runs, the last
	// failure, the override's end and the latest upload (healthattrs.go).
	extra testhealth.TestCase
}

func decodeHot(item map[string]types.AttributeValue) hotItem {
	h := hotItem{hours: map[int64]hourCounts{}, days: map[int64]dayCounts{}, exists: item != nil}
	for name, av := range item {
		if n, ok := numbered(name, attrHour); ok {
			if c, ok := unpackHour(av); ok {
				h.hours[n] = c
			}
			continue
		}
		if n, ok := numbered(name, attrDay); ok {
			if c, ok := unpackDay(av); ok {
				h.days[n] = c
			}
			continue
		}
		switch name {
		case attrStreak:
			h.streak = intAttr(av)
		case attrLastRun:
			h.lastRun = nanosAttr(av)
		case attrStatusValue:
			h.status = strAttr(av)
		case attrOverride:
			h.override = strAttr(av)
		case attrFlakeAt:
			h.flakeAt = nanosAttr(av)
		case attrRev:
			h.rev = intAttr(av)
		case attrIdentityHash:
			h.identity = strAttr(av)
		case attrOwnersHash:
			h.owners = strAttr(av)
		case attrID, attrStatus:
			h.hasLegacy = true
		default:
			readHealthAttr(&h.extra, name, av)
		}
	}
	if h.hasLegacy {
		// The earlier layout kept everything on this item; its packed
		// hours and days are read above.
		rest := make(map[string]types.AttributeValue, len(item))
		for name, av := range item {
			if _, ok := numbered(name, attrHour); !ok {
				if _, ok := numbered(name, attrDay); !ok {
					rest[name] = av
				}
			}
		}
		h.legacy, _ = readTestCase(rest)
	}
	return h
}

// view is the test as classification sees it from its counter item.
func (h hotItem) view(org string, repo repository.Ref, id string) testhealth.TestCase {
	tc := h.legacy
	tc.Org, tc.Repo, tc.ID = org, repo, id
	tc.Rev, tc.Streak = h.rev, h.streak
	if !h.lastRun.IsZero() {
		tc.LastRun = h.lastRun
	}
	if h.status != "" {
		tc.Status.Value = h.status
	}
	if h.override != "" {
		tc.QuarantineOverride = h.override
	}
	if !h.flakeAt.IsZero() {
		tc.Flake = &testhealth.FlakeEvidence{At: h.flakeAt}
	}
	copyHealthAttrs(&tc, h.extra)
	for hour, c := range h.hours {
		addHour(&tc, strconv.FormatInt(hour, 10), c)
	}
	for day, c := range h.days {
		k := strconv.FormatInt(day, 10)
		for _, m := range []struct {
			m *map[string]int
			n int
		}{{&tc.MonitoredPassedByDay, c.mp}, {&tc.MonitoredFailedByDay, c.mf}} {
			if *m.m == nil {
				*m.m = map[string]int{}
			}
			(*m.m)[k] += m.n
		}
	}
	return tc
}

// addHour adds one hour's packed counters to tc's hour maps.
func addHour(tc *testhealth.TestCase, hour string, c hourCounts) {
	for _, m := range []struct {
		m *map[string]int
		n int
	}{
		{&tc.PassedByHour, c.mp + c.op}, {&tc.FailedByHour, c.mf + c.of},
		{&tc.MonitoredPassedByHour, c.mp}, {&tc.MonitoredFailedByHour, c.mf},
	} {
		if m.n == 0 {
			continue
		}
		if *m.m == nil {
			*m.m = map[string]int{}
		}
		(*m.m)[hour] += m.n
	}
}

// outcomeCode is the letter the counter item keeps (with the upload, as
// "lu") of a test's outcome in an upload: p passed, f failed, r passed on
// retry; in capitals when the infrastructure guard set the upload aside.
func outcomeCode(t testhealth.Tally) string {
	code := map[string]string{testhealth.Passed: "p", testhealth.Failed: "f", testhealth.PassedOnRetry: "r"}[t.Outcome()]
	if t.Guarded {
		return strings.ToUpper(code)
	}
	return code
}

// readOutcome reads "lu": the latest upload, the test's outcome in it, and
// whether the infrastructure guard set it aside.
func readOutcome(av types.AttributeValue, tc *testhealth.TestCase) {
	upload, code, _ := strings.Cut(strAttr(av), " ")
	tc.LastUpload, tc.LastOutcome = upload, outcomes[strings.ToLower(code)]
	tc.LastGuarded = code != strings.ToLower(code)
}

var outcomes = map[string]string{"p": testhealth.Passed, "f": testhealth.Failed, "r": testhealth.PassedOnRetry}

// identityHash and ownersHash are short digests of what the meta item
// holds, kept on the counter item, so that an upload learns from the
// update's answer whether the meta item needs writing.
func identityHash(t testhealth.TestCase) string {
	return digest(t.ID, t.Name, t.Variant, t.FilePath, t.Parent, t.Classname)
}

func ownersHash(owners []string) string { return digest(owners...) }

func digest(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return base64.RawURLEncoding.EncodeToString(sum[:6])
}

// identity is a test's identity and owners as its meta item holds them.
func identity(up testhealth.UploadRuns, tr testhealth.TestRuns, firstSeen time.Time) map[string]types.AttributeValue {
	t := tr.Test
	out := map[string]types.AttributeValue{
		attrOrg:       str(up.Org),
		attrRepo:      &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{attrHost: str(up.Repo.Host), attrOwner: str(up.Repo.Owner), attrName: str(up.Repo.Name)}},
		attrID:        str(strings.ToLower(t.ID)),
		attrName:      str(t.Name),
		attrVariant:   str(t.Variant),
		attrFirstSeen: timeStr(firstSeen),
	}
	for _, f := range []struct{ attr, v string }{{attrFilePath, t.FilePath}, {attrParent, t.Parent}, {attrClassname, t.Classname}} {
		if f.v != "" {
			out[f.attr] = str(f.v)
		}
	}
	if tr.Codeowners != nil {
		owners := make([]types.AttributeValue, len(tr.Codeowners))
		for i, o := range tr.Codeowners {
			owners[i] = str(o)
		}
		out[attrCodeowners] = &types.AttributeValueMemberL{Value: owners}
	}
	return out
}

// newMeta is the meta item of a test first seen in up.
func newMeta(up testhealth.UploadRuns, tr testhealth.TestRuns) map[string]types.AttributeValue {
	item := metaKey(up.Org, up.Repo, tr.Test.ID)
	maps.Copy(item, identity(up, tr, up.At))
	return item
}

// updateMeta writes a test's identity and owners to its meta item, leaving
// what else it holds (health, ticket, folded hours).
func (s *Store) updateMeta(ctx context.Context, up testhealth.UploadRuns, tr testhealth.TestRuns, hot hotItem) error {
	first := up.At
	if !hot.legacy.FirstSeen.IsZero() {
		first = hot.legacy.FirstSeen
	}
	u := newUpdate()
	for attr, v := range identity(up, tr, first) {
		if attr == attrRepo || attr == attrFirstSeen { // as first seen
			u.setIfAbsent(attr, v)
		} else {
			u.setTo(attr, v)
		}
	}
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key: metaKey(up.Org, up.Repo, tr.Test.ID), UpdateExpression: aws.String(u.expression()),
		ExpressionAttributeNames: u.names, ExpressionAttributeValues: u.values,
	})
	return err
}

// recordFailures counts a batch's failed runs of one test on its failure
// item: per cluster and day, the cluster's latest text and time, and the
// pull request's latest failure. The item is pruned when what left every
// window (or passed the bounds) adds up.
func (s *Store) recordFailures(ctx context.Context, up testhealth.UploadRuns, tok string, tr testhealth.TestRuns) error {
	at := up.At.UTC()
	clusters := map[string]int{}
	var summaries []testhealth.Run // the last failure of each cluster, in order
	failed := 0
	for _, r := range tr.Runs {
		if !r.Failed() {
			continue
		}
		failed++
		if r.Cluster == "" {
			continue
		}
		if clusters[r.Cluster] == 0 {
			summaries = append(summaries, r)
		} else {
			for i := range summaries {
				if summaries[i].Cluster == r.Cluster {
					summaries[i] = r
				}
			}
		}
		clusters[r.Cluster]++
	}
	if failed == 0 {
		return nil
	}
	u := newUpdate()
	cond := tokenUpdate(u, tok)
	day := testhealth.DayKey(at)
	for _, r := range summaries {
		u.addN(attrClusterCount+r.Cluster+"."+day, clusters[r.Cluster])
		u.setTo(attrClusterText+r.Cluster, str(r.Summary))
		u.setTo(attrClusterLast+r.Cluster, num64(at.UnixMilli()))
	}
	if up.PR > 0 {
		u.setTo(attrFailedPR+strconv.Itoa(up.PR), num64(at.UnixMilli()))
	}
	k := failKey(up.Org, up.Repo, tr.Test.ID)
	item, applied, err := s.updateOnce(ctx, k, u, cond, types.ReturnValueAllNew)
	if err != nil || !applied { // not applied: counted by an earlier attempt
		return err
	}
	return s.pruneFailures(ctx, k, item)
}

// pruneFailures removes from a failure item what left every window or
// passed the bounds (testhealth.Prune), once there are PruneBatch entries
// of it or a bound is passed: not at every failure. Once it holds
// maxLoosePRs pull-request times, it packs them into the meta item
// (failedprs.go) and removes them too. A time is removed only if it is
// still the one read: a run failing on that pull request meanwhile keeps
// its newer one.
func (s *Store) pruneFailures(ctx context.Context, k, item map[string]types.AttributeValue) error {
	tc, err := readTestCase(item)
	if err != nil {
		return err
	}
	after, dropped := testhealth.Prune(tc, s.now())
	pack := len(tc.FailedPRs) >= maxLoosePRs
	if dropped < testhealth.PruneBatch && len(tc.Failures) <= testhealth.MaxClusters && !pack {
		return nil
	}
	if pack {
		meta := map[string]types.AttributeValue{AttrPK: k[AttrPK], AttrSK: str(skMeta)}
		if err := s.packFailedPRs(ctx, meta, tc.FailedPRs); err != nil {
			return err
		}
		after.FailedPRs = nil
	}
	names := droppedFailures(tc, after)
	if len(names) == 0 {
		return nil
	}
	u := newUpdate()
	var remove []string
	conds := []string{ifItemExists}
	for _, a := range names[:min(len(names), maxRemovals)] {
		n := u.name(a)
		remove = append(remove, n)
		if strings.HasPrefix(a, attrFailedPR) {
			conds = append(conds, n+" = "+u.value(item[a]))
		}
	}
	in := &dynamodb.UpdateItemInput{
		Key: k, UpdateExpression: aws.String("REMOVE " + strings.Join(remove, ", ")),
		ConditionExpression:      aws.String(strings.Join(conds, " AND ")),
		ExpressionAttributeNames: u.names,
	}
	if len(u.values) > 0 {
		in.ExpressionAttributeValues = u.values
	}
	_, err = s.updateItem(ctx, in)
	if errs.Is(err, errs.Conflict) {
		return nil
	}
	return err
}

// foldIfDue moves the counter item's hours older than foldAge to the meta
// item, exactly (packed: foldedhours.go), and into day sums of their
// monitored counts on the counter item, once foldBatch of them are there;
// days and hours older than testhealth.Keep are dropped on the way. It
// reads the meta item's folded hours, then writes both items in one
// transaction, conditional on the folded hours of each being what it
// read: when another upload counted into one meanwhile, or another fold
// ran, the fold is left to a later upload. Folded hours the meta item
// still holds one attribute each, as they were first kept, move into the
// packed value.
func (s *Store) foldIfDue(ctx context.Context, org string, repo repository.Ref, id string, hot hotItem) error {
	now := s.now().UTC()
	cutHour := now.Unix()/3600 - foldAge
	keepDay := now.Add(-testhealth.Keep).Unix() / 86400
	var old []int64
	for h := range hot.hours {
		if h <= cutHour {
			old = append(old, h)
		}
	}
	if len(old) < foldBatch {
		return nil
	}
	slices.Sort(old)
	mk := metaKey(org, repo, id)
	meta, err := s.getItem(ctx, mk)
	if err != nil {
		return err
	}
	hu, mu := newUpdate(), newUpdate()
	xh, folded, metaRemove, metaCond := foldedOnMeta(mu, meta)
	conds, hotRemove := foldCounter(hu, hot, old, keepDay, folded)
	for h := range folded {
		if h/24 < keepDay {
			delete(folded, h)
		}
	}
	mu.set = append(mu.set, xh+" = "+mu.value(&types.AttributeValueMemberB{Value: packHours(folded)}))
	err = s.transact(ctx, types.TransactWriteItem{Update: &types.Update{
		Key: testKey(org, repo, id), UpdateExpression: aws.String(withRemove(hu.expression(), hotRemove)),
		ConditionExpression:      aws.String(strings.Join(conds, " AND ")),
		ExpressionAttributeNames: hu.names, ExpressionAttributeValues: hu.values,
	}}, types.TransactWriteItem{Update: &types.Update{
		Key: mk, UpdateExpression: aws.String(withRemove(mu.expression(), metaRemove)),
		ConditionExpression:      aws.String(metaCond),
		ExpressionAttributeNames: mu.names, ExpressionAttributeValues: mu.values,
	}})
	if errs.Is(err, errs.Conflict) {
		return nil
	}
	return err
}

// foldedOnMeta reads the hours the meta item holds folded: packed, and
// (up to maxRemovals of them, the rest moving with the next fold) one
// attribute each, which mu removes. It returns the packed attribute's
// placeholder, the hours, what to remove and the fold's condition on the
// meta item: its packed hours are still those read.
func foldedOnMeta(mu *update, meta map[string]types.AttributeValue) (xh string, folded map[int64]hourCounts, remove []string, cond string) {
	folded = map[int64]hourCounts{}
	xh = mu.name(attrFoldedHours)
	cond = "attribute_not_exists(" + xh + ")"
	var legacy []string
	for name := range meta {
		if _, ok := numbered(name, attrOldHour); ok {
			legacy = append(legacy, name)
		}
	}
	slices.Sort(legacy)
	for _, name := range capped(legacy, maxRemovals) {
		h, _ := numbered(name, attrOldHour)
		if c, ok := unpackHour(meta[name]); ok {
			folded[h] = folded[h].add(c)
		}
		remove = append(remove, mu.name(name))
	}
	if b, ok := meta[attrFoldedHours].(*types.AttributeValueMemberB); ok {
		unpackHours(b.Value, func(h int64, c hourCounts) { folded[h] = folded[h].add(c) })
		cond = xh + " = " + mu.value(b)
	}
	return xh, folded, remove, cond
}

// foldCounter makes hu take the old hours out of the counter item (on the
// condition that each is still what was read) into day sums, and drop the
// days before keepDay; the old hours since keepDay are added to folded.
// It returns the conditions and the names to remove.
func foldCounter(hu *update, hot hotItem, old []int64, keepDay int64, folded map[int64]hourCounts) (conds, remove []string) {
	sums := map[int64]dayCounts{}
	for _, h := range old {
		c := hot.hours[h]
		n := hu.name(hourAttr(attrHour, h))
		conds = append(conds, n+" = "+hu.value(c.number()))
		remove = append(remove, n)
		if day := h / 24; day >= keepDay {
			d := sums[day]
			sums[day] = dayCounts{d.mp + c.mp, d.mf + c.mf}
			folded[h] = folded[h].add(c)
		}
	}
	for day, c := range sums {
		hu.add = append(hu.add, hu.name(hourAttr(attrDay, day))+" "+hu.value(c.number()))
	}
	for day := range hot.days {
		if day < keepDay {
			remove = append(remove, hu.name(hourAttr(attrDay, day)))
		}
	}
	return conds, remove
}

// runItem is the item of a failed run, in the partition of the
// repository's failed runs of its day (PK=…#FAILS#{unix day}, SK={time}#
// {test}#{upload}#{seq}), where list-failing-tests reads them without an
// index: a run costs one write, not one and its index copy. Passing runs
// are counted, not stored.
func runItem(up testhealth.UploadRuns, testID string, r testhealth.Run) (map[string]types.AttributeValue, error) {
	rec := testhealth.RunRecord{
		Status: r.Status, At: up.At.UTC(), Upload: up.Upload, SHA: up.SHA, Branch: up.Branch, PR: up.PR,
		Attempt: r.Attempt, Duration: r.Duration.Milliseconds(), Message: clipBytes(r.Message, maxMessageBytes), TestID: strings.ToLower(testID),
	}
	sk := up.At.UTC().Format(SortableTime) + "#" + strings.ToLower(testID) + "#" + up.Upload + "#" + strconv.Itoa(r.Seq)
	item, err := marshal(rec, key(failsPK(up.Org, up.Repo, up.At), sk))
	if err != nil {
		return nil, err
	}
	item[AttrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(up.At.Add(RunRetention).Unix(), 10)}
	return item, nil
}

func failsPK(org string, repo repository.Ref, at time.Time) string {
	return orgPK(org) + "#REPO#" + repo.Key() + "#FAILS#" + testhealth.DayKey(at)
}

// clipBytes cuts s to at most n bytes without splitting a UTF-8 sequence.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
