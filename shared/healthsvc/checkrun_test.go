package healthsvc

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// TestCheckRunText: the title counts the failures by label, the summary
// lists them new first with names kept literal (no Markdown, no HTML, no
// line breaks), and stays within GitHub's bound however many there are.
func TestCheckRunText(t *testing.T) {
	t.Parallel()
	f := func(name, kind, text string) Failure {
		return Failure{ID: name, Name: name, Label: testhealth.FailureLabel{Kind: kind, Text: text, Branch: "trunk", Evidence: "because"}}
	}
	list := []Failure{
		f("a_<script>*b*", testhealth.LabelNew, "new"),
		f("two\nlines", testhealth.LabelFailingOnBranch, "failing on trunk"),
		f("q", testhealth.LabelQuarantined, "quarantined"),
	}
	title, summary := checkRunText(list, 3, 1)
	if title != "1 new, 1 failing on trunk, 1 quarantined" {
		t.Errorf("title %q", title)
	}
	for _, want := range []string{
		"1 more failed, then passed on a retry of the same commit.",
		"### New: probably this change (1)\n\n- **a\\_\\<script\\>\\*b\\***: because",
		"### Failing on trunk too (1)\n\n- **two\\x0alines**: because",
		"### Quarantined: they do not fail the build (1)",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	if title, _ := checkRunText(nil, 0, 2); title != "No failure left: 2 passed on retry" {
		t.Errorf("no failure left: %q", title)
	}
	var many []Failure
	for range MaxLabelled {
		many = append(many, f(strings.Repeat("é", 1000), testhealth.LabelNew, "new"))
	}
	title, summary = checkRunText(many, 500, 0)
	if n := utf8.RuneCountInString(summary); n > github.MaxCheckRunSummary || !strings.Contains(summary, "… and more: see the upload's page") {
		t.Errorf("a long summary: %d characters, cut: %v", n, strings.Contains(summary, "and more"))
	}
	if title != "500 failed tests: 100 new (of the first 100)" {
		t.Errorf("title %q", title)
	}
}
