package healthsvc_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
)

// bigReport is a JUnit report of n distinct cases in suites of 100, one
// in fifty failing. The largest also carries 50 random characters of
// <system-out> per case, so that its bundle is the contract's largest: about
// 20 MiB compressed for 500,000 cases.
func bigReport(n int) []byte {
	noise := n >= 500_000
	rnd := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	out := make([]byte, 50)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><testsuites>`)
	for s := 0; s < n; s += 100 {
		fmt.Fprintf(&b, `<testsuite name="pkg/suite%05d">`, s/100)
		for i := s; i < min(s+100, n); i++ {
			fmt.Fprintf(&b, `<testcase classname="pkg.Suite%05d" name="test_case_%06d" file="src/pkg/suite%05d_test.go" time="0.012">`, s/100, i, s/100)
			if i%50 == 0 {
				fmt.Fprintf(&b, `<failure message="assertion failed: expected %d, got %d">trace</failure>`, i, i+1)
			}
			if noise {
				for k := range out {
					out[k] = alphabet[rnd.IntN(len(alphabet))]
				}
				fmt.Fprintf(&b, `<system-out>%s</system-out>`, out)
			}
			b.WriteString("</testcase>")
		}
		b.WriteString("</testsuite>")
	}
	b.WriteString("</testsuites>")
	return []byte(b.String())
}

// stage stores a bundle of report for a new upload and returns its id.
func (e *env) stage(tb testing.TB, report []byte) string {
	id, _ := e.stageSized(tb, report)
	return id
}

// stageSized is stage that also tells the bundle's compressed size.
func (e *env) stageSized(tb testing.TB, report []byte) (string, int) {
	tb.Helper()
	return e.stageOnPR(tb, report, 0)
}

// stageOnPR is stageSized for a CI run of pull request pr (none when 0),
// named as GitHub Actions names it.
func (e *env) stageOnPR(tb testing.TB, report []byte, pr int) (string, int) {
	tb.Helper()
	ctx := context.Background()
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", e.next())
	up := store.Upload{ID: id, Org: "acme", Repo: repo, BlobKey: blobs.Key("acme", id), CreatedAt: e.clock.Now()}
	if err := e.s.CreateUpload(ctx, up); err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	meta := bundle.Meta{Org: "acme", BundleUploadID: id, UploadTime: e.clock.Now(),
		Repo: bundle.Repo{Host: repo.Host, Owner: repo.Owner, Name: repo.Name, HeadSHA: "bench" + id[30:], HeadBranch: "main"}}
	if pr > 0 {
		meta.Envs = map[string]string{"GITHUB_REF": fmt.Sprintf("refs/pull/%d/merge", pr)}
	}
	if err := bundle.Write(&buf, bundle.WriteInput{Meta: meta, JUnit: []bundle.File{{Body: report}}}); err != nil {
		tb.Fatal(err)
	}
	size := buf.Len()
	if err := e.dir.Put(up.BlobKey, &buf, 64<<20); err != nil {
		tb.Fatal(err)
	}
	return id, size
}

// peakHeap samples the live heap every 5 ms while fn runs and returns its
// highest value in bytes above the live heap before fn: what ingesting
// costs, without the benchmark's own input held in memory.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

var storeCases = flag.Int("ingest.store-cases", 10_000, "largest bundle BenchmarkIngest stores in DynamoDB Local")

// BenchmarkIngest ingests one bundle of CASES test cases per op: "parse"
// reads it as the check pass does (no store), "store" is the whole ingest
// of new tests against DynamoDB Local, "store-again" the ingest of the same
// tests once they exist, in the same run, beside "record-only" (the
// store's writes of the same tests alone, new and again: the most an ingest
// of one UpdateItem per test can reach) and "putitem-baseline": as many
// plain PutItems as cases. It reports cases/s (puts/s), the live heap's
// peak and DynamoDB write units per test case.
//
//	go test -run '^$' -bench Ingest -benchtime 1x ./shared/healthsvc/
func BenchmarkIngest(b *testing.B) {
	sizes := []int{10_000, 20_000, 100_000, 500_000}
	for _, n := range sizes {
		// Each bundle is built from a fresh report that is garbage by the
		// time the ingest is measured, so the heap baseline (and with it
		// the GC's target) is what a Lambda copy would have.
		b.Run(fmt.Sprintf("cases=%d/parse", n), func(b *testing.B) {
			e := newEnv(&testing.T{})
			id, size := e.stageSized(b, bigReport(n))
			b.ResetTimer()
			var peak uint64
			for range b.N {
				peak = max(peak, peakHeap(func() {
					body, err := e.dir.Open(context.Background(), blobs.Key("acme", id))
					if err != nil {
						b.Fatal(err)
					}
					defer body.Close()
					if _, err := bundle.Read(body, bundle.Limits{}, bundle.Handler{}); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cases/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(size)/(1<<20), "bundle-MiB")
		})
		b.Run(fmt.Sprintf("cases=%d/store", n), func(b *testing.B) { benchStore(b, n, false) })
		// The same cases again: tests the repository has, as every upload
		// but a test's first finds them (the first ingest is not timed).
		b.Run(fmt.Sprintf("cases=%d/store-again", n), func(b *testing.B) { benchStore(b, n, true) })
		// The counter writes alone: the same tests recorded through
		// store.RecordBatch in batches of 100 on as many workers, without
		// reading the bundle, classifying or marking batches. It is the
		// most an ingest can reach with one UpdateItem per test.
		b.Run(fmt.Sprintf("cases=%d/record-only", n), func(b *testing.B) { benchRecord(b, n, false) })
		b.Run(fmt.Sprintf("cases=%d/record-only-again", n), func(b *testing.B) { benchRecord(b, n, true) })
		// The baseline of the same run: as many plain PutItems of small
		// items as the bundle has cases, on as many workers as an ingest
		// uses (healthsvc's default 8): what DynamoDB Local itself takes.
		b.Run(fmt.Sprintf("cases=%d/putitem-baseline", n), func(b *testing.B) {
			if n > *storeCases {
				b.Skipf("store runs up to -ingest.store-cases=%d cases", *storeCases)
			}
			db, table := storetest.NewTable(b)
			b.ResetTimer()
			for range b.N {
				onWorkers(b, n, func(i int) error {
					item := map[string]types.AttributeValue{
						store.AttrPK: &types.AttributeValueMemberS{Value: fmt.Sprintf("ORG#acme#REPO#github.com/acme/web#TEST#%08d", i+1)},
						store.AttrSK: &types.AttributeValueMemberS{Value: "TEST"},
						"n":          &types.AttributeValueMemberN{Value: "1"},
					}
					_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: item})
					return err
				})
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "puts/s")
		})
	}
}

// benchStore ingests a bundle of n new cases per op into DynamoDB Local or,
// again, of n cases the repository has (ingested once before the timer).
func benchStore(b *testing.B, n int, again bool) {
	if n > *storeCases {
		b.Skipf("store runs up to -ingest.store-cases=%d cases", *storeCases)
	}
	e := newEnv(&testing.T{})
	if again {
		if err := e.svc.Ingest(context.Background(), "acme", e.stage(b, bigReport(n))); err != nil {
			b.Fatal(err)
		}
	}
	var ids []string
	for range b.N {
		ids = append(ids, e.stage(b, bigReport(n)))
	}
	ctx, usage := store.WithUsage(context.Background())
	b.ResetTimer()
	var peak uint64
	for _, id := range ids {
		peak = max(peak, peakHeap(func() {
			if err := e.svc.Ingest(ctx, "acme", id); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.StopTimer()
	calls, capacity := usage.Snapshot()
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cases/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(capacity/float64(n*b.N), "capacity-units/case")
	b.ReportMetric(float64(calls)/float64(n*b.N), "ddb-calls/case")
}

// benchRecord records n tests of one run each (one in fifty failed, as in
// bigReport) through the store alone, in batches of 100 on 8 workers: new
// tests, or again tests the repository has (recorded once before the timer).
func benchRecord(b *testing.B, n int, again bool) {
	if n > *storeCases {
		b.Skipf("store runs up to -ingest.store-cases=%d cases", *storeCases)
	}
	e := newEnv(&testing.T{})
	var batches [][]testhealth.TestRuns
	for s := 0; s < n; s += 100 {
		var tests []testhealth.TestRuns
		for i := s; i < min(s+100, n); i++ {
			run := testhealth.Run{Status: "passed"}
			if i%50 == 0 {
				run = testhealth.Run{Status: "failed", Message: "assertion failed", Cluster: "c1", Summary: "assertion failed"}
			}
			tests = append(tests, testhealth.TestRuns{
				Test: testhealth.TestCase{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Name: fmt.Sprintf("test_case_%06d", i),
					Classname: fmt.Sprintf("pkg.Suite%05d", s/100), FilePath: fmt.Sprintf("src/pkg/suite%05d_test.go", s/100)},
				Runs: []testhealth.Run{run},
			})
		}
		batches = append(batches, tests)
	}
	record := func(ctx context.Context, upload string) {
		onWorkers(b, len(batches), func(i int) error {
			up := testhealth.UploadRuns{Org: "acme", Repo: repo, Upload: upload, Batch: i, At: e.clock.Now(),
				SHA: "0123456789abcdef0123456789abcdef01234567", Branch: "main", Monitored: true}
			_, err := e.s.RecordBatch(ctx, up, batches[i])
			return err
		})
	}
	if again {
		record(context.Background(), "first")
	}
	ctx, usage := store.WithUsage(context.Background())
	b.ResetTimer()
	for op := range b.N {
		record(ctx, fmt.Sprintf("upload-%d", op))
	}
	b.StopTimer()
	calls, _ := usage.Snapshot()
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cases/s")
	b.ReportMetric(float64(calls)/float64(n*b.N), "ddb-calls/case")
}

// onWorkers calls do for 0 … tasks-1 on 8 workers, as many as an ingest
// uses (healthsvc's default); a worker stops at its first error.
func onWorkers(b *testing.B, tasks int, do func(i int) error) {
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(tasks); i = next.Add(1) - 1 {
				if err := do(int(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
