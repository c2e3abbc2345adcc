// Package promtooltest checks Prometheus text with the real promtool, for
// the tests of the packages that write metrics.
package promtooltest

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Allowed is the one lint the contract makes unavoidable: its two rolling
// counts are gauges named "_total", inherited from the public service
// (contract 3.9; package queuemetrics' doc.go). Our own families follow the
// conventions (mq_pr_flaky_retries_1h, a gauge, has no "_total").
var Allowed = []string{
	`mq_pr_conclusions_1h_total non-counter metrics should not have "_total" suffix`,
	`mq_pr_restarts_1h_total non-counter metrics should not have "_total" suffix`,
}

// Check runs `promtool check metrics` on text and fails tb on any complaint
// but Allowed, on a parse failure, and when the allowed complaints are
// missing: seeing them proves promtool really read the text.
func Check(tb testing.TB, text []byte) {
	tb.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		tb.Fatal("promtool is not installed: `make test` installs it (Debian package prometheus)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	var complaints, allowed []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch line = strings.TrimSpace(line); {
		case slices.Contains(Allowed, line):
			allowed = append(allowed, line)
		case line != "":
			complaints = append(complaints, line)
		}
	}
	// promtool's order follows the text's family order, which is not ours
	// to pin here.
	slices.Sort(allowed)
	if d := cmp.Diff(allowed, slices.Sorted(slices.Values(Allowed))); d != "" {
		tb.Errorf("promtool's known complaints (-got +want):\n%s", d)
	}
	if len(complaints) > 0 {
		tb.Errorf("promtool check metrics: %v\n%s", err, strings.Join(complaints, "\n"))
	}
	// Exit status 3 is "lint problems"; anything else non-zero is a parse
	// failure, which no allowed complaint explains.
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 3) {
		tb.Errorf("promtool failed: %v\n%s", err, out)
	}
}
