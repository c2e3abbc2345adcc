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

// GetTestCase reads one test case of a repository, consistently: one Query
// of its items. Absent repository, absent test and another tenant's test
// are the same NotFound.
func (s *Store) GetTestCase(ctx context.Context, org string, repo repository.Ref, id string) (testhealth.TestCase, error) {
	return s.readTest(ctx, org, repo, id, true)
}

// readTest reads a test's items (counter, failure, meta) in one Query.
func (s *Store) readTest(ctx context.Context, org string, repo repository.Ref, id string, consistent bool) (testhealth.TestCase, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND begins_with(" + AttrSK + ", :test)"),
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
	merged := mergeItems(items)
	var tc testhealth.TestCase
	if err := unmarshal(merged, &tc); err != nil {
		return testhealth.TestCase{}, err
	}
	sizeHourMaps(&tc, merged)
	for name, av := range merged {
		if readHourAttr(&tc, name, av) {
			continue
		}
		readHealthAttr(&tc, name, av)
		readCounterAttr(&tc, name, av)
		readFailureAttr(&tc, name, av)
	}
	for _, m := range []*map[string]int{&tc.PassedByHour, &tc.FailedByHour, &tc.MonitoredPassedByHour, &tc.MonitoredFailedByHour} {
		if len(*m) == 0 {
			*m = nil // as before sizing: none is nil
		}
	}
	return tc, nil
}

// mergeItems merges a test's items into one attribute map, in sort-key
// order (TEST, TEST#FAIL, TEST#META): where two hold an attribute, the
// meta item wins.
func mergeItems(items []map[string]types.AttributeValue) map[string]types.AttributeValue {
	slices.SortFunc(items, func(a, b map[string]types.AttributeValue) int {
		return strings.Compare(skOf(a), skOf(b))
	})
	merged := map[string]types.AttributeValue{}
	for _, item := range items {
		for k, v := range item {
			merged[k] = v
		}
	}
	return merged
}

// sizeHourMaps makes tc's hour maps once, at their size: a mature test has
// some 200 hours. Most are packed (attrFoldedHours), at least 5 bytes an
// hour.
func sizeHourMaps(tc *testhealth.TestCase, merged map[string]types.AttributeValue) {
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
}

// readHourAttr adds an hour's packed counters (the counter item's, or the
// meta item's folded ones, packed or one attribute each) to tc, and
// reports whether name was one of those.
func readHourAttr(tc *testhealth.TestCase, name string, av types.AttributeValue) bool {
	if h, ok := numbered(name, attrHour); ok {
		if c, ok := unpackHour(av); ok {
			addHour(tc, strconv.FormatInt(h, 10), c)
		}
		return true
	}
	if name == attrFoldedHours {
		if b, ok := av.(*types.AttributeValueMemberB); ok {
			unpackHours(b.Value, func(h int64, c hourCounts) { addHour(tc, strconv.FormatInt(h, 10), c) })
		}
		return true
	}
	if h, ok := numbered(name, attrOldHour); ok {
		if c, ok := unpackHour(av); ok {
			addHour(tc, strconv.FormatInt(h, 10), c)
		}
		return true
	}
	return false
}

// readCounterAttr reads the counter item's latest run and status value,
// and the earlier layout's per-hour counters, one attribute each.
func readCounterAttr(tc *testhealth.TestCase, name string, av types.AttributeValue) {
	switch {
	case name == attrLastRun:
		if t := nanosAttr(av); t.After(tc.LastRun) {
			tc.LastRun = t
		}
	case name == attrStatusValue:
		if tc.Status.Value == "" {
			tc.Status.Value = strAttr(av)
		}
	case strings.HasPrefix(name, attrPassedHour):
		addCount(&tc.PassedByHour, name[len(attrPassedHour):], av)
	case strings.HasPrefix(name, attrFailedHour):
		addCount(&tc.FailedByHour, name[len(attrFailedHour):], av)
	case strings.HasPrefix(name, attrMonPassedHour):
		addCount(&tc.MonitoredPassedByHour, name[len(attrMonPassedHour):], av)
	case strings.HasPrefix(name, attrMonFailedHour):
		addCount(&tc.MonitoredFailedByHour, name[len(attrMonFailedHour):], av)
	}
}

// readFailureAttr reads the failure item's clusters and pull requests, and
// the meta item's packed pull-request times.
func readFailureAttr(tc *testhealth.TestCase, name string, av types.AttributeValue) {
	switch {
	case strings.HasPrefix(name, attrClusterCount):
		k, day, ok := strings.Cut(name[len(attrClusterCount):], ".")
		if !ok {
			return
		}
		c := clusterOf(tc, k)
		addCount(&c.ByDay, day, av)
		tc.Failures[k] = c
	case strings.HasPrefix(name, attrClusterText):
		k := name[len(attrClusterText):]
		c := clusterOf(tc, k)
		c.Summary = strAttr(av)
		tc.Failures[k] = c
	case strings.HasPrefix(name, attrClusterLast):
		k := name[len(attrClusterLast):]
		c := clusterOf(tc, k)
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

// addCount adds a number attribute to (*m)[k], making the map when nil;
// anything else is left out.
func addCount(m *map[string]int, k string, av types.AttributeValue) {
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

// clusterOf is tc's failure cluster k, with its maps made.
func clusterOf(tc *testhealth.TestCase, k string) testhealth.FailureCluster {
	if tc.Failures == nil {
		tc.Failures = map[string]testhealth.FailureCluster{}
	}
	c := tc.Failures[k]
	if c.ByDay == nil {
		c.ByDay = map[string]int{}
	}
	return c
}

// PutTestCase writes a whole test: its counter, meta and failure items and
// its index entry. Ingestion maintains these items with atomic updates;
// whole writes are for seeding and tests. Every hour goes to the counter
// item; runs counted as monitored beyond a test's totals are not kept.
func (s *Store) PutTestCase(ctx context.Context, tc testhealth.TestCase) error {
	meta, err := marshal(tc, metaKey(tc.Org, tc.Repo, tc.ID))
	if err != nil {
		return err
	}
	for _, a := range []string{attrRev, attrLastRunTime, attrStreak} { // the counter item's
		delete(meta, a)
	}
	if len(tc.FailedPRs) > 0 {
		meta[attrPackedPRs] = &types.AttributeValueMemberB{Value: packPRs(tc.FailedPRs)}
	}
	actions := []types.TransactWriteItem{{Put: &types.Put{Item: counterItem(tc)}}, {Put: &types.Put{Item: meta}}}
	if fail := failureItem(tc); len(fail) > 2 {
		actions = append(actions, types.TransactWriteItem{Put: &types.Put{Item: fail}})
	}
	return s.transact(ctx, append(actions, indexEntryWrite(tc))...)
}

// counterItem is tc's whole counter item, as PutTestCase writes it.
func counterItem(tc testhealth.TestCase) map[string]types.AttributeValue {
	hot := testKey(tc.Org, tc.Repo, tc.ID)
	for h, c := range hourCountsOf(tc) {
		hot[attrHour+h] = c.number()
	}
	hot[attrRev] = num(tc.Rev)
	hot[attrIdentityHash] = str(identityHash(tc))
	if tc.Codeowners != nil {
		hot[attrOwnersHash] = str(ownersHash(tc.Codeowners))
	}
	if tc.Streak != 0 {
		hot[attrStreak] = num(tc.Streak)
	}
	if !tc.LastRun.IsZero() {
		hot[attrLastRun] = num64(tc.LastRun.UnixNano())
	}
	if tc.Status.Value != "" {
		hot[attrStatusValue] = str(tc.Status.Value)
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
		hot[attrOverride] = str(tc.QuarantineOverride)
	}
	if tc.Flake != nil {
		hot[attrFlakeAt] = num64(tc.Flake.At.UnixNano())
	}
	return hot
}

// hourCountsOf packs tc's hour maps into the counter item's hours: the
// monitored runs, and the others beyond them.
func hourCountsOf(tc testhealth.TestCase) map[string]hourCounts {
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
	return hours
}

// failureItem is tc's failure item, as PutTestCase writes it: its keys
// alone when tc has no failure cluster.
func failureItem(tc testhealth.TestCase) map[string]types.AttributeValue {
	fail := failKey(tc.Org, tc.Repo, tc.ID)
	for k, c := range tc.Failures {
		fail[attrClusterText+k] = str(c.Summary)
		fail[attrClusterLast+k] = num64(c.Last.UnixMilli())
		for d, n := range c.ByDay {
			fail[attrClusterCount+k+"."+d] = num(n)
		}
	}
	return fail
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
			Key: testKey(org, repo, id), ConditionExpression: aws.String(ifItemExists),
		}},
		types.TransactWriteItem{Update: &types.Update{
			Key:                       metaKey(org, repo, id),
			UpdateExpression:          aws.String("SET " + attrTicket + " = :t"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberM{Value: tav}},
		}},
		types.TransactWriteItem{Put: put},
	)
	if failedAction(err, 0) {
		return errs.Wrap(errs.NotFound, err, "test %s not found in repository %s", id, repo)
	}
	return err
}
