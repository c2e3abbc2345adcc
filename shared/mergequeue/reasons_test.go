package mergequeue

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestEveryReasonHasWords: every Reason constant of the package (read from
// its source, so a new one cannot be forgotten) has words of its own in
// reasonWords, and none of them is a code.
func TestEveryReasonHasWords(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile(`\b[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\b`)
	n := 0
	for _, path := range names {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			spec, ok := node.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range spec.Names {
				if !strings.HasPrefix(name.Name, "Reason") || i >= len(spec.Values) {
					continue
				}
				lit, ok := spec.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				n++
				words, ok := reasonWords[v]
				if !ok {
					t.Errorf("%s (%s) has no words in reasonWords", name.Name, v)
					continue
				}
				if c := code.FindString(words); c != "" || words == "" {
					t.Errorf("%s reads %q: a code, not words", v, words)
				}
			}
			return true
		})
	}
	if n < 25 {
		t.Fatalf("found %d Reason constants; the parse missed them", n)
	}
	if len(reasonWords) != n {
		t.Errorf("reasonWords has %d entries for %d reasons: one names no reason", len(reasonWords), n)
	}
}

func TestReasonWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		reason string
		failed []string
		want   string
	}{
		{ReasonStatusFailed, []string{"ci"}, "required status ci failed on the test run"},
		{ReasonStatusFailed, []string{"lint", "ci"}, "required statuses ci, lint failed on the test run"},
		{ReasonStatusFailed, nil, "a required status failed on the test run"},
		{ReasonTimeout, nil, "the test run took longer than the testing timeout"},
		{"SOME_FUTURE_REASON", nil, "some future reason"},
	} {
		if got := ReasonWords(c.reason, c.failed...); got != c.want {
			t.Errorf("ReasonWords(%s, %v) = %q, want %q", c.reason, c.failed, got, c.want)
		}
	}
	r := Run{RequiredStatuses: []string{"ci", "lint", "e2e"}, Checks: map[string]CheckState{"ci": CheckFailure, "lint": CheckSuccess, "e2e": CheckFailure}}
	if got := r.FailedStatuses(); strings.Join(got, ",") != "ci,e2e" {
		t.Errorf("FailedStatuses = %v", got)
	}
}
