package store

import (
	"context"
	"slices"
	"sort"
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

// Names of attributes with a key in them: prefix, then the hour, day, cluster
// or PR number. The failure item holds the cluster and pull-request ones;
// the four per-hour counters are the earlier layout's (counters.go packs
// them into one attribute now), still read and removed.
const (
	attrPassedHour    = "hp."
	attrFailedHour    = "hf."
	attrMonPassedHour = "mp."
	attrMonFailedHour = "mf."
	attrClusterCount  = "cc." // cc.{cluster}.{day}
	attrClusterText   = "cs." // cs.{cluster}
	attrClusterLast   = "cl." // cl.{cluster}
	attrFailedPR      = "pr." // pr.{number} = time of the latest failed run
)

// GetTestCase reads one test case of a repository, consistently: one Query
// of its items. Absent repository, absent test and another tenant's test
// are the same NotFound.
func (s *Store) GetTestCase(ctx context.Context, org string, repo repository.Ref, id string) (testhealth.TestCase, error) {
	return s.readTest(ctx, org, repo, id, true)
}

// readTest reads a test's items (counter, failure, meta) in one Query.
func (s *Store) readTest(ctx context.Context, org string, repo repository.Ref, id string, consistent bool) (testhealth.TestCase, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :test)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(testPK(org, repo, id)), ":test": str(skTest),
		},
		ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return testhealth.TestCase{}, err
	}
	tc, err := readTestCase(out.Items...)
	if err != nil {
		return testhealth.TestCase{}, err
	}
	if tc.ID == "" {
		return testhealth.TestCase{}, errs.E(errs.NotFound, "test %s not found in repository %s", id, repo)
	}
	return testhealth.Expire(tc, s.now()), nil
}

// GetRepoAndTest reads a repository's settings and one of its tests,
// consistently (a writer decides on them), in one BatchGetItem: a test's
// quarantine flag depends on both.
func (s *Store) GetRepoAndTest(ctx context.Context, org string, repo repository.Ref, id string) (Repo, testhealth.TestCase, error) {
	return s.repoAndTest(ctx, org, repo, id, true)
}

// ShowTest is GetRepoAndTest for showing the test: its items are read
// eventually consistent, at half the price. Ingestion is asynchronous, so a
// read never promised to see the upload of a second ago.
func (s *Store) ShowTest(ctx context.Context, org string, repo repository.Ref, id string) (Repo, testhealth.TestCase, error) {
	return s.repoAndTest(ctx, org, repo, id, false)
}

// repoAndTest reads the repository item and the test's three in one
// BatchGetItem.
func (s *Store) repoAndTest(ctx context.Context, org string, repo repository.Ref, id string, consistent bool) (Repo, testhealth.TestCase, error) {
	items, err := s.batchGetConsistency(ctx, []map[string]types.AttributeValue{
		repoKey(org, repo), testKey(org, repo, id), failKey(org, repo, id), metaKey(org, repo, id),
	}, consistent)
	if err != nil {
		return Repo{}, testhealth.TestCase{}, err
	}
	var r Repo
	var test []map[string]types.AttributeValue
	for _, item := range items {
		if strings.HasPrefix(skOf(item), skTest) {
			test = append(test, item)
		} else if err := unmarshal(item, &r); err != nil {
			return Repo{}, testhealth.TestCase{}, err
		}
	}
	tc, err := readTestCase(test...)
	if err != nil {
		return Repo{}, testhealth.TestCase{}, err
	}
	if tc.ID == "" || r.Ref.Host == "" {
		return Repo{}, testhealth.TestCase{}, errs.E(errs.NotFound, "test %s not found in repository %s", id, repo)
	}
	return r, testhealth.Expire(tc, s.now()), nil
}

// GetTestCases reads tests of one repository by id, consistently, in one
// BatchGetItem per 33 tests (their three items each); absent ids are left
// out. The result is in the order of ids.
func (s *Store) GetTestCases(ctx context.Context, org string, repo repository.Ref, ids []string) ([]testhealth.TestCase, error) {
	return s.readTests(ctx, org, repo, ids, true)
}

func (s *Store) readTests(ctx context.Context, org string, repo repository.Ref, ids []string, consistent bool) ([]testhealth.TestCase, error) {
	keys := make([]map[string]types.AttributeValue, 0, 3*len(ids))
	for _, id := range ids {
		keys = append(keys, testKey(org, repo, id), failKey(org, repo, id), metaKey(org, repo, id))
	}
	items, err := s.batchGetConsistency(ctx, keys, consistent)
	if err != nil {
		return nil, err
	}
	byPK := map[string][]map[string]types.AttributeValue{}
	for _, item := range items {
		pk := strAttr(item[AttrPK])
		byPK[pk] = append(byPK[pk], item)
	}
	out := make([]testhealth.TestCase, 0, len(ids))
	for _, id := range ids {
		its := byPK[testPK(org, repo, id)]
		if len(its) == 0 {
			continue
		}
		tc, err := readTestCase(its...)
		if err != nil {
			return nil, err
		}
		if tc.ID != "" {
			out = append(out, testhealth.Expire(tc, s.now()))
		}
	}
	return out, nil
}

// readTestCase decodes a test from its items, in any order: the fixed
// attributes through attributevalue (the meta item's health over an item
// of the earlier layout, which kept everything on the counter item), the
// counters from their names. A counter item alone has no id: the test is
// known only once its meta item is written.
func readTestCase(items ...map[string]types.AttributeValue) (testhealth.TestCase, error) {
	slices.SortFunc(items, func(a, b map[string]types.AttributeValue) int {
		return strings.Compare(skOf(a), skOf(b)) // TEST, TEST#FAIL, TEST#META: the meta item wins
	})
	merged := map[string]types.AttributeValue{}
	for _, item := range items {
		for k, v := range item {
			merged[k] = v
		}
	}
	var tc testhealth.TestCase
	if err := unmarshal(merged, &tc); err != nil {
		return testhealth.TestCase{}, err
	}
	count := func(m *map[string]int, k string, av types.AttributeValue) {
		n, ok := av.(*types.AttributeValueMemberN)
		if !ok {
			return
		}
		v, err := strconv.Atoi(n.Value)
		if err != nil {
			return
		}
		if *m == nil {
			*m = map[string]int{}
		}
		(*m)[k] += v
	}
	cluster := func(k string) testhealth.FailureCluster {
		if tc.Failures == nil {
			tc.Failures = map[string]testhealth.FailureCluster{}
		}
		c := tc.Failures[k]
		if c.ByDay == nil {
			c.ByDay = map[string]int{}
		}
		return c
	}
	// A mature test has some 200 hours: maps sized once, not grown. Most
	// are packed (attrFoldedHours), at least 5 bytes an hour.
	hours := 0
	for name, av := range merged {
		switch {
		case name == attrFoldedHours:
			if b, ok := av.(*types.AttributeValueMemberB); ok {
				hours += len(b.Value) / 5
			}
		case strings.HasPrefix(name, attrHour) || strings.HasPrefix(name, attrOldHour):
			hours++
		}
	}
	if hours > 0 {
		tc.PassedByHour, tc.MonitoredPassedByHour = make(map[string]int, hours), make(map[string]int, hours)
		tc.FailedByHour, tc.MonitoredFailedByHour = make(map[string]int, hours/4), make(map[string]int, hours/4)
	}
	for name, av := range merged {
		if h, ok := numbered(name, attrHour); ok {
			if c, ok := unpackHour(av); ok {
				addHour(&tc, strconv.FormatInt(h, 10), c)
			}
			continue
		}
		if name == attrFoldedHours {
			if b, ok := av.(*types.AttributeValueMemberB); ok {
				unpackHours(b.Value, func(h int64, c hourCounts) { addHour(&tc, strconv.FormatInt(h, 10), c) })
			}
			continue
		}
		if h, ok := numbered(name, attrOldHour); ok {
			if c, ok := unpackHour(av); ok {
				addHour(&tc, strconv.FormatInt(h, 10), c)
			}
			continue
		}
		readHealthAttr(&tc, name, av)
		switch {
		case name == "lr":
			if t := nanosAttr(av); t.After(tc.LastRun) {
				tc.LastRun = t
			}
		case name == "sv":
			if tc.Status.Value == "" {
				tc.Status.Value = strAttr(av)
			}
		case strings.HasPrefix(name, attrPassedHour):
			count(&tc.PassedByHour, name[len(attrPassedHour):], av)
		case strings.HasPrefix(name, attrFailedHour):
			count(&tc.FailedByHour, name[len(attrFailedHour):], av)
		case strings.HasPrefix(name, attrMonPassedHour):
			count(&tc.MonitoredPassedByHour, name[len(attrMonPassedHour):], av)
		case strings.HasPrefix(name, attrMonFailedHour):
			count(&tc.MonitoredFailedByHour, name[len(attrMonFailedHour):], av)
		case strings.HasPrefix(name, attrClusterCount):
			k, day, ok := strings.Cut(name[len(attrClusterCount):], ".")
			if !ok {
				continue
			}
			c := cluster(k)
			count(&c.ByDay, day, av)
			tc.Failures[k] = c
		case strings.HasPrefix(name, attrClusterText):
			k := name[len(attrClusterText):]
			c := cluster(k)
			c.Summary = strAttr(av)
			tc.Failures[k] = c
		case strings.HasPrefix(name, attrClusterLast):
			k := name[len(attrClusterLast):]
			c := cluster(k)
			c.Last = timeAttr(av)
			tc.Failures[k] = c
		case strings.HasPrefix(name, attrFailedPR):
			if tc.FailedPRs == nil {
				tc.FailedPRs = map[string]time.Time{}
			}
			laterPR(tc.FailedPRs, name[len(attrFailedPR):], timeAttr(av))
		case name == attrPackedPRs:
			if b, ok := av.(*types.AttributeValueMemberB); ok {
				if tc.FailedPRs == nil {
					tc.FailedPRs = map[string]time.Time{}
				}
				unpackPRs(b.Value, tc.FailedPRs)
			}
		}
	}
	for _, m := range []*map[string]int{&tc.PassedByHour, &tc.FailedByHour, &tc.MonitoredPassedByHour, &tc.MonitoredFailedByHour} {
		if len(*m) == 0 {
			*m = nil // as before sizing: none is nil
		}
	}
	return tc, nil
}

// PutTestCase writes a whole test: its counter, meta and failure items and
// its index entry. Ingestion maintains these items with atomic updates;
// whole writes are for seeding and tests. Every hour goes to the counter
// item; runs counted as monitored beyond a test's totals are not kept.
func (s *Store) PutTestCase(ctx context.Context, tc testhealth.TestCase) error {
	hot := testKey(tc.Org, tc.Repo, tc.ID)
	hours := map[string]hourCounts{}
	for h, n := range tc.MonitoredPassedByHour {
		c := hours[h]
		c.mp = n
		hours[h] = c
	}
	for h, n := range tc.MonitoredFailedByHour {
		c := hours[h]
		c.mf = n
		hours[h] = c
	}
	for h, n := range tc.PassedByHour {
		c := hours[h]
		c.op = max(0, n-c.mp)
		hours[h] = c
	}
	for h, n := range tc.FailedByHour {
		c := hours[h]
		c.of = max(0, n-c.mf)
		hours[h] = c
	}
	for h, c := range hours {
		hot[attrHour+h] = c.number()
	}
	hot["rev"] = num(tc.Rev)
	hot["ih"] = str(identityHash(tc))
	if tc.Codeowners != nil {
		hot["oh"] = str(ownersHash(tc.Codeowners))
	}
	if tc.Streak != 0 {
		hot["streak"] = num(tc.Streak)
	}
	if !tc.LastRun.IsZero() {
		hot["lr"] = num64(tc.LastRun.UnixNano())
	}
	if tc.Status.Value != "" {
		hot["sv"] = str(tc.Status.Value)
	}
	if tc.LastUpload != "" {
		for code, o := range outcomes {
			if o == tc.LastOutcome {
				if tc.LastGuarded {
					code = strings.ToUpper(code)
				}
				hot[attrLastUpload] = str(tc.LastUpload + " " + code)
			}
		}
	}
	if tc.StreakOpen {
		hot[attrStreakOpen] = num(1)
	}
	if tc.EpisodeRuns > 0 || tc.EpisodeFailures > 0 {
		hot[attrEpisode] = episodeCounts{tc.EpisodeRuns, tc.EpisodeFailures}.number()
	}
	if tc.CleanRuns > 0 {
		hot[attrCleanRuns] = num(tc.CleanRuns)
	}
	if !tc.LastFailure.IsZero() {
		hot[attrLastFailure] = num64(tc.LastFailure.Unix())
	}
	if !tc.BrokenUntil.IsZero() {
		hot[attrBrokenUntil] = num64(tc.BrokenUntil.Unix())
	}
	if until := overrideUntil(tc); !until.IsZero() {
		hot[attrQuarantineUntil] = num64(until.Unix())
	}
	if tc.QuarantineOverride != "" {
		hot["qo"] = str(tc.QuarantineOverride)
	}
	if tc.Flake != nil {
		hot["fa"] = num64(tc.Flake.At.UnixNano())
	}
	meta, err := marshal(tc, metaKey(tc.Org, tc.Repo, tc.ID))
	if err != nil {
		return err
	}
	for _, a := range []string{"rev", "last_run", "streak"} { // the counter item's
		delete(meta, a)
	}
	actions := []types.TransactWriteItem{{Put: &types.Put{Item: hot}}, {Put: &types.Put{Item: meta}}}
	fail := failKey(tc.Org, tc.Repo, tc.ID)
	for k, c := range tc.Failures {
		fail[attrClusterText+k] = str(c.Summary)
		fail[attrClusterLast+k] = num64(c.Last.UnixMilli())
		for d, n := range c.ByDay {
			fail[attrClusterCount+k+"."+d] = num(n)
		}
	}
	if len(tc.FailedPRs) > 0 {
		meta[attrPackedPRs] = &types.AttributeValueMemberB{Value: packPRs(tc.FailedPRs)}
	}
	if len(fail) > 2 {
		actions = append(actions, types.TransactWriteItem{Put: &types.Put{Item: fail}})
	}
	return s.transact(ctx, append(actions, indexEntryWrite(tc))...)
}

// droppedHours names the counter attributes of the hours before has and
// after no longer has (testhealth.Prune dropped them): as the counter item
// holds them (and, from the earlier layout, one per counter) and as the
// meta item holds folded hours. Removing a name an item lacks is no error.
func droppedHours(before, after testhealth.TestCase) (counter, meta []string) {
	kept := func(h string) bool {
		for _, m := range []map[string]int{after.PassedByHour, after.FailedByHour, after.MonitoredPassedByHour, after.MonitoredFailedByHour} {
			if _, ok := m[h]; ok {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for _, m := range []map[string]int{before.PassedByHour, before.FailedByHour, before.MonitoredPassedByHour, before.MonitoredFailedByHour} {
		for h := range m {
			if seen[h] || kept(h) {
				continue
			}
			seen[h] = true
			counter = append(counter, attrHour+h, attrPassedHour+h, attrFailedHour+h, attrMonPassedHour+h, attrMonFailedHour+h)
			meta = append(meta, attrOldHour+h)
		}
	}
	sort.Strings(counter)
	sort.Strings(meta)
	return counter, meta
}

// droppedFailures names the cluster and pull-request attributes of before
// that after no longer has.
func droppedFailures(before, after testhealth.TestCase) []string {
	var out []string
	for k, c := range before.Failures {
		kept, ok := after.Failures[k]
		if !ok {
			out = append(out, attrClusterText+k, attrClusterLast+k)
		}
		for d := range c.ByDay {
			if _, ok := kept.ByDay[d]; !ok {
				out = append(out, attrClusterCount+k+"."+d)
			}
		}
	}
	for pr := range before.FailedPRs {
		if _, ok := after.FailedPRs[pr]; !ok {
			out = append(out, attrFailedPR+pr)
		}
	}
	sort.Strings(out)
	return out
}

// LinkTicket sets the ticket of an existing test case and records ev in the
// outbox, in one transaction: both happen or neither. NotFound when the test
// does not exist (any more).
func (s *Store) LinkTicket(ctx context.Context, org string, repo repository.Ref, id string, t testhealth.Ticket, ev Event) error {
	tav, err := marshal(t, nil)
	if err != nil {
		return err
	}
	put, err := s.eventPut(org, ev)
	if err != nil {
		return err
	}
	err = s.transact(ctx,
		types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			Key: testKey(org, repo, id), ConditionExpression: aws.String("attribute_exists(PK)"),
		}},
		types.TransactWriteItem{Update: &types.Update{
			Key:                       metaKey(org, repo, id),
			UpdateExpression:          aws.String("SET ticket = :t"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberM{Value: tav}},
		}},
		types.TransactWriteItem{Put: put},
	)
	if failedAction(err, 0) {
		return errs.Wrap(errs.NotFound, err, "test %s not found in repository %s", id, repo)
	}
	return err
}
