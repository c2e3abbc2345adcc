package store

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
)

// TestCase is the aggregate item of one test case: everything a read needs,
// kept current as runs arrive, so that reading a test is one request
// whatever the length of its history. Time-window figures are kept as
// per-hour and per-day counters that the reader sums over the window ending
// now, so they stay exact without rewriting the item as time passes.
//
// The counters are stored as top-level attributes ("hp.493473" = passed runs
// in unix hour 493473) rather than as maps, because DynamoDB's ADD creates a
// missing top-level attribute, and the item itself, in one atomic update,
// while a map entry can only be set once its map exists. That lets
// concurrent ingests of different bundles count into the same test without
// a read and without losing a run.
type TestCase struct {
	Org       string  `dynamodbav:"org"`
	Repo      RepoRef `dynamodbav:"repo"` // spelling the repository was first seen with
	ID        string  `dynamodbav:"id"`
	Name      string  `dynamodbav:"name"`
	Variant   string  `dynamodbav:"variant"`
	FilePath  string  `dynamodbav:"file_path,omitempty"`
	Parent    string  `dynamodbav:"parent,omitempty"`
	Classname string  `dynamodbav:"classname,omitempty"`

	Status    TestStatus `dynamodbav:"status"`
	FirstSeen time.Time  `dynamodbav:"first_seen"`
	LastRun   time.Time  `dynamodbav:"last_run,omitempty"`

	// PassedByHour and FailedByHour count runs per unix hour (key: hour
	// number in decimal), for the failure rates.
	PassedByHour map[string]int `dynamodbav:"-"`
	FailedByHour map[string]int `dynamodbav:"-"`
	// MonitoredPassedByHour and MonitoredFailedByHour count the runs the
	// failure-rate monitor looks at: on its branches, outside uploads the
	// infrastructure guard set aside.
	MonitoredPassedByHour map[string]int `dynamodbav:"-"`
	MonitoredFailedByHour map[string]int `dynamodbav:"-"`
	// Failures are the failure clusters, keyed by the normalised text's hash.
	Failures map[string]FailureCluster `dynamodbav:"-"`
	// FailedPRs maps a pull request number to the time of its latest failed
	// run of this test.
	FailedPRs map[string]time.Time `dynamodbav:"-"`

	// Streak counts consecutive failed runs on the default branch (outside
	// guarded uploads); a pass sets it to 0.
	Streak int `dynamodbav:"streak,omitempty"`
	// Flake is the newest evidence of a failure and a pass on one commit.
	Flake *FlakeEvidence `dynamodbav:"flake,omitempty"`

	Codeowners         []string  `dynamodbav:"codeowners,omitempty"`
	QuarantineOverride string    `dynamodbav:"quarantine_override,omitempty"` // ALWAYS_QUARANTINE, NEVER_QUARANTINE, "" = UNSPECIFIED
	QuarantineSince    time.Time `dynamodbav:"quarantine_since,omitempty"`    // when it last became a quarantine candidate
	Ticket             *Ticket   `dynamodbav:"ticket,omitempty"`

	// Rev counts health writes (status, override): each carries the
	// condition that Rev is what the writer read.
	Rev int `dynamodbav:"rev"`

	// Quarantined is not stored: it depends on the repository's settings
	// too, and is decided when the test is read (testhealth.Quarantined).
	Quarantined bool `dynamodbav:"-"`
}

// TestStatus is a test's health and why.
type TestStatus struct {
	Value     string    `dynamodbav:"value"` // healthy, flaky, broken
	Reason    string    `dynamodbav:"reason"`
	Timestamp time.Time `dynamodbav:"at"`
}

// FlakeEvidence is a commit on which the test both failed and passed.
type FlakeEvidence struct {
	At     time.Time `dynamodbav:"at"`
	SHA    string    `dynamodbav:"sha"`
	Branch string    `dynamodbav:"branch"`
}

// FailureCluster is one group of similar failures.
type FailureCluster struct {
	Summary string         `dynamodbav:"summary"` // most recent original text, ≤256 chars
	Last    time.Time      `dynamodbav:"last"`
	ByDay   map[string]int `dynamodbav:"by_day"` // occurrences per unix day
}

// Ticket is the issue-tracker ticket linked to a test.
type Ticket struct {
	ID      string `dynamodbav:"id"`
	HTMLURL string `dynamodbav:"html_url"`
}

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
func (s *Store) GetTestCase(ctx context.Context, org string, repo RepoRef, id string) (TestCase, error) {
	item, err := s.getItem(ctx, testKey(org, repo, id))
	if err != nil {
		return TestCase{}, err
	}
	if item == nil {
		return TestCase{}, errs.E(errs.NotFound, "test %s not found in repository %s", id, repo)
	}
	return readTestCase(item)
}

// GetRepoAndTest reads a repository's settings and one of its tests in one
// BatchGetItem: a test's quarantine flag depends on both.
func (s *Store) GetRepoAndTest(ctx context.Context, org string, repo RepoRef, id string) (Repo, TestCase, error) {
	items, err := s.batchGet(ctx, []map[string]types.AttributeValue{repoKey(org, repo), testKey(org, repo, id)})
	if err != nil {
		return Repo{}, TestCase{}, err
	}
	var r Repo
	var tc TestCase
	found := 0
	for _, item := range items {
		switch item[AttrSK].(*types.AttributeValueMemberS).Value {
		case skTest:
			if tc, err = readTestCase(item); err != nil {
				return Repo{}, TestCase{}, err
			}
			found++
		default:
			if err := unmarshal(item, &r); err != nil {
				return Repo{}, TestCase{}, err
			}
			found++
		}
	}
	if found < 2 || tc.ID == "" || r.Ref.Host == "" {
		return Repo{}, TestCase{}, errs.E(errs.NotFound, "test %s not found in repository %s", id, repo)
	}
	return r, tc, nil
}

// GetTestCases reads tests of one repository by id, in one BatchGetItem per
// 100; absent ids are left out. The result is in the order of ids.
func (s *Store) GetTestCases(ctx context.Context, org string, repo RepoRef, ids []string) ([]TestCase, error) {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = testKey(org, repo, id)
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]TestCase, len(items))
	for _, item := range items {
		tc, err := readTestCase(item)
		if err != nil {
			return nil, err
		}
		byID[strings.ToLower(tc.ID)] = tc
	}
	out := make([]TestCase, 0, len(ids))
	for _, id := range ids {
		if tc, ok := byID[strings.ToLower(id)]; ok {
			out = append(out, tc)
		}
	}
	return out, nil
}

// readTestCase decodes an aggregate item: the fixed attributes through
// attributevalue, the counters from their prefixed names.
func readTestCase(item map[string]types.AttributeValue) (TestCase, error) {
	var tc TestCase
	if err := unmarshal(item, &tc); err != nil {
		return TestCase{}, err
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
	cluster := func(k string) FailureCluster {
		if tc.Failures == nil {
			tc.Failures = map[string]FailureCluster{}
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
func (tc TestCase) hourCounters() map[string]map[string]int {
	return map[string]map[string]int{
		attrPassedHour: tc.PassedByHour, attrFailedHour: tc.FailedByHour,
		attrMonPassedHour: tc.MonitoredPassedByHour, attrMonFailedHour: tc.MonitoredFailedByHour,
	}
}

// PutTestCase writes a whole test case item. Ingestion maintains these
// items with atomic updates; whole writes are for seeding and tests.
func (s *Store) PutTestCase(ctx context.Context, tc TestCase) error {
	item, err := marshal(tc, testKey(tc.Org, tc.Repo, tc.ID))
	if err != nil {
		return err
	}
	for prefix, m := range tc.hourCounters() {
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
	for k, v := range tc.indexKeys() {
		item[k] = v
	}
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: item})
}

// StaleAttributes names the counters of tc that have left every window
// (older than keep before now), so that a health write can remove them and
// the item stays small however long the test lives.
func (tc TestCase) StaleAttributes(now time.Time, keep time.Duration) []string {
	cut := now.Add(-keep)
	hour, day := cut.Unix()/3600, cut.Unix()/86400
	var out []string
	for prefix, m := range tc.hourCounters() {
		for h := range m {
			if n, err := strconv.ParseInt(h, 10, 64); err == nil && n < hour {
				out = append(out, prefix+h)
			}
		}
	}
	for k, c := range tc.Failures {
		fresh := false
		for d := range c.ByDay {
			if n, err := strconv.ParseInt(d, 10, 64); err == nil && n < day {
				out = append(out, attrClusterCount+k+"."+d)
			} else {
				fresh = true
			}
		}
		if !fresh {
			out = append(out, attrClusterText+k, attrClusterLast+k)
		}
	}
	for pr, at := range tc.FailedPRs {
		if at.Before(cut) {
			out = append(out, attrFailedPR+pr)
		}
	}
	sort.Strings(out)
	return out
}

// MaxClusters bounds the failure clusters an aggregate keeps: a test that
// fails with ever-new texts must not grow its item towards DynamoDB's
// 400 KB. The most recent clusters are kept.
const MaxClusters = 50

// ExcessClusters names the attributes of the clusters beyond the
// MaxClusters most recent ones, for removal.
func (tc TestCase) ExcessClusters() []string {
	if len(tc.Failures) <= MaxClusters {
		return nil
	}
	keys := make([]string, 0, len(tc.Failures))
	for k := range tc.Failures {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := tc.Failures[keys[i]], tc.Failures[keys[j]]
		if !a.Last.Equal(b.Last) {
			return a.Last.After(b.Last)
		}
		return keys[i] < keys[j]
	})
	var out []string
	for _, k := range keys[MaxClusters:] {
		out = append(out, attrClusterText+k, attrClusterLast+k)
		for d := range tc.Failures[k].ByDay {
			out = append(out, attrClusterCount+k+"."+d)
		}
	}
	sort.Strings(out)
	return out
}

// LinkTicket sets the ticket of an existing test case and records ev in the
// outbox, in one transaction: both happen or neither. NotFound when the test
// does not exist (any more).
func (s *Store) LinkTicket(ctx context.Context, org string, repo RepoRef, id string, t Ticket, ev Event) error {
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
