package store

import (
	"context"
	"errors"
	"fmt"
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

// Retention of history: run items outlive the longest window (7 days) and
// the contract's 30 days of history; commit items outlive the longest
// pass-on-retry recovery period (15 days).
const (
	RunRetention    = 35 * 24 * time.Hour
	CommitRetention = 16 * 24 * time.Hour
	// MaxTransactActions is DynamoDB's limit of actions per transaction.
	MaxTransactActions = 100
	// maxRunsPerTest keeps one test's share of a transaction, and its
	// update expression, small; further runs go to the next transaction.
	maxRunsPerTest = 40
)

// RunBatch gathers the runs of one upload, test by test, into what one
// RecordRuns transaction takes: a test costs one action per run, one for
// its aggregate and one for its commit item.
type RunBatch struct {
	tests   []testhealth.TestRuns
	index   map[string]int // test id → position in tests
	actions int
}

// Add adds run to the test of id, starting it with newTest (its identity
// and owners) when the batch does not hold it yet. It reports false, and
// adds nothing, when the run does not fit: record the batch (Take), and
// add it again.
func (b *RunBatch) Add(id string, newTest func() testhealth.TestRuns, run testhealth.Run) bool {
	i, ok := b.index[id]
	need := 1
	if !ok {
		need = 3 // the run, the aggregate, the commit
	}
	if b.actions+need > MaxTransactActions || (ok && len(b.tests[i].Runs) >= maxRunsPerTest) {
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
	b.actions += need
	return true
}

// Take returns the batch's tests, for RecordRuns, and empties the batch.
func (b *RunBatch) Take() []testhealth.TestRuns {
	tests := b.tests
	*b = RunBatch{}
	return tests
}

// RecordRuns stores the runs of several tests of one upload in one
// transaction: for each test, one item per run (created only if absent, so
// that an upload ingested twice counts once), one atomic update of the
// test's aggregate item and one of its commit item. The counters are ADDed,
// so concurrent uploads of the same tests lose nothing. Runs already
// recorded (an earlier, interrupted ingest of the same upload) are left out
// and the rest retried; so are transactions that collided with another
// writer. tests are what a RunBatch took, so they fit one transaction.
func (s *Store) RecordRuns(ctx context.Context, up testhealth.UploadRuns, tests []testhealth.TestRuns) error {
	done := map[string]bool{} // run item keys already stored
	for try := 0; ; try++ {
		var actions []types.TransactWriteItem
		var runKeys []string // runKeys[i]: the run key of action i, "" for others
		for _, tr := range tests {
			runs := tr.Runs[:0:0]
			for _, r := range tr.Runs {
				if !done[runSK(up, r)+tr.Test.ID] {
					runs = append(runs, r)
				}
			}
			if len(runs) == 0 {
				continue
			}
			for _, r := range runs {
				put, err := runPut(up, tr.Test.ID, r)
				if err != nil {
					return err
				}
				actions = append(actions, types.TransactWriteItem{Put: put})
				runKeys = append(runKeys, runSK(up, r)+tr.Test.ID)
			}
			actions = append(actions, types.TransactWriteItem{Update: aggregateUpdate(up, tr, runs)})
			runKeys = append(runKeys, "")
			if !up.Guarded {
				actions = append(actions, types.TransactWriteItem{Update: commitUpdate(up, tr.Test.ID, runs)})
				runKeys = append(runKeys, "")
			}
		}
		if len(actions) == 0 {
			return nil
		}
		if len(actions) > MaxTransactActions {
			return errs.E(errs.Internal, "RecordRuns: %d actions in one transaction", len(actions))
		}
		err := s.transact(ctx, actions...)
		if err == nil {
			return nil
		}
		var cf *conditionFailed
		switch {
		case asConditionFailed(err, &cf):
			// Only run puts carry a condition: those runs are in already.
			for _, i := range cf.actions {
				if runKeys[i] != "" {
					done[runKeys[i]] = true
				}
			}
		case errs.Is(err, errs.Unavailable) && try < 8:
			if err := backoff(ctx, try+1); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

func runSK(up testhealth.UploadRuns, r testhealth.Run) string {
	return fmt.Sprintf("RUN#%s#%s#%07d", up.At.UTC().Format(SortableTime), up.Upload, r.Seq)
}

func runPut(up testhealth.UploadRuns, testID string, r testhealth.Run) (*types.Put, error) {
	rec := testhealth.RunRecord{
		Status: r.Status, At: up.At.UTC(), Upload: up.Upload, SHA: up.SHA, Branch: up.Branch, PR: up.PR,
		Attempt: r.Attempt, Duration: r.Duration.Milliseconds(), Message: clipBytes(r.Message, 1024), TestID: testID,
	}
	item, err := marshal(rec, key(testPK(up.Org, up.Repo, testID), runSK(up, r)))
	if err != nil {
		return nil, err
	}
	item[AttrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(up.At.Add(RunRetention).Unix(), 10)}
	if r.Failed() {
		// Failed runs are indexed by day, for list-failing-tests.
		item[AttrGSI1PK] = str(failsPK(up.Org, up.Repo, up.At))
		item[AttrGSI1SK] = str(up.At.UTC().Format(SortableTime) + "#" + strings.ToLower(testID) + "#" + up.Upload + "#" + strconv.Itoa(r.Seq))
	}
	return &types.Put{Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}, nil
}

func failsPK(org string, repo repository.Ref, at time.Time) string {
	return orgPK(org) + "#REPO#" + repo.Key() + "#FAILS#" + testhealth.DayKey(at)
}

// update collects an update expression's clauses and values.
type update struct {
	set, add []string
	names    map[string]string
	values   map[string]types.AttributeValue
}

func newUpdate() *update {
	return &update{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// name and value return placeholders for an attribute name and a value.
func (u *update) name(n string) string {
	p := "#n" + strconv.Itoa(len(u.names))
	u.names[p] = n
	return p
}

func (u *update) value(v types.AttributeValue) string {
	p := ":v" + strconv.Itoa(len(u.values))
	u.values[p] = v
	return p
}

func (u *update) setTo(attr string, v types.AttributeValue) {
	u.set = append(u.set, u.name(attr)+" = "+u.value(v))
}

func (u *update) setIfAbsent(attr string, v types.AttributeValue) {
	n := u.name(attr)
	u.set = append(u.set, n+" = if_not_exists("+n+", "+u.value(v)+")")
}

func (u *update) addN(attr string, n int) {
	if n != 0 {
		u.add = append(u.add, u.name(attr)+" "+u.value(num(n)))
	}
}

func (u *update) expression() string {
	var parts []string
	if len(u.set) > 0 {
		parts = append(parts, "SET "+strings.Join(u.set, ", "))
	}
	if len(u.add) > 0 {
		parts = append(parts, "ADD "+strings.Join(u.add, ", "))
	}
	return strings.Join(parts, " ")
}

// aggregateUpdate counts runs into the test's aggregate item, creating it
// on the first run.
func aggregateUpdate(up testhealth.UploadRuns, tr testhealth.TestRuns, runs []testhealth.Run) *types.Update {
	u := newUpdate()
	t := tr.Test
	at := up.At.UTC()
	u.setTo("org", str(up.Org))
	u.setIfAbsent("repo", &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"host": str(up.Repo.Host), "owner": str(up.Repo.Owner), "name": str(up.Repo.Name)}})
	u.setTo("id", str(strings.ToLower(t.ID)))
	u.setTo("name", str(t.Name))
	u.setTo("variant", str(t.Variant))
	for attr, v := range map[string]string{"file_path": t.FilePath, "parent": t.Parent, "classname": t.Classname} {
		if v != "" {
			u.setTo(attr, str(v))
		}
	}
	u.setIfAbsent("first_seen", timeStr(at))
	u.setTo("last_run", timeStr(at))
	if tr.Codeowners != nil {
		owners := make([]types.AttributeValue, len(tr.Codeowners))
		for i, o := range tr.Codeowners {
			owners[i] = str(o)
		}
		u.setTo("codeowners", &types.AttributeValueMemberL{Value: owners})
	}
	hour, day := testhealth.HourKey(at), testhealth.DayKey(at)
	passed, failed := 0, 0
	clusters := map[string]int{}
	var summaries []testhealth.Run // the last failure of each cluster, in order
	streak, reset := 0, false
	for _, r := range runs {
		switch {
		case r.Status == "passed":
			passed++
			streak, reset = 0, true
		case r.Failed():
			failed++
			streak++
			if r.Cluster != "" {
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
		}
	}
	u.addN(attrPassedHour+hour, passed)
	u.addN(attrFailedHour+hour, failed)
	if up.Monitored {
		u.addN(attrMonPassedHour+hour, passed)
		u.addN(attrMonFailedHour+hour, failed)
	}
	if up.Streak {
		if reset {
			u.setTo("streak", num(streak))
		} else {
			u.addN("streak", streak)
		}
	}
	for _, r := range summaries {
		u.addN(attrClusterCount+r.Cluster+"."+day, clusters[r.Cluster])
		u.setTo(attrClusterText+r.Cluster, str(r.Summary))
		u.setTo(attrClusterLast+r.Cluster, timeStr(at))
	}
	if failed > 0 && up.PR > 0 {
		u.setTo(attrFailedPR+strconv.Itoa(up.PR), timeStr(at))
	}
	return &types.Update{
		Key:                       testKey(up.Org, up.Repo, t.ID),
		UpdateExpression:          aws.String(u.expression()),
		ExpressionAttributeNames:  u.names,
		ExpressionAttributeValues: u.values,
	}
}

// commitUpdate records on the test's commit item that it passed or failed
// on up.SHA; the first time of each is kept, so repeating it changes
// nothing.
func commitUpdate(up testhealth.UploadRuns, testID string, runs []testhealth.Run) *types.Update {
	u := newUpdate()
	u.setTo("sha", str(up.SHA))
	u.setIfAbsent("branch", str(up.Branch))
	u.setTo(AttrTTL, &types.AttributeValueMemberN{Value: strconv.FormatInt(up.At.Add(CommitRetention).Unix(), 10)})
	for _, r := range runs {
		if r.Status == "passed" {
			u.setIfAbsent("passed_at", timeStr(up.At))
			break
		}
	}
	for _, r := range runs {
		if r.Failed() {
			u.setIfAbsent("failed_at", timeStr(up.At))
			break
		}
	}
	return &types.Update{
		Key:                       commitKey(up.Org, up.Repo, testID, up.SHA),
		UpdateExpression:          aws.String(u.expression()),
		ExpressionAttributeNames:  u.names,
		ExpressionAttributeValues: u.values,
	}
}

func commitKey(org string, repo repository.Ref, testID, sha string) map[string]types.AttributeValue {
	return key(testPK(org, repo, testID), "SHA#"+sha)
}

// TestsAndCommits reads the aggregate items of tests and their commit items
// for sha, for classification right after their runs were recorded: one
// BatchGetItem per 50 tests.
func (s *Store) TestsAndCommits(ctx context.Context, org string, repo repository.Ref, sha string, ids []string) (map[string]testhealth.TestCase, map[string]testhealth.CommitResult, error) {
	keys := make([]map[string]types.AttributeValue, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, testKey(org, repo, id), commitKey(org, repo, id, sha))
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	tests, commits := map[string]testhealth.TestCase{}, map[string]testhealth.CommitResult{}
	for _, item := range items {
		pk := item[AttrPK].(*types.AttributeValueMemberS).Value
		id := pk[strings.LastIndex(pk, "#TEST#")+len("#TEST#"):]
		if item[AttrSK].(*types.AttributeValueMemberS).Value == skTest {
			tc, err := readTestCase(item)
			if err != nil {
				return nil, nil, err
			}
			tests[id] = tc
			continue
		}
		var c testhealth.CommitResult
		if err := unmarshal(item, &c); err != nil {
			return nil, nil, err
		}
		commits[id] = c
	}
	return tests, commits, nil
}

// TestHistory lists the newest runs of a test, up to limit: one Query.
func (s *Store) TestHistory(ctx context.Context, org string, repo repository.Ref, id string, limit int32) ([]testhealth.RunRecord, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :run)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(testPK(org, repo, id)), ":run": str("RUN#"),
		},
		ScanIndexForward: aws.Bool(false),
		Limit:            aws.Int32(limit),
	})
	if err != nil {
		return nil, err
	}
	return unmarshalAll[testhealth.RunRecord](out.Items)
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

// asConditionFailed finds the per-action condition failures of a
// cancelled transaction.
func asConditionFailed(err error, cf **conditionFailed) bool {
	return errors.As(err, cf)
}
