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
)

// Retention of history: run items outlive the longest window (7 days) and
// the contract's 30 days of history; commit items outlive the longest
// pass-on-retry recovery period (15 days).
const (
	RunRetention    = 35 * 24 * time.Hour
	CommitRetention = 16 * 24 * time.Hour
	// MaxTransactActions is DynamoDB's limit of actions per transaction.
	MaxTransactActions = 100
)

// UploadRuns is what every run of one upload shares.
type UploadRuns struct {
	Org    string
	Repo   RepoRef
	Upload string    // the bundle upload id: runs are recorded once per upload
	At     time.Time // when the runs happened (the upload's time)
	SHA    string
	Branch string
	PR     int // 0 when not a pull request
	// Monitored: the runs count for the failure-rate monitor (a branch it
	// watches, and not an upload the infrastructure guard set aside).
	Monitored bool
	// Streak: the runs count for the broken-streak monitor (the default
	// branch, not guarded).
	Streak bool
	// Guarded: the infrastructure guard set the upload aside, so it leaves
	// no pass-on-retry evidence either (no commit item update).
	Guarded bool
}

// TestRuns are the runs of one test case in one upload, in report order.
type TestRuns struct {
	Test       TestCase // identity fields only: Org, Repo, ID, Name, Variant, FilePath, Parent, Classname
	Codeowners []string // nil leaves the stored owners as they are
	Runs       []Run
}

// Run is one execution of a test case.
type Run struct {
	Seq      int    // position in the upload, unique per upload
	Status   string // passed, failed, errored, skipped
	Attempt  int
	Duration time.Duration
	Message  string // failure text, "" unless failed or errored
	Cluster  string // key of the failure's cluster
	Summary  string // the failure text as shown, ≤256 characters
}

// Failed reports whether the run counts as a failure (an error does).
func (r Run) Failed() bool { return r.Status == "failed" || r.Status == "errored" }

// RunRecord is a stored run, as history lists it.
type RunRecord struct {
	Status   string    `dynamodbav:"status"`
	At       time.Time `dynamodbav:"at"`
	Upload   string    `dynamodbav:"upload"`
	SHA      string    `dynamodbav:"sha"`
	Branch   string    `dynamodbav:"branch"`
	PR       int       `dynamodbav:"pr,omitempty"`
	Attempt  int       `dynamodbav:"attempt,omitempty"`
	Duration int64     `dynamodbav:"duration_ms"`
	Message  string    `dynamodbav:"message,omitempty"`
	TestID   string    `dynamodbav:"test_id"`
}

// CommitResult says whether a test has passed and failed on one commit.
type CommitResult struct {
	SHA      string    `dynamodbav:"sha"`
	Branch   string    `dynamodbav:"branch"`
	PassedAt time.Time `dynamodbav:"passed_at,omitempty"` // first pass seen
	FailedAt time.Time `dynamodbav:"failed_at,omitempty"` // first failure seen
}

// Flaky reports whether the test both failed and passed on the commit,
// and since when.
func (c CommitResult) Flaky() (time.Time, bool) {
	if c.PassedAt.IsZero() || c.FailedAt.IsZero() {
		return time.Time{}, false
	}
	if c.PassedAt.After(c.FailedAt) {
		return c.PassedAt, true
	}
	return c.FailedAt, true
}

// RecordRuns stores the runs of several tests of one upload in one
// transaction: for each test, one item per run (created only if absent, so
// that an upload ingested twice counts once), one atomic update of the
// test's aggregate item and one of its commit item. The counters are ADDed,
// so concurrent uploads of the same tests lose nothing. Runs already
// recorded (an earlier, interrupted ingest of the same upload) are left out
// and the rest retried; so are transactions that collided with another
// writer. The caller keeps each call within MaxTransactActions: a test
// takes one action per run plus two.
func (s *Store) RecordRuns(ctx context.Context, up UploadRuns, tests []TestRuns) error {
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

func runSK(up UploadRuns, r Run) string {
	return fmt.Sprintf("RUN#%s#%s#%07d", up.At.UTC().Format(SortableTime), up.Upload, r.Seq)
}

func runPut(up UploadRuns, testID string, r Run) (*types.Put, error) {
	rec := RunRecord{
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

func failsPK(org string, repo RepoRef, at time.Time) string {
	return orgPK(org) + "#REPO#" + repo.Key() + "#FAILS#" + strconv.FormatInt(at.Unix()/86400, 10)
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
func aggregateUpdate(up UploadRuns, tr TestRuns, runs []Run) *types.Update {
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
	hour := strconv.FormatInt(at.Unix()/3600, 10)
	day := strconv.FormatInt(at.Unix()/86400, 10)
	passed, failed := 0, 0
	clusters := map[string]int{}
	var summaries []Run // the last failure of each cluster, in order
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
func commitUpdate(up UploadRuns, testID string, runs []Run) *types.Update {
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

func commitKey(org string, repo RepoRef, testID, sha string) map[string]types.AttributeValue {
	return key(testPK(org, repo, testID), "SHA#"+sha)
}

// TestsAndCommits reads the aggregate items of tests and their commit items
// for sha, for classification right after their runs were recorded: one
// BatchGetItem per 50 tests.
func (s *Store) TestsAndCommits(ctx context.Context, org string, repo RepoRef, sha string, ids []string) (map[string]TestCase, map[string]CommitResult, error) {
	keys := make([]map[string]types.AttributeValue, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, testKey(org, repo, id), commitKey(org, repo, id, sha))
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	tests, commits := map[string]TestCase{}, map[string]CommitResult{}
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
		var c CommitResult
		if err := unmarshal(item, &c); err != nil {
			return nil, nil, err
		}
		commits[id] = c
	}
	return tests, commits, nil
}

// TestHistory lists the newest runs of a test, up to limit: one Query.
func (s *Store) TestHistory(ctx context.Context, org string, repo RepoRef, id string, limit int32) ([]RunRecord, error) {
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
	return unmarshalAll[RunRecord](out.Items)
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
