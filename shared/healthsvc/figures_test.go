package healthsvc_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// TestFiguresOfTenDays ingests ten days of uploads (four a day, on main
// and on pull requests, some commits uploaded twice, a CODEOWNERS now and
// then) and compares every test's figures, read at three times, with
// testdata/figures.golden: what the earlier storage layout (one aggregate
// item per test, a run item per run) computed from the same uploads. A
// change of layout must not change a figure.
func TestFiguresOfTenDays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const tests = 16
	names := make([]string, tests)
	for i := range names {
		names[i] = fmt.Sprintf("t%02d", i)
	}
	owners := []byte("/src/ @acme/web\n/src/app_test.go @acme/app\n")
	n := 0
	var prevSHA string
	for d := 0; d < 10; d++ {
		for hi, h := range []int{1, 7, 13, 19} {
			k := d*4 + hi
			at := e.clock.Now().Truncate(24 * time.Hour).Add(time.Duration(h)*time.Hour + time.Duration(k%5)*7*time.Minute)
			if at.After(e.clock.Now()) {
				e.clock.Set(at)
			}
			sha := fmt.Sprintf("sha%03d", k)
			if k%5 == 4 {
				sha = prevSHA // a retry of the previous commit
			}
			prevSHA = sha
			branch, pr := "main", 0
			if k%3 != 0 {
				branch, pr = fmt.Sprintf("feature-%d", k%7), 100+k%13
			}
			var cases []string
			for i, name := range names {
				c := name
				if (k+i)%(i+2) == 0 {
					c += "!"
				}
				cases = append(cases, c)
			}
			c := commit{sha: sha, branch: branch, pr: pr, at: at, files: [][]byte{report("src/app_test.go", cases...)}}
			if k%8 == 0 {
				c.codeowners = owners
			}
			e.upload(c)
			n++
		}
		e.clock.Advance(24 * time.Hour)
	}
	var b strings.Builder
	for _, read := range []time.Duration{0, 30 * time.Hour, 5 * 24 * time.Hour} {
		now := e.clock.Now().Add(read)
		var lines []string
		for _, name := range names {
			id := testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/web", File: "src/app_test.go", Classname: "pkg", Parent: "suite", Name: name})
			tc, err := e.s.GetTestCase(t.Context(), "acme", repo, id)
			if err != nil {
				t.Fatal(err)
			}
			var fails []string
			for _, f := range testhealth.MostCommonFailures(tc, 5, now) {
				fails = append(fails, fmt.Sprintf("%q×%d@%s", f.Summary, f.Count, f.Last.UTC().Format(time.RFC3339)))
			}
			lines = append(lines, fmt.Sprintf("+%v %s: rate24h=%.6f rate7d=%.6f prs=%d owners=%v status=%s failures=%s",
				read, name, testhealth.FailureRate(tc, testhealth.Day, now), testhealth.FailureRate(tc, testhealth.Week, now),
				testhealth.PullRequestsImpacted(tc, now), tc.Codeowners, testhealth.Previous(tc), strings.Join(fails, ",")))
		}
		sort.Strings(lines)
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	if n != 40 {
		t.Fatalf("%d uploads", n)
	}
	testkit.GoldenText(t, "testdata/figures.golden", []byte(b.String()))
}
