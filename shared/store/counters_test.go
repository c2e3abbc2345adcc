package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/billing"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
)

var web = repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}

const testID = "06cb6db5-f807-5198-b072-af67a0636f8a"

func oneTest(runs ...string) []testhealth.TestRuns {
	tr := testhealth.TestRuns{Test: testhealth.TestCase{ID: testID, Name: "t", FilePath: "src/t_test.go"}}
	for i, st := range runs {
		r := testhealth.Run{Seq: i, Status: st}
		if st == "failed" {
			r.Cluster, r.Summary, r.Message = "c1", "boom", "boom"
		}
		tr.Runs = append(tr.Runs, r)
	}
	return []testhealth.TestRuns{tr}
}

// TestBatchCountsOnce records one batch of an upload twice: the second is
// refused by the counter item's batch tokens, counts nothing, and still
// answers with the counters; the next batch of the upload counts.
func TestBatchCountsOnce(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, fixed)
	ctx := context.Background()
	up := testhealth.UploadRuns{Org: "acme", Repo: web, Upload: "u1", At: t0, SHA: "s1", Branch: "main", Monitored: true}
	first, err := s.RecordBatch(ctx, up, oneTest("passed", "failed"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.RecordBatch(ctx, up, oneTest("passed", "failed"))
	if err != nil {
		t.Fatal(err)
	}
	hour := testhealth.HourKey(t0)
	for name, v := range map[string]testhealth.TestCase{"first": first[0], "repeated": again[0]} {
		// Passed on the commit: no broken streak.
		if v.MonitoredPassedByHour[hour] != 1 || v.MonitoredFailedByHour[hour] != 1 || v.Streak != 0 || v.CleanRuns != 0 || v.EpisodeRuns != 2 || v.EpisodeFailures != 1 {
			t.Errorf("%s attempt answered %v %v streak %d, clean %d, episode %d/%d; want 1 and 1, streak 0, clean 0, episode 1/2",
				name, v.MonitoredPassedByHour, v.MonitoredFailedByHour, v.Streak, v.CleanRuns, v.EpisodeFailures, v.EpisodeRuns)
		}
	}
	up.Batch = 1
	if _, err := s.RecordBatch(ctx, up, oneTest("passed")); err != nil {
		t.Fatal(err)
	}
	tc, err := s.GetTestCase(ctx, "acme", web, testID)
	if err != nil {
		t.Fatal(err)
	}
	if tc.PassedByHour[hour] != 2 || tc.FailedByHour[hour] != 1 || tc.Failures["c1"].ByDay[testhealth.DayKey(t0)] != 1 {
		t.Errorf("read %v passed, %v failed, clusters %+v; want 2, 1 and one failure", tc.PassedByHour, tc.FailedByHour, tc.Failures)
	}
	runs, err := s.FailedRunsBetween(ctx, "acme", web, t0, t0.Add(time.Second))
	if err != nil || len(runs) != 1 {
		t.Errorf("failed runs: %v, %v; want the one", runs, err)
	}
}

// TestFoldKeepsEveryFigure records a run an hour for 60 hours, monitored
// and not in turn, failing one in four: the counter item folds its old
// hours away and stays under 1 KB, while a read of the whole test has every
// hour as counted, and classification's day sums agree with it on whole
// days.
func TestFoldKeepsEveryFigure(t *testing.T) {
	t.Parallel()
	db, table := storetest.NewTable(t)
	s := store.New(db, table, fixed)
	ctx := context.Background()
	last := recordHourly(t, s, 60, 1)
	want := expectedHours(60, t0)
	got, err := s.GetTestCase(ctx, "acme", web, testID)
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]map[string]int{
		"passed": {got.PassedByHour, want.PassedByHour}, "failed": {got.FailedByHour, want.FailedByHour},
		"monitored passed": {got.MonitoredPassedByHour, want.MonitoredPassedByHour}, "monitored failed": {got.MonitoredFailedByHour, want.MonitoredFailedByHour},
	} {
		if fmt.Sprint(pair[0]) != fmt.Sprint(pair[1]) {
			t.Errorf("%s by hour read %v, want %v", name, pair[0], pair[1])
		}
	}
	for _, w := range []time.Duration{testhealth.Day, testhealth.Week} {
		if g, wnt := testhealth.FailureRate(got, w, t0), testhealth.FailureRate(want, w, t0); g != wnt {
			t.Errorf("failure rate over %v: %v, want %v", w, g, wnt)
		}
	}
	if n := testhealth.PullRequestsImpacted(got, t0); n != 15 {
		t.Errorf("pull requests impacted %d, want 15", n)
	}
	raw := rawItem(t, db, table, "TEST")
	hours, days := 0, 0
	for name := range raw {
		switch {
		case len(name) > 1 && name[0] == 'h' && name[1] >= '0' && name[1] <= '9':
			hours++
		case len(name) > 1 && name[0] == 'd' && name[1] >= '0' && name[1] <= '9':
			days++
		}
	}
	if hours > 48 || days == 0 {
		t.Errorf("counter item holds %d hours and %d days; want at most 48 hours, and days", hours, days)
	}
	if size := billing.ItemSize(raw); size > 1024 {
		t.Errorf("counter item is %d bytes", size)
	}
	// Classification sees monitored runs of whole folded days: over two
	// days, the same as the read.
	sum := func(hours, days map[string]int) int {
		n := 0
		for _, v := range hours {
			n += v
		}
		for _, v := range days {
			n += v
		}
		return n
	}
	if g, w := sum(last.MonitoredPassedByHour, last.MonitoredPassedByDay), sum(want.MonitoredPassedByHour, nil); g != w {
		t.Errorf("classification sees %d monitored passes, want %d", g, w)
	}
}

// TestEarlierLayoutCountsOn: a test stored by the earlier layout (all on
// one item, a counter attribute each) keeps its counts and identity when
// new runs are counted the packed way.
func TestEarlierLayoutCountsOn(t *testing.T) {
	t.Parallel()
	db, table := storetest.NewTable(t)
	s := store.New(db, table, fixed)
	ctx := context.Background()
	hour := testhealth.HourKey(t0)
	old, err := attributevalue.MarshalMap(map[string]any{
		"PK": "ORG#acme#REPO#" + web.Key() + "#TEST#" + testID, "SK": "TEST", "id": testID, "org": "acme", "name": "t",
		"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "web"}, "file_path": "src/t_test.go",
		"status":     map[string]string{"value": "flaky", "reason": "failure-rate", "at": t0.Format(time.RFC3339Nano)},
		"hp." + hour: 3, "hf." + hour: 1, "mp." + hour: 3, "mf." + hour: 1, "rev": 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: old}); err != nil {
		t.Fatal(err)
	}
	up := testhealth.UploadRuns{Org: "acme", Repo: web, Upload: "u1", At: t0, SHA: "s1", Branch: "main", Monitored: true}
	views, err := s.RecordBatch(ctx, up, oneTest("passed"))
	if err != nil {
		t.Fatal(err)
	}
	if v := views[0]; v.MonitoredPassedByHour[hour] != 4 || v.MonitoredFailedByHour[hour] != 1 || v.Status.Value != "flaky" || v.Rev != 2 {
		t.Errorf("counters answered %v %v, status %q, rev %d; want 4, 1, flaky, 2", v.MonitoredPassedByHour, v.MonitoredFailedByHour, v.Status.Value, v.Rev)
	}
	tc, err := s.GetTestCase(ctx, "acme", web, testID)
	if err != nil {
		t.Fatal(err)
	}
	if tc.PassedByHour[hour] != 4 || tc.FailedByHour[hour] != 1 || tc.Name != "t" || tc.Status.Value != "flaky" || tc.Rev != 2 {
		t.Errorf("read %v %v, name %q, status %q, rev %d", tc.PassedByHour, tc.FailedByHour, tc.Name, tc.Status.Value, tc.Rev)
	}
}

// TestFailureItemIsPruned fails a test on a new pull request every hour
// for ten days: the failure item drops the pull requests older than
// testhealth.Keep once PruneBatch of them are there, so it holds at most
// the window's and PruneBatch more.
func TestFailureItemIsPruned(t *testing.T) {
	t.Parallel()
	db, table := storetest.NewTable(t)
	s := store.New(db, table, fixed)
	ctx := context.Background()
	const hours = 240
	for h := hours; h >= 1; h-- {
		up := testhealth.UploadRuns{Org: "acme", Repo: web, Upload: fmt.Sprintf("u%d", h), At: t0.Add(-time.Duration(h) * time.Hour), SHA: "s", Branch: "feature", PR: 1000 + h}
		if _, err := s.RecordBatch(ctx, up, oneTest("failed", "passed", "passed")); err != nil {
			t.Fatal(err)
		}
	}
	tc, err := s.GetTestCase(ctx, "acme", web, testID)
	if err != nil {
		t.Fatal(err)
	}
	kept := int(testhealth.Keep / time.Hour)
	if n := len(tc.FailedPRs); n < kept || n > kept+testhealth.PruneBatch {
		t.Errorf("the failure item holds %d pull requests; want between %d and %d", n, kept, kept+testhealth.PruneBatch)
	}
	if n := testhealth.PullRequestsImpacted(tc, t0); n != 167 {
		t.Errorf("pull requests impacted %d, want 167 (one an hour, in the week before now)", n)
	}
}

// TestFailedPRsArePacked fails a test on a new pull request every hour for
// ten days, as TestFailureItemIsPruned does: the failure item, which every
// failing run rewrites, keeps fewer than 16 pull-request times and stays
// under 1 KB (one write unit); the others are packed on the meta item, and
// pull requests impacted counts every one of them exactly.
func TestFailedPRsArePacked(t *testing.T) {
	t.Parallel()
	db, table := storetest.NewTable(t)
	s := store.New(db, table, fixed)
	ctx := context.Background()
	var last time.Time
	for h := 240; h >= 1; h-- {
		last = t0.Add(-time.Duration(h)*time.Hour + time.Duration(h)*time.Millisecond)
		up := testhealth.UploadRuns{Org: "acme", Repo: web, Upload: fmt.Sprintf("u%d", h), At: last, SHA: "s", Branch: "feature", PR: 1000 + h}
		if _, err := s.RecordBatch(ctx, up, oneTest("failed")); err != nil {
			t.Fatal(err)
		}
	}
	fail, meta := rawItem(t, db, table, "TEST#FAIL"), rawItem(t, db, table, "TEST#META")
	loose := 0
	for name := range fail {
		if strings.HasPrefix(name, "pr.") {
			loose++
		}
	}
	if loose >= 16 {
		t.Errorf("the failure item holds %d pull-request times, want fewer than 16", loose)
	}
	if size := billing.ItemSize(fail); size > 1024 {
		t.Errorf("the failure item is %d bytes", size)
	}
	if size := billing.ItemSize(meta); size > 4096 {
		t.Errorf("the meta item is %d bytes", size)
	}
	if _, ok := meta["prs"].(*types.AttributeValueMemberB); !ok {
		t.Errorf("the meta item has no packed pull requests: %v", meta["prs"])
	}
	tc, err := s.GetTestCase(ctx, "acme", web, testID)
	if err != nil {
		t.Fatal(err)
	}
	// Hour h before now plus h milliseconds: the 168th is a week less
	// 168 ms before now, and in the week.
	if n := testhealth.PullRequestsImpacted(tc, t0); n != 168 {
		t.Errorf("pull requests impacted %d, want 168 (one an hour, in the week before now)", n)
	}
	if got := tc.FailedPRs["1001"]; !got.Equal(last) {
		t.Errorf("pull request 1001 failed at %v, want %v (to the millisecond)", got, last)
	}
}

// TestFoldMovesHoursKeptOneByOne: a meta item written before folded hours
// were packed keeps them one attribute each (x{hour}); the next fold moves
// them into the packed value, and every figure reads the same before and
// after.
func TestFoldMovesHoursKeptOneByOne(t *testing.T) {
	t.Parallel()
	db, table := storetest.NewTable(t)
	s := store.New(db, table, fixed)
	ctx := context.Background()
	recordHourly(t, s, 100, 41) // folds, into the packed value
	before, err := s.GetTestCase(ctx, "acme", web, testID)
	if err != nil {
		t.Fatal(err)
	}
	// Write the meta item's folded hours as they were first kept.
	hot := rawItem(t, db, table, "TEST")
	set, names, values := []string{}, map[string]string{"#xh": "xh"}, map[string]types.AttributeValue{}
	for h, passed := range before.PassedByHour {
		if _, onHot := hot["h"+h]; onHot {
			continue
		}
		mp, mf := before.MonitoredPassedByHour[h], before.MonitoredFailedByHour[h]
		n := strings.TrimLeft(fmt.Sprintf("%d%09d%09d%09d", before.FailedByHour[h]-mf, passed-mp, mf, mp), "0")
		names["#"+h], values[":"+h] = "x"+h, &types.AttributeValueMemberN{Value: n}
		set = append(set, "#"+h+" = :"+h)
	}
	if len(set) == 0 {
		t.Fatal("no folded hour to write")
	}
	if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: testItemKey("TEST#META"),
		UpdateExpression:         aws.String("SET " + strings.Join(set, ", ") + " REMOVE #xh"),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values}); err != nil {
		t.Fatal(err)
	}
	figures := func(tc testhealth.TestCase) string {
		return fmt.Sprint(testhealth.FailureRate(tc, testhealth.Day, t0), testhealth.FailureRate(tc, testhealth.Week, t0),
			tc.PassedByHour, tc.FailedByHour, tc.MonitoredPassedByHour, tc.MonitoredFailedByHour)
	}
	asKept, err := s.GetTestCase(ctx, "acme", web, testID)
	if err != nil {
		t.Fatal(err)
	}
	if figures(asKept) != figures(before) {
		t.Fatalf("read one by one:\n%s\nwant\n%s", figures(asKept), figures(before))
	}
	recordHourly(t, s, 40, 1) // folds again
	after, err := s.GetTestCase(ctx, "acme", web, testID)
	if err != nil {
		t.Fatal(err)
	}
	meta := rawItem(t, db, table, "TEST#META")
	for name := range meta {
		if len(name) > 1 && name[0] == 'x' && name[1] >= '0' && name[1] <= '9' {
			t.Errorf("the meta item still holds %s", name)
		}
	}
	if _, ok := meta["xh"]; !ok {
		t.Error("the meta item has no packed hours")
	}
	// 100 hours, all within testhealth.Keep: every one is read back.
	if got, want := figures(after), figures(expectedHours(100, t0)); got != want {
		t.Errorf("after the fold:\n%s\nwant\n%s", got, want)
	}
}

// recordHourly records an upload an hour, from hour from before t0 to
// hour to, of testID from pull request h: a failed run when h%4 == 0, else
// a passed one, and one more passed run; even hours are monitored. It
// returns the test as the last upload's update answered it.
func recordHourly(t *testing.T, s *store.Store, from, to int) testhealth.TestCase {
	t.Helper()
	var last testhealth.TestCase
	for h := from; h >= to; h-- {
		up := testhealth.UploadRuns{Org: "acme", Repo: web, Upload: fmt.Sprintf("u%d", h), At: t0.Add(-time.Duration(h) * time.Hour), SHA: "s", Branch: "main", Monitored: h%2 == 0, PR: h}
		status := "passed"
		if h%4 == 0 {
			status = "failed"
		}
		views, err := s.RecordBatch(context.Background(), up, oneTest(status, "passed"))
		if err != nil {
			t.Fatal(err)
		}
		last = views[0]
	}
	return last
}

// testItemKey is the key of testID's item sk (TEST, TEST#FAIL, TEST#META).
func testItemKey(sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "ORG#acme#REPO#" + web.Key() + "#TEST#" + testID},
		"SK": &types.AttributeValueMemberS{Value: sk},
	}
}

// rawItem reads testID's item sk as stored.
func rawItem(t *testing.T, db *dynamodb.Client, table, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: testItemKey(sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// expectedHours is recordHourly's uploads from hour n to hour 1, counted
// by hand.
func expectedHours(n int, t0 time.Time) testhealth.TestCase {
	tc := testhealth.TestCase{PassedByHour: map[string]int{}, FailedByHour: map[string]int{}, MonitoredPassedByHour: map[string]int{}, MonitoredFailedByHour: map[string]int{}}
	for h := n; h >= 1; h-- {
		k := testhealth.HourKey(t0.Add(-time.Duration(h) * time.Hour))
		p, f := 2, 0
		if h%4 == 0 {
			p, f = 1, 1
		}
		tc.PassedByHour[k] = p
		if f > 0 {
			tc.FailedByHour[k] = f
		}
		if h%2 == 0 {
			tc.MonitoredPassedByHour[k] = p
			if f > 0 {
				tc.MonitoredFailedByHour[k] = f
			}
		}
	}
	return tc
}
