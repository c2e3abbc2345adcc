package store

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Sparse index keys of a test's index entry: GSI1 lists a repository's
// tests by unhealthy status, GSI2 its quarantine candidates ("A#" always,
// "U#" automatic, so that a repository without automatic quarantine reads
// only the "A#" range).
//
// The keys live on an item of their own (SK=INDEX, a few hundred bytes),
// written only when the test's health changes, not on the test's
// aggregate: the indexes project every attribute, so an aggregate in them
// had its whole copy rewritten in each index on every upload that counted
// a run. A list reads the entries, then the page's aggregates. An
// aggregate written before this still carries its keys, and lists read it
// as it is, until its next health write moves them.
func unhealthyPK(org string, repo repository.Ref, status string) string {
	return orgPK(org) + "#REPO#" + repo.Key() + "#STATUS#" + strings.ToUpper(status)
}

func quarantinePK(org string, repo repository.Ref) string {
	return orgPK(org) + "#REPO#" + repo.Key() + "#QUARANTINE"
}

func quarantineSK(candidate, id string) string {
	if candidate == testhealth.AlwaysQuarantine {
		return "A#" + strings.ToLower(id)
	}
	return "U#" + strings.ToLower(id)
}

// indexKeys are the index attributes tc's health gives its item; absent
// keys mean "not in that index".
func indexKeys(tc testhealth.TestCase) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	if v := tc.Status.Value; v == testhealth.Flaky || v == testhealth.Broken {
		out[AttrGSI1PK] = str(unhealthyPK(tc.Org, tc.Repo, v))
		out[AttrGSI1SK] = str(strings.ToLower(tc.ID))
	}
	if c := tc.QuarantineCandidate(); c != "" {
		out[AttrGSI2PK] = str(quarantinePK(tc.Org, tc.Repo))
		out[AttrGSI2SK] = str(quarantineSK(c, tc.ID))
	}
	return out
}

// maxRemovals bounds the attributes one health write removes, so that its
// update expression stays under DynamoDB's 4 KB.
const maxRemovals = 200

// UpdateHealth writes the health of a test as decided from before (the test
// as read whole): status, flake evidence and quarantine override on the
// counter item (what classification reads) and the meta item (what a read
// shows), the index entry they imply, the removal of what after no longer
// has (testhealth.Prune) from the items holding it, and events in the
// outbox, all in one transaction. It is conditional on the counter item's
// Rev being the one read: Conflict means another writer decided first, and
// the caller should read again and decide again.
func (s *Store) UpdateHealth(ctx context.Context, before, after testhealth.TestCase, events []Event) error {
	hotHours, metaHours := droppedHours(before, after)
	failures := droppedFailures(before, after)
	actions := []types.TransactWriteItem{
		counterHealthWrite(before, after, append(hotHours, failures...)),
		metaHealthWrite(before, after, metaHours),
	}
	if len(failures) > 0 {
		actions = append(actions, failuresRemoval(before, failures))
	}
	actions = append(actions, indexEntryWrite(after))
	for _, ev := range events {
		put, err := s.eventPut(before.Org, ev)
		if err != nil {
			return err
		}
		actions = append(actions, types.TransactWriteItem{Put: put})
	}
	err := s.transact(ctx, actions...)
	if failedAction(err, 0) {
		return errs.Wrap(errs.Conflict, err, "test %s changed meanwhile", before.ID)
	}
	if err != nil || len(after.FailedPRs) == len(before.FailedPRs) {
		return err
	}
	// Pull requests Prune dropped may be packed on the meta item, which
	// the transaction leaves alone (packing is conditional on the packed
	// value, not on Rev): they are pruned there on their own.
	return s.packFailedPRs(ctx, metaKey(before.Org, before.Repo, before.ID), nil)
}

// counterHealthWrite is the health write's update of the counter item:
// status value, rev, override, flake time, broken and episode counts, the
// removal of dropped (the hours and failures after no longer has: the
// earlier layout kept failures here too), conditional on the rev read.
func counterHealthWrite(before, after testhealth.TestCase, dropped []string) types.TransactWriteItem {
	hot := newUpdate()
	hot.setTo(attrStatusValue, str(after.Status.Value))
	hot.set = append(hot.set, hot.name(attrRev)+" = "+hot.value(num(before.Rev+1)))
	var hotRemove []string
	if after.QuarantineOverride != "" {
		hot.setTo(attrOverride, str(after.QuarantineOverride))
	} else {
		hotRemove = append(hotRemove, hot.name(attrOverride), hot.name(attrQuarantineOverride))
	}
	if until := overrideUntil(after); !until.IsZero() {
		hot.setTo(attrQuarantineUntil, num64(until.Unix()))
	} else {
		hotRemove = append(hotRemove, hot.name(attrQuarantineUntil))
	}
	if after.Flake != nil {
		hot.setTo(attrFlakeAt, num64(after.Flake.At.UnixNano()))
	}
	if !after.BrokenUntil.Equal(before.BrokenUntil) {
		hot.setTo(attrBrokenUntil, num64(after.BrokenUntil.Unix()))
	}
	if testhealth.EpisodeStarted(before, after) {
		// Set, not added: a flaky episode starts from the window's runs.
		hot.setTo(attrEpisode, episodeCounts{after.EpisodeRuns, after.EpisodeFailures}.number())
	}
	for _, k := range []string{AttrGSI1PK, AttrGSI1SK, AttrGSI2PK, AttrGSI2SK} {
		hotRemove = append(hotRemove, hot.name(k)) // an aggregate of the earlier layout moves them to the index entry
	}
	// An expression is at most 4 KB: a test idle for weeks may have
	// thousands of counters to drop; the rest go with the next write.
	for _, a := range capped(dropped, maxRemovals) {
		hotRemove = append(hotRemove, hot.name(a)) // the earlier layout kept failures here too
	}
	cond := ifItemExists + " AND (" + hot.name(attrRev) + " = " + hot.value(num(before.Rev))
	if before.Rev == 0 {
		cond += " OR attribute_not_exists(" + hot.name(attrRev) + ")"
	}
	cond += ")"
	return types.TransactWriteItem{Update: &types.Update{
		Key:                       testKey(before.Org, before.Repo, before.ID),
		UpdateExpression:          aws.String(withRemove(hot.expression(), hotRemove)),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  hot.names,
		ExpressionAttributeValues: hot.values,
	}}
}

// metaHealthWrite is the health write's update of the meta item: health
// as shown (status, flake evidence, override and its times) and the
// removal of the folded hours after no longer has.
func metaHealthWrite(before, after testhealth.TestCase, metaHours []string) types.TransactWriteItem {
	meta := newUpdate()
	meta.setTo(attrStatus, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		attrValue: str(after.Status.Value), attrReason: str(after.Status.Reason), attrAt: timeStr(after.Status.Timestamp),
	}})
	if after.Flake != nil {
		meta.setTo(attrFlake, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			attrAt: timeStr(after.Flake.At), attrSHA: str(after.Flake.SHA), attrBranch: str(after.Flake.Branch),
		}})
	}
	var metaRemove []string
	if after.QuarantineOverride != "" {
		meta.setTo(attrQuarantineOverride, str(after.QuarantineOverride))
	} else {
		metaRemove = append(metaRemove, meta.name(attrQuarantineOverride))
	}
	if until := overrideUntil(after); !until.IsZero() {
		meta.setTo(attrQuarantineEnd, timeStr(until))
	} else {
		metaRemove = append(metaRemove, meta.name(attrQuarantineEnd))
	}
	if !after.QuarantineSince.IsZero() {
		meta.setTo(attrQuarantineSince, timeStr(after.QuarantineSince))
	}
	for _, a := range capped(metaHours, maxRemovals) {
		metaRemove = append(metaRemove, meta.name(a))
	}
	return types.TransactWriteItem{Update: &types.Update{
		Key:                       metaKey(before.Org, before.Repo, before.ID),
		UpdateExpression:          aws.String(withRemove(meta.expression(), metaRemove)),
		ExpressionAttributeNames:  meta.names,
		ExpressionAttributeValues: meta.values,
	}}
}

// failuresRemoval removes from the failure item the clusters and pull
// requests after no longer has (at most maxRemovals of them).
func failuresRemoval(before testhealth.TestCase, failures []string) types.TransactWriteItem {
	fail := newUpdate()
	var remove []string
	for _, a := range capped(failures, maxRemovals) {
		remove = append(remove, fail.name(a))
	}
	return types.TransactWriteItem{Update: &types.Update{
		Key:                      failKey(before.Org, before.Repo, before.ID),
		UpdateExpression:         aws.String("REMOVE " + strings.Join(remove, ", ")),
		ExpressionAttributeNames: fail.names,
	}}
}

const skIndex = "INDEX"

// indexEntryWrite puts tc's index entry, or deletes it when tc's health
// puts it in no index.
func indexEntryWrite(tc testhealth.TestCase) types.TransactWriteItem {
	k := key(testPK(tc.Org, tc.Repo, tc.ID), skIndex)
	keys := indexKeys(tc)
	if len(keys) == 0 {
		return types.TransactWriteItem{Delete: &types.Delete{Key: k}}
	}
	item := map[string]types.AttributeValue{AttrPK: k[AttrPK], AttrSK: k[AttrSK], attrID: str(strings.ToLower(tc.ID))}
	for a, v := range keys {
		item[a] = v
	}
	if until := overrideUntil(tc); !until.IsZero() && keys[AttrGSI2PK] != nil {
		// The quarantine lists leave the entry out once the override has
		// ended (quarantineFilter), unless the test is a candidate by its
		// status too, until the next health write moves it.
		item[attrQuarantineUntil] = num64(until.Unix())
		if v := tc.Status.Value; v == testhealth.Flaky || v == testhealth.Broken {
			item[attrAlsoAuto] = str("1")
		}
	}
	return types.TransactWriteItem{Put: &types.Put{Item: item}}
}

// overrideUntil is the end of tc's override, zero when it has none.
func overrideUntil(tc testhealth.TestCase) time.Time {
	if tc.QuarantineOverride == "" {
		return time.Time{}
	}
	return tc.QuarantineUntil
}

// quarantineFilter keeps the quarantine index entries whose override has
// not ended at now; with automatic quarantine, also those of an unhealthy
// test whose override has.
func quarantineFilter(alwaysOnly bool, now time.Time, vals map[string]types.AttributeValue) string {
	vals[":now"] = num64(now.Unix())
	f := "(attribute_not_exists(" + attrQuarantineUntil + ") OR " + attrQuarantineUntil + " > :now"
	if !alwaysOnly {
		f += " OR attribute_exists(" + attrAlsoAuto + ")"
	}
	return f + ")"
}

// Page is one page of a list read from an index.
type Page struct {
	Tests []testhealth.TestCase
	// Next is the last key of this page when more may follow: pass it as
	// After to read on.
	Next string
}

// ListUnhealthy lists a repository's tests of one status (flaky or broken)
// in id order, starting after the id after (""; from the start), or before
// before when reading backwards. One Query on GSI1.
func (s *Store) ListUnhealthy(ctx context.Context, org string, repo repository.Ref, status string, q PageQuery) (Page, error) {
	return s.listIndex(ctx, org, repo, IndexGSI1, AttrGSI1PK, AttrGSI1SK, unhealthyPK(org, repo, status), "", nil, q)
}

// CountUnhealthy counts a repository's tests of one status.
func (s *Store) CountUnhealthy(ctx context.Context, org string, repo repository.Ref, status string) (int, error) {
	return s.countIndex(ctx, IndexGSI1, AttrGSI1PK, AttrGSI1SK, unhealthyPK(org, repo, status), "", nil)
}

// ListQuarantineCandidates lists a repository's quarantine candidates,
// only those overridden to always when alwaysOnly, ordered "always" first,
// then by id. One Query on GSI2, which leaves out the overrides that have
// ended (quarantineFilter): their tests are read with the repository's
// rule applied (testhealth.Expire), and the next health write moves them.
func (s *Store) ListQuarantineCandidates(ctx context.Context, org string, repo repository.Ref, alwaysOnly bool, q PageQuery) (Page, error) {
	prefix := ""
	if alwaysOnly {
		prefix = "A#"
	}
	return s.listIndex(ctx, org, repo, IndexGSI2, AttrGSI2PK, AttrGSI2SK, quarantinePK(org, repo), prefix, s.quarantineFilter(alwaysOnly), q)
}

// CountQuarantineCandidates counts what ListQuarantineCandidates lists.
func (s *Store) CountQuarantineCandidates(ctx context.Context, org string, repo repository.Ref, alwaysOnly bool) (int, error) {
	prefix := ""
	if alwaysOnly {
		prefix = "A#"
	}
	return s.countIndex(ctx, IndexGSI2, AttrGSI2PK, AttrGSI2SK, quarantinePK(org, repo), prefix, s.quarantineFilter(alwaysOnly))
}

func (s *Store) quarantineFilter(alwaysOnly bool) func(map[string]types.AttributeValue) string {
	now := s.now()
	return func(vals map[string]types.AttributeValue) string { return quarantineFilter(alwaysOnly, now, vals) }
}

// PageQuery selects a page of an index: Limit items after the sort key
// After, or, when Before is set, the Limit items just before it.
type PageQuery struct {
	Limit  int
	After  string
	Before string
	// Last selects the final Limit items (the last page).
	Last bool
}

func (s *Store) listIndex(ctx context.Context, org string, repo repository.Ref, index, pkAttr, skAttr, pk, prefix string, filterOf func(map[string]types.AttributeValue) string, q PageQuery) (Page, error) {
	cond := pkAttr + " = :pk"
	vals := map[string]types.AttributeValue{":pk": str(pk)}
	forward := true
	switch {
	case q.Before != "":
		cond += " AND " + skAttr + " < :k"
		vals[":k"] = str(q.Before)
		forward = false
	case q.Last:
		forward = false
	case q.After != "":
		cond += " AND " + skAttr + " > :k"
		vals[":k"] = str(q.After)
	}
	var filter *string
	if prefix != "" {
		if q.Before == "" && q.After == "" {
			cond = pkAttr + " = :pk AND begins_with(" + skAttr + ", :pre)"
		} else {
			// A key range and a prefix cannot both be key conditions; the
			// prefix range is contiguous, so filtering keeps pages whole.
			filter = aws.String("begins_with(" + skAttr + ", :pre)")
		}
		vals[":pre"] = str(prefix)
	}
	if filterOf != nil {
		f := filterOf(vals)
		if filter != nil {
			f = *filter + " AND " + f
		}
		filter = aws.String(f)
	}
	var tests []testhealth.TestCase
	var lastKey string
	var start map[string]types.AttributeValue
	for len(tests) < q.Limit {
		out, err := s.query(ctx, &dynamodb.QueryInput{
			IndexName:                 aws.String(index),
			KeyConditionExpression:    aws.String(cond),
			FilterExpression:          filter,
			ExpressionAttributeValues: vals,
			ScanIndexForward:          aws.Bool(forward),
			Limit:                     aws.Int32(int32(q.Limit - len(tests))),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return Page{}, err
		}
		page, err := s.entriesToTests(ctx, org, repo, out.Items)
		if err != nil {
			return Page{}, err
		}
		tests = append(tests, page...)
		if n := len(out.Items); n > 0 {
			lastKey = out.Items[n-1][skAttr].(*types.AttributeValueMemberS).Value
		}
		if start = out.LastEvaluatedKey; start == nil {
			lastKey = ""
			break
		}
	}
	if !forward {
		for i, j := 0, len(tests)-1; i < j; i, j = i+1, j-1 {
			tests[i], tests[j] = tests[j], tests[i]
		}
		lastKey = ""
	}
	return Page{Tests: tests, Next: lastKey}, nil
}

// entriesToTests reads the tests of a page of index items, in order: the
// items of the tests of index entries in BatchGetItems (eventually
// consistent: a list), an old aggregate that still carries its keys as it
// is. A test gone meanwhile is left out.
func (s *Store) entriesToTests(ctx context.Context, org string, repo repository.Ref, items []map[string]types.AttributeValue) ([]testhealth.TestCase, error) {
	var ids []string
	for _, item := range items {
		if skOf(item) == skIndex {
			ids = append(ids, strAttr(item[attrID]))
		}
	}
	byID := map[string]testhealth.TestCase{}
	if len(ids) > 0 {
		got, err := s.readTests(ctx, org, repo, ids, false)
		if err != nil {
			return nil, err
		}
		for _, tc := range got {
			byID[strings.ToLower(tc.ID)] = tc
		}
	}
	out := make([]testhealth.TestCase, 0, len(items))
	for _, item := range items {
		if skOf(item) == skIndex {
			if tc, ok := byID[strAttr(item[attrID])]; ok {
				out = append(out, tc)
			}
			continue
		}
		tc, err := readTestCase(item)
		if err != nil {
			return nil, err
		}
		out = append(out, testhealth.Expire(tc, s.now()))
	}
	return out, nil
}

func (s *Store) countIndex(ctx context.Context, index, pkAttr, skAttr, pk, prefix string, filterOf func(map[string]types.AttributeValue) string) (int, error) {
	cond := pkAttr + " = :pk"
	vals := map[string]types.AttributeValue{":pk": str(pk)}
	if prefix != "" {
		cond += " AND begins_with(" + skAttr + ", :pre)"
		vals[":pre"] = str(prefix)
	}
	var filter *string
	if filterOf != nil {
		filter = aws.String(filterOf(vals))
	}
	n := 0
	var start map[string]types.AttributeValue
	for {
		out, err := s.query(ctx, &dynamodb.QueryInput{
			IndexName: aws.String(index), KeyConditionExpression: aws.String(cond), FilterExpression: filter,
			ExpressionAttributeValues: vals, Select: types.SelectCount, ExclusiveStartKey: start,
		})
		if err != nil {
			return 0, err
		}
		n += int(out.Count)
		if start = out.LastEvaluatedKey; start == nil {
			return n, nil
		}
	}
}

// IndexKey is the sort key a test has in the list it was read from, for
// page tokens: its id in the unhealthy lists, reason and id in the
// quarantine list.
func IndexKey(tc testhealth.TestCase, quarantineList bool) string {
	if quarantineList {
		c := tc.QuarantineCandidate()
		if tc.ExpiredOverride == testhealth.AlwaysQuarantine {
			c = testhealth.AlwaysQuarantine // still where the override put it
		}
		return quarantineSK(c, tc.ID)
	}
	return strings.ToLower(tc.ID)
}

// FailedTestsBetween returns the ids of a repository's tests with a failed
// run in [start, end), each with its latest failure time in the range:
// per day of the range (at most 8 for the contract's 7 days), one Query of
// the day's failed runs and one of the index the earlier layout kept them
// in (its run items expire 35 days after they were written).
func (s *Store) FailedTestsBetween(ctx context.Context, org string, repo repository.Ref, start, end time.Time) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := s.eachFailedRun(ctx, org, repo, start, end, func(at time.Time, id string, _ map[string]types.AttributeValue) {
		if at.After(out[id]) {
			out[id] = at
		}
	})
	return out, err
}

// FailedRunsBetween lists a repository's failed runs in [start, end).
func (s *Store) FailedRunsBetween(ctx context.Context, org string, repo repository.Ref, start, end time.Time) ([]testhealth.RunRecord, error) {
	var out []testhealth.RunRecord
	err := s.eachFailedRun(ctx, org, repo, start, end, func(_ time.Time, _ string, item map[string]types.AttributeValue) {
		var r testhealth.RunRecord
		if unmarshal(item, &r) == nil {
			out = append(out, r)
		}
	})
	return out, err
}

// eachFailedRun calls fn with each failed run of a repository in [start,
// end): its time, its test and its item.
func (s *Store) eachFailedRun(ctx context.Context, org string, repo repository.Ref, start, end time.Time, fn func(time.Time, string, map[string]types.AttributeValue)) error {
	lo, hi := start.UTC().Format(SortableTime), end.UTC().Format(SortableTime)
	for day := start.UTC().Truncate(testhealth.Day); day.Before(end); day = day.Add(testhealth.Day) {
		pk := failsPK(org, repo, day)
		for _, q := range []struct{ index, pkAttr, skAttr string }{
			{"", AttrPK, AttrSK},                // the day's failed runs
			{IndexGSI1, AttrGSI1PK, AttrGSI1SK}, // the earlier layout's run items
		} {
			in := &dynamodb.QueryInput{
				KeyConditionExpression: aws.String(q.pkAttr + " = :pk AND " + q.skAttr + " BETWEEN :lo AND :hi"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":pk": str(pk), ":lo": str(lo), ":hi": str(hi),
				},
			}
			if q.index != "" {
				in.IndexName = aws.String(q.index)
			}
			for {
				res, err := s.query(ctx, in)
				if err != nil {
					return err
				}
				for _, item := range res.Items {
					parts := strings.SplitN(strAttr(item[q.skAttr]), "#", 3)
					if len(parts) < 2 || parts[0] >= hi { // BETWEEN is inclusive of hi; the range is not
						continue
					}
					at, _ := time.Parse(SortableTime, parts[0])
					fn(at, parts[1], item)
				}
				if in.ExclusiveStartKey = res.LastEvaluatedKey; in.ExclusiveStartKey == nil {
					break
				}
			}
		}
	}
	return nil
}
