package healthsim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mainguard/mainguard/shared/testhealth"
)

// Result is what one classifier made of a history.
type Result struct {
	Classifier string
	Settings   testhealth.Settings

	Tests, Healthy, Flaky, Regressions, Fixed int
	Uploads, Runs, Guarded                    int

	// Buckets is recall at the end by failure rate: of the flaky tests
	// (not fixed) that failed at least once in the history, those listed
	// flaky at its end. All is every bucket together.
	Buckets []Bucket
	All     Bucket

	// Detected flaky tests, and the runs from a flaky test's first failure
	// to its first listing as flaky.
	Detected                              int
	LatencyMedian, LatencyP90, LatencyMax int
	FalsePositives                        int // healthy tests ever listed flaky or broken
	FlakyBroken, FlakyBrokenOnEvidence    int // flaky tests ever listed broken; of those, while pass-on-retry evidence was in its window
	RegressionsFlaky                      int // regressions ever listed flaky
	RegressionsBroken, RegressionsWithin3 int // regressions listed broken; of those, within 3 commits of main
	RegressionCommitsMax                  int // the most commits of main a regression took to be listed broken
	StatusChanges                         int // test_case.status_changed events
	FlakyChangesMean                      float64
	FlakyChangesMax, FlakyOverTwo         int // status changes of a flaky test: the most, and the tests with more than 2
	SameCommitFlips                       int // changes that went back to the value before on the commit of the change before
	FixedHealthy, FixedPending, FixedLate int
	RecoverRunsMedian, RecoverRunsMax     int // monitored runs from the fix to healthy
	AskedMedian, AskedMax                 int // the clean runs the recovery asked (RecoveryRuns), when the classifier has them
	RecoverTimeMax                        time.Duration
	hasRecoveryRuns                       bool
}

// Bucket is recall in one range of failure rates, [Lo, Hi).
type Bucket struct {
	Lo, Hi        float64
	Tests, Listed int
}

// bucketEdges are the recall buckets' bounds.
var bucketEdges = []float64{0, 0.005, 0.01, 0.05, 0.2, 1.01}

func (r *Result) collect(cfg Config, h history, tests []tracked) {
	r.Tests = len(h.tests)
	for i := 1; i < len(bucketEdges); i++ {
		r.Buckets = append(r.Buckets, Bucket{Lo: bucketEdges[i-1], Hi: bucketEdges[i]})
	}
	var latencies, recoverRuns, asked, changes []int
	for i, t := range h.tests {
		tr := tests[i]
		switch t.kind {
		case healthy:
			r.Healthy++
			if tr.everUnhealthy {
				r.FalsePositives++
			}
		case regression:
			r.Regressions++
			if tr.everFlaky {
				r.RegressionsFlaky++
			}
			if tr.brokenAfter > 0 {
				r.RegressionsBroken++
				r.RegressionCommitsMax = max(r.RegressionCommitsMax, tr.brokenAfter)
				if tr.brokenAfter <= 3 {
					r.RegressionsWithin3++
				}
			}
		case flaky, fixed:
			if t.kind == flaky {
				r.Flaky++
			} else {
				r.Fixed++
			}
			changes = append(changes, tr.changes)
			if tr.changes > 2 {
				r.FlakyOverTwo++
			}
			if tr.everBroken {
				r.FlakyBroken++
			}
			if tr.brokenOnEvidence {
				r.FlakyBrokenOnEvidence++
			}
			if tr.detected {
				r.Detected++
				latencies = append(latencies, tr.latency)
			}
		}
		r.SameCommitFlips += tr.sameCommitFlips
		if t.kind == flaky && !tr.failedAt.IsZero() {
			listed := testhealth.Previous(tr.tc) == testhealth.Flaky
			for b := range r.Buckets {
				if t.rate >= r.Buckets[b].Lo && t.rate < r.Buckets[b].Hi {
					r.Buckets[b].Tests++
					if listed {
						r.Buckets[b].Listed++
					}
				}
			}
			r.All.Tests++
			if listed {
				r.All.Listed++
			}
		}
		if rc := tr.recovery; rc != nil && t.kind == fixed {
			switch {
			case rc.done:
				r.FixedHealthy++
				recoverRuns = append(recoverRuns, rc.runs)
				r.RecoverTimeMax = max(r.RecoverTimeMax, rc.took)
			case testhealth.Previous(tr.tc) == testhealth.Healthy:
				// Never listed since the fix: nothing to recover from.
			default:
				r.FixedPending++
			}
			if rc.late {
				r.FixedLate++
			}
			if rc.asked > 0 {
				asked = append(asked, rc.asked)
			}
		}
	}
	r.hasRecoveryRuns = len(asked) > 0
	r.LatencyMedian, r.LatencyP90, r.LatencyMax = quantileOf(latencies, 0.5), quantileOf(latencies, 0.9), quantileOf(latencies, 1)
	r.RecoverRunsMedian, r.RecoverRunsMax = quantileOf(recoverRuns, 0.5), quantileOf(recoverRuns, 1)
	r.AskedMedian, r.AskedMax = quantileOf(asked, 0.5), quantileOf(asked, 1)
	r.FlakyChangesMax = quantileOf(changes, 1)
	sum := 0
	for _, n := range changes {
		sum += n
	}
	if len(changes) > 0 {
		r.FlakyChangesMean = float64(sum) / float64(len(changes))
	}
}

// quantileOf is the q-quantile of xs (nearest rank), 0 when empty.
func quantileOf(xs []int, q float64) int {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// WriteTable prints the history of cfg and the figures of each result, a
// column each.
func WriteTable(w io.Writer, cfg Config, results ...Result) error {
	if len(results) == 0 {
		return nil
	}
	r0 := results[0]
	fmt.Fprintf(w, "%d tests: %d healthy, %d flaky (rates %s), %d regressions (fixed %d commits later), %d flaky tests fixed mid-history\n",
		r0.Tests, r0.Healthy, r0.Flaky+r0.Fixed, cfg.Rates, r0.Regressions, cfg.RegressionCommits, r0.Fixed)
	fmt.Fprintf(w, "%d commits of main over %d days, %d pull-request run(s) each, jobs of %d tests, %d retry of a failed job, outages in %g%% of attempts; seed %d\n",
		cfg.Commits, cfg.Days, cfg.PRRuns, cfg.JobSize, cfg.Retries, cfg.InfraRate*100, cfg.Seed)
	fmt.Fprintf(w, "%d uploads (%d set aside by the infrastructure guard), %d runs\n\n", r0.Uploads, r0.Guarded, r0.Runs)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	row := func(name string, cell func(Result) string) {
		cells := []string{name}
		for _, r := range results {
			cells = append(cells, cell(r))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	row("", func(r Result) string { return r.Classifier })
	for b := range r0.Buckets {
		row("recall at the end, "+bucketName(r0.Buckets[b]), func(r Result) string { return ratio(r.Buckets[b].Listed, r.Buckets[b].Tests) })
	}
	row("recall at the end, every flaky test that failed", func(r Result) string { return ratio(r.All.Listed, r.All.Tests) })
	row("detection latency, runs after the first failure", func(r Result) string {
		return fmt.Sprintf("median %d, p90 %d, max %d", r.LatencyMedian, r.LatencyP90, r.LatencyMax)
	})
	row("healthy tests ever flagged", func(r Result) string { return fmt.Sprint(r.FalsePositives) })
	row("flaky tests ever listed broken", func(r Result) string { return fmt.Sprint(r.FlakyBroken) })
	row("  of them with pass-on-retry evidence in its window", func(r Result) string { return fmt.Sprint(r.FlakyBrokenOnEvidence) })
	row("regressions ever listed flaky", func(r Result) string { return fmt.Sprint(r.RegressionsFlaky) })
	row("regressions listed broken within 3 commits", func(r Result) string {
		return fmt.Sprintf("%s (the slowest after %d)", ratio(r.RegressionsWithin3, r.Regressions), r.RegressionCommitsMax)
	})
	row("status changes (test_case.status_changed)", func(r Result) string { return fmt.Sprint(r.StatusChanges) })
	row("status changes per flaky test", func(r Result) string {
		return fmt.Sprintf("mean %.2f, max %d; %d with more than 2", r.FlakyChangesMean, r.FlakyChangesMax, r.FlakyOverTwo)
	})
	row("changes gone back on one commit", func(r Result) string { return fmt.Sprint(r.SameCommitFlips) })
	row("fixed tests healthy again", func(r Result) string {
		late := "-"
		if r.hasRecoveryRuns {
			late = fmt.Sprint(r.FixedLate)
		}
		return fmt.Sprintf("%d of %d, %d pending, late %s", r.FixedHealthy, r.Fixed, r.FixedPending, late)
	})
	row("  monitored runs from the fix to healthy", func(r Result) string {
		return fmt.Sprintf("median %d, max %d", r.RecoverRunsMedian, r.RecoverRunsMax)
	})
	row("  clean runs asked (n)", func(r Result) string {
		if !r.hasRecoveryRuns {
			return "-"
		}
		return fmt.Sprintf("median %d, max %d", r.AskedMedian, r.AskedMax)
	})
	row("  time from the fix to healthy, the longest", func(r Result) string {
		return fmt.Sprintf("%.1f days", r.RecoverTimeMax.Hours()/24)
	})
	return tw.Flush()
}

func ratio(n, of int) string {
	if of == 0 {
		return "0 of 0"
	}
	return fmt.Sprintf("%d of %d (%d%%)", n, of, (100*n+of/2)/of)
}

func bucketName(b Bucket) string {
	pct := func(r float64) string { return strings.TrimSuffix(fmt.Sprintf("%g", r*100), ".0") + "%" }
	switch {
	case b.Lo == 0:
		return "rate below " + pct(b.Hi)
	case b.Hi > 1:
		return "rate " + pct(b.Lo) + " and above"
	}
	return "rate " + pct(b.Lo) + " to " + pct(b.Hi)
}
