package store

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Names of the counter attributes: prefix, then the hour, day or PR number.
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

// GetTestCase reads one test case of a repository: one GetItem. Absent
// repository, absent test and another tenant's test are the same NotFound.
func (s *Store) GetTestCase(ctx context.Context, org string, repo repository.Ref, id string) (testhealth.TestCase, error) {
	item, err := s.getItem(ctx, testKey(org, repo, id))
	if err != nil {
		return testhealth.TestCase{}, err
	}
	if item == nil {
		return testhealth.TestCase{}, errs.E(errs.NotFound, "test %s not found in repository %s", id, repo)
	}
	return readTestCase(item)
}

// GetRepoAndTest reads a repository's settings and one of its tests in one
// BatchGetItem: a test's quarantine flag depends on both.
func (s *Store) GetRepoAndTest(ctx context.Context, org string, repo repository.Ref, id string) (Repo, testhealth.TestCase, error) {
	items, err := s.batchGet(ctx, []map[string]types.AttributeValue{repoKey(org, repo), testKey(org, repo, id)})
	if err != nil {
		return Repo{}, testhealth.TestCase{}, err
	}
	var r Repo
	var tc testhealth.TestCase
	found := 0
	for _, item := range items {
		switch item[AttrSK].(*types.AttributeValueMemberS).Value {
		case skTest:
			if tc, err = readTestCase(item); err != nil {
				return Repo{}, testhealth.TestCase{}, err
			}
			found++
		default:
			if err := unmarshal(item, &r); err != nil {
				return Repo{}, testhealth.TestCase{}, err
			}
			found++
		}
	}
	if found < 2 || tc.ID == "" || r.Ref.Host == "" {
		return Repo{}, testhealth.TestCase{}, errs.E(errs.NotFound, "test %s not found in repository %s", id, repo)
	}
	return r, tc, nil
}

// GetTestCases reads tests of one repository by id, in one BatchGetItem per
// 100; absent ids are left out. The result is in the order of ids.
func (s *Store) GetTestCases(ctx context.Context, org string, repo repository.Ref, ids []string) ([]testhealth.TestCase, error) {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = testKey(org, repo, id)
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]testhealth.TestCase, len(items))
	for _, item := range items {
		tc, err := readTestCase(item)
		if err != nil {
			return nil, err
		}
		byID[strings.ToLower(tc.ID)] = tc
	}
	out := make([]testhealth.TestCase, 0, len(ids))
	for _, id := range ids {
		if tc, ok := byID[strings.ToLower(id)]; ok {
			out = append(out, tc)
		}
	}
	return out, nil
}

// readTestCase decodes an aggregate item: the fixed attributes through
// attributevalue, the counters from their prefixed names.
func readTestCase(item map[string]types.AttributeValue) (testhealth.TestCase, error) {
	var tc testhealth.TestCase
	if err := unmarshal(item, &tc); err != nil {
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
		(*m)[k] = v
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
	for name, av := range item {
		switch {
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
			if s, ok := av.(*types.AttributeValueMemberS); ok {
				c.Summary = s.Value
			}
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
			tc.FailedPRs[name[len(attrFailedPR):]] = timeAttr(av)
		}
	}
	return tc, nil
}

func timeAttr(av types.AttributeValue) time.Time {
	s, ok := av.(*types.AttributeValueMemberS)
	if !ok {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, s.Value)
	return t
}

func num(n int) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
}

func timeStr(t time.Time) *types.AttributeValueMemberS {
	return str(t.UTC().Format(time.RFC3339Nano))
}

// hourCounters pairs each per-hour counter map with its attribute prefix.
func hourCounters(tc testhealth.TestCase) map[string]map[string]int {
	return map[string]map[string]int{
		attrPassedHour: tc.PassedByHour, attrFailedHour: tc.FailedByHour,
		attrMonPassedHour: tc.MonitoredPassedByHour, attrMonFailedHour: tc.MonitoredFailedByHour,
	}
}

// PutTestCase writes a whole test case item. Ingestion maintains these
// items with atomic updates; whole writes are for seeding and tests.
func (s *Store) PutTestCase(ctx context.Context, tc testhealth.TestCase) error {
	item, err := marshal(tc, testKey(tc.Org, tc.Repo, tc.ID))
	if err != nil {
		return err
	}
	for prefix, m := range hourCounters(tc) {
		for k, n := range m {
			item[prefix+k] = num(n)
		}
	}
	for k, c := range tc.Failures {
		item[attrClusterText+k] = str(c.Summary)
		item[attrClusterLast+k] = timeStr(c.Last)
		for d, n := range c.ByDay {
			item[attrClusterCount+k+"."+d] = num(n)
		}
	}
	for pr, at := range tc.FailedPRs {
		item[attrFailedPR+pr] = timeStr(at)
	}
	return s.transact(ctx, types.TransactWriteItem{Put: &types.Put{Item: item}}, indexEntryWrite(tc))
}

// droppedCounters names the counter attributes of before that after no
// longer has (testhealth.Prune dropped them), for a health write to
// remove.
func droppedCounters(before, after testhealth.TestCase) []string {
	var out []string
	now := hourCounters(after)
	for prefix, m := range hourCounters(before) {
		for h := range m {
			if _, ok := now[prefix][h]; !ok {
				out = append(out, prefix+h)
			}
		}
	}
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
		types.TransactWriteItem{Update: &types.Update{
			Key:                       testKey(org, repo, id),
			UpdateExpression:          aws.String("SET ticket = :t"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberM{Value: tav}},
		}},
		types.TransactWriteItem{Put: put},
	)
	if failedAction(err, 0) {
		return errs.Wrap(errs.NotFound, err, "test %s not found in repository %s", id, repo)
	}
	return err
}
