package junit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/internal/testkit"
)

// fixtureDir holds the real CI reports shared by the repository's tests.
var fixtureDir = testkit.JUnitDir()

// collect parses data and returns every run passed to fn.
func collect(t testing.TB, data []byte, lim Limits) ([]Run, Summary, error) {
	t.Helper()
	var runs []Run
	sum, err := Parse(bytes.NewReader(data), lim, func(r Run) error {
		runs = append(runs, r)
		return nil
	})
	return runs, sum, err
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return data
}

// fixtureWants is the expected reading of every fixture. The numbers were
// counted by reading each file (see SOURCES.md next to them) and checked
// with an independent ElementTree script, not copied from Parse's output:
// runs = <testcase> elements (+1 per flaky*/rerun* element), statuses by
// error > failure > skipped, retries = runs after the first of an
// identity (file, classname, innermost suite, name, id).
var fixtureWants = []struct {
	file    string
	want    Summary
	wantErr string // substring of the error; want is then ignored
}{
	// Ant, no classname, 3 <error> (first without message), &#13; in traces.
	{file: "ant-2009-no-classname-crlf.xml", want: Summary{Runs: 8, Passed: 5, Errored: 3, Cases: 8}},
	// Two suites under <testsuites>, one failure.
	{file: "ant-junitreport-aggregate.xml", want: Summary{Runs: 3, Passed: 2, Failed: 1, Cases: 3}},
	// status="run" is not a skip; the <error> makes it errored.
	{file: "bazel-generated-test-xml.xml", want: Summary{Runs: 1, Errored: 1, Cases: 1}},
	{file: "cargo-nextest.xml", want: Summary{Runs: 3, Passed: 2, Failed: 1, Cases: 3}},
	{file: "corrupt-truncated.xml", wantErr: "truncated"},
	// The Root Suite is empty: 3 cases in "Window".
	{file: "cypress-mocha-junit.xml", want: Summary{Runs: 3, Passed: 3, Cases: 3}},
	{file: "go-junit-report-build-failed.xml", want: Summary{Runs: 1, Errored: 1, Cases: 1}},
	{file: "go-junit-report-panic-error.xml", want: Summary{Runs: 1, Errored: 1, Cases: 1}},
	{file: "go-junit-report-race.xml", want: Summary{Runs: 1, Failed: 1, Cases: 1}},
	{file: "go-junit-report-subtests.xml", want: Summary{Runs: 4, Passed: 2, Failed: 2, Cases: 4}},
	// 1+0+18+12+29 cases; 1+8+4 failures; 2+3 skips; classnames differ per suite.
	{file: "gotestsum-report.xml", want: Summary{Runs: 60, Passed: 42, Failed: 13, Skipped: 5, Cases: 60}},
	{file: "gradle-inner-class.xml", want: Summary{Runs: 4, Passed: 4, Cases: 4}},
	// Six "Renders correctly" with classname="" in six suites: six identities.
	{file: "jest-junit-empty-classname.xml", want: Summary{Runs: 10, Passed: 10, Cases: 10}},
	{file: "jest-junit-windows-paths.xml", want: Summary{Runs: 6, Passed: 1, Failed: 4, Skipped: 1, Cases: 6}},
	// 808 cases in 176 suites; 138 repeat (classname, name) within their suite.
	{file: "large-aggregate-808-cases.xml", want: Summary{Runs: 808, Passed: 793, Failed: 1, Skipped: 14, Retries: 138, Cases: 670}},
	{file: "minimal-attributes-no-time.xml", want: Summary{Runs: 4, Passed: 1, Failed: 1, Errored: 1, Skipped: 1, Cases: 4}},
	// skipped+failure+error → errored; skipped+failure → failed.
	{file: "multiple-results-per-case.xml", want: Summary{Runs: 4, Passed: 1, Failed: 1, Errored: 1, Skipped: 1, Cases: 4}},
	// Same case twice in one suite: the second is a retry.
	{file: "negative-duration-duplicate-names.xml", want: Summary{Runs: 2, Passed: 2, Retries: 1, Cases: 1}},
	{file: "nested-testsuite-mixed-cases.xml", want: Summary{Runs: 5, Passed: 5, Cases: 5}},
	// The <error> directly in suite test.3rdlevel is a suite error, not a run.
	{file: "nested-testsuites-3-levels.xml", want: Summary{Runs: 2, Passed: 2, Cases: 2, SuiteErrors: 1}},
	// Four <testcase> without name or classname.
	{file: "no-attributes.xml", want: Summary{Unnamed: 4}},
	// 28 cases: 18 Success, 1 failure, 1 error, 8 <skipped> (Ignored/NotRunnable/Inconclusive).
	{file: "nunit3-converted-deep-nesting.xml", want: Summary{Runs: 28, Passed: 18, Failed: 1, Errored: 1, Skipped: 8, Cases: 28}},
	{file: "phpunit-11-nested.xml", want: Summary{Runs: 12, Passed: 10, Failed: 2, Cases: 12}},
	// Three projects (hostname chromium/firefox/webkit) share suite names,
	// so by the contract's identity the 2nd and 3rd project are attempts.
	{file: "playwright-junit-multi-project.xml", want: Summary{Runs: 93, Passed: 84, Failed: 3, Skipped: 6, Retries: 62, Cases: 31}},
	{file: "properties-suite-and-case.xml", want: Summary{Runs: 2, Passed: 1, Failed: 1, Cases: 2}},
	{file: "pytest-horovod-fail-skip.xml", want: Summary{Runs: 5, Passed: 3, Failed: 1, Skipped: 1, Cases: 5}},
	// xfail is a <skipped>; "test_error" is written as a <failure>.
	{file: "pytest-properties-xfail.xml", want: Summary{Runs: 10, Passed: 6, Failed: 2, Skipped: 2, Cases: 10}},
	{file: "pytest-setup-error-random-ids.xml", want: Summary{Runs: 1, Errored: 1, Cases: 1}},
	// test_foo: failure, error, pass (attempts 0,1,2); two other tests.
	{file: "reruns-as-duplicate-testcases.xml", want: Summary{Runs: 5, Passed: 3, Failed: 1, Errored: 1, Retries: 2, Cases: 3}},
	{file: "rspec-junit-formatter.xml", want: Summary{Runs: 16, Passed: 16, Cases: 16}},
	// One case with two <flakyFailure>: failed, failed, passed.
	{file: "surefire-3.0.2-flakyFailure.xml", want: Summary{Runs: 3, Passed: 1, Failed: 2, Retries: 2, Cases: 1}},
	// One case with <failure> + 3 <rerunFailure>: four failed runs.
	{file: "surefire-3.0.2-rerunFailure.xml", want: Summary{Runs: 4, Failed: 4, Retries: 3, Cases: 1}},
	{file: "surefire-long-message-attr.xml", want: Summary{Runs: 5, Passed: 2, Failed: 2, Skipped: 1, Cases: 5}},
	// Same test twice: skipped, then failed.
	{file: "testng-retry-skipped-then-failed.xml", want: Summary{Runs: 2, Failed: 1, Skipped: 1, Retries: 1, Cases: 1}},
	{file: "timestamp-formats.xml", want: Summary{Runs: 12, Passed: 12, Cases: 12}},
	{file: "trunk-cli-gtest-style-fail.xml", want: Summary{Runs: 1, Failed: 1, Cases: 1}},
	{file: "unicode-astral.xml", want: Summary{Runs: 7, Passed: 1, Failed: 2, Errored: 2, Skipped: 2, Cases: 7}},
	// Same names under two suites, distinct ids: no retries.
	{file: "xcresult-swift-testing-ids.xml", want: Summary{Runs: 4, Passed: 2, Failed: 2, Cases: 4}},
	// testLaunch four times in one suite.
	{file: "xctest-double-escaped.xml", want: Summary{Runs: 9, Passed: 7, Failed: 2, Retries: 3, Cases: 6}},
	{file: "xml-entities.xml", want: Summary{Runs: 4, Failed: 1, Errored: 1, Skipped: 2, Cases: 4}},
	{file: "xunit-net-bom.xml", want: Summary{Runs: 2, Passed: 2, Cases: 2}},
	{file: "xxe-external-entity.xml", wantErr: "declares a DOCTYPE"},
}

func TestFixtures(t *testing.T) {
	for _, tc := range fixtureWants {
		t.Run(tc.file, func(t *testing.T) {
			runs, sum, err := collect(t, readFixture(t, tc.file), Limits{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(sum, tc.want); diff != "" {
				t.Errorf("Summary mismatch (-got +want):\n%s", diff)
			}
			checkConsistent(t, runs, sum)
		})
	}
}

// checkConsistent asserts what must hold between the runs and the summary
// of any report.
func checkConsistent(t testing.TB, runs []Run, sum Summary) {
	t.Helper()
	if sum.Runs != sum.Passed+sum.Failed+sum.Errored+sum.Skipped {
		t.Errorf("Runs %d != Passed+Failed+Errored+Skipped in %+v", sum.Runs, sum)
	}
	if len(runs) != sum.Runs {
		t.Errorf("fn saw %d runs, Summary.Runs = %d", len(runs), sum.Runs)
	}
	retries := 0
	next := map[[5]string]int{}
	for _, r := range runs {
		id := [5]string{r.File, r.Classname, r.Parent, r.Name, r.ID}
		if r.Attempt != next[id] {
			t.Errorf("run %q attempt %d, want %d", r.Name, r.Attempt, next[id])
		}
		next[id]++
		if r.Attempt > 0 {
			retries++
		}
		if (r.Status == Passed || r.Status == Skipped) && r.Message != "" {
			t.Errorf("run %q is %s with message %q", r.Name, r.Status, r.Message)
		}
		if len(r.Message) > maxMessageBytes || !utf8.ValidString(r.Message) {
			t.Errorf("run %q message is %d bytes or invalid UTF-8", r.Name, len(r.Message))
		}
		if r.Duration < 0 {
			t.Errorf("run %q has negative duration %v", r.Name, r.Duration)
		}
	}
	if retries != sum.Retries || len(next) != sum.Cases {
		t.Errorf("runs hold %d retries and %d identities, Summary says %d and %d", retries, len(next), sum.Retries, sum.Cases)
	}
}

// TestFixtureTableComplete fails when a fixture is added without a row (or
// a row names a file that is gone), so every shared report stays covered.
func TestFixtureTableComplete(t *testing.T) {
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var files, rows []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".xml") {
			files = append(files, e.Name())
		}
	}
	for _, tc := range fixtureWants {
		rows = append(rows, tc.file)
	}
	sort.Strings(rows)
	if diff := cmp.Diff(files, rows); diff != "" {
		t.Errorf("fixture files (-) and table rows (+) differ:\n%s", diff)
	}
}

func TestSurefireFlakyFailure(t *testing.T) {
	runs, _, err := collect(t, readFixture(t, "surefire-3.0.2-flakyFailure.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	base := Run{Name: "testApp", Classname: "io.olamy.FlakyTest", Parent: "io.olamy.FlakyTest"}
	want := []Run{
		with(base, Failed, "obvious fail", 0),
		with(base, Failed, "try one more time maybe", 1),
		with(base, Passed, "", 2),
	}
	want[2].Duration = time.Millisecond // the testcase's time="0.001" is the final run's
	if diff := cmp.Diff(runs, want); diff != "" {
		t.Errorf("runs mismatch (-got +want):\n%s", diff)
	}
}

func with(r Run, s Status, msg string, attempt int) Run {
	r.Status, r.Message, r.Attempt = s, msg, attempt
	return r
}

func TestSurefireRerunFailure(t *testing.T) {
	runs, _, err := collect(t, readFixture(t, "surefire-3.0.2-rerunFailure.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	base := Run{Name: "testApp", Classname: "io.olamy.AlwaysFailTest", Parent: "io.olamy.AlwaysFailTest"}
	want := []Run{
		with(base, Failed, "built to fail", 0),
		with(base, Failed, "built to fail", 1),
		with(base, Failed, "built to fail", 2),
		with(base, Failed, "built to fail", 3),
	}
	want[0].Duration = time.Millisecond
	if diff := cmp.Diff(runs, want); diff != "" {
		t.Errorf("runs mismatch (-got +want):\n%s", diff)
	}
}

// Surefire's error flavours, reruns inside a passing report, and a rerun
// without message falling back to its <stackTrace>.
func TestSurefireFlakyAndRerunErrors(t *testing.T) {
	doc := `<testsuite name="S">
  <testcase name="t" classname="C" time="2">
    <flakyError type="E" time="0.5"><stackTrace>
      java.io.IOException: boom
        at x</stackTrace><system-out>not this</system-out></flakyError>
    <flakyFailure message="second"/>
  </testcase>
  <testcase name="u" classname="C">
    <error message="first"/>
    <rerunError><stackTrace>java.lang.NPE</stackTrace></rerunError>
    <rerunFailure message="third"/>
  </testcase>
</testsuite>`
	runs, sum, err := collect(t, []byte(doc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tr := Run{Name: "t", Classname: "C", Parent: "S"}
	ur := Run{Name: "u", Classname: "C", Parent: "S"}
	want := []Run{
		with(tr, Errored, "java.io.IOException: boom", 0),
		with(tr, Failed, "second", 1),
		with(tr, Passed, "", 2),
		with(ur, Errored, "first", 0),
		with(ur, Errored, "java.lang.NPE", 1),
		with(ur, Failed, "third", 2),
	}
	want[0].Duration = 500 * time.Millisecond
	want[2].Duration = 2 * time.Second
	if diff := cmp.Diff(runs, want); diff != "" {
		t.Errorf("runs mismatch (-got +want):\n%s", diff)
	}
	checkConsistent(t, runs, sum)
}

func TestRerunsAsDuplicateTestcases(t *testing.T) {
	runs, _, err := collect(t, readFixture(t, "reruns-as-duplicate-testcases.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	foo := Run{Name: "test_foo", Classname: "test_foo.TestFoo", Parent: "FlakyTestSuite",
		File: "/home/runner/work/foo/bar/test_foo.py", Duration: 1842 * time.Millisecond}
	bar := Run{Name: "test_foo", Classname: "test_bar.TestBar", Parent: "FlakyTestSuite",
		File: "/home/runner/work/foo/bar/test_bar.py", Duration: 500 * time.Millisecond}
	baz := Run{Name: "test_baz", Classname: "test_baz.TestBaz", Parent: "FlakyTestSuite",
		File: "/home/runner/work/foo/bar/test_baz.py", Duration: 500 * time.Millisecond}
	want := []Run{
		with(foo, Failed, "it failed", 0),
		with(foo, Errored, "it broke", 1),
		with(foo, Passed, "", 2),
		with(bar, Passed, "", 0),
		with(baz, Passed, "", 0),
	}
	if diff := cmp.Diff(runs, want); diff != "" {
		t.Errorf("runs mismatch (-got +want):\n%s", diff)
	}
}

func TestParentIsInnermostSuite(t *testing.T) {
	runs, _, err := collect(t, readFixture(t, "nested-testsuite-mixed-cases.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for _, r := range runs {
		got = append(got, [2]string{r.Name, r.Parent})
	}
	want := [][2]string{
		{"TestCase1", "TestSuite1"},
		{"TestCase2", "TestSuite1"},
		{"TestCase3", "TestSuite2.1"},
		{"TestCase4", "TestSuite2"},
		{"TestCase5", "Project Test Suite"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(name, parent) mismatch (-got +want):\n%s", diff)
	}

	// Cases outside any suite, and a suite error beside a case.
	doc := `<testsuites name="all"><testcase name="a"/>
	<testsuite name="s"><error message="suite setup failed"/><testcase name="b"/></testsuite></testsuites>`
	runs, sum, err := collect(t, []byte(doc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want2 := []Run{{Name: "a", Status: Passed}, {Name: "b", Parent: "s", Status: Passed}}
	if diff := cmp.Diff(runs, want2); diff != "" {
		t.Errorf("runs mismatch (-got +want):\n%s", diff)
	}
	if sum.SuiteErrors != 1 {
		t.Errorf("SuiteErrors = %d, want 1", sum.SuiteErrors)
	}

	// A bare <testcase> as the whole document.
	runs, _, err = collect(t, []byte(`<testcase classname="only.Classname"><failure>boom</failure></testcase>`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want3 := []Run{{Name: "only.Classname", Classname: "only.Classname", Status: Failed, Message: "boom"}}
	if diff := cmp.Diff(runs, want3); diff != "" {
		t.Errorf("runs mismatch (-got +want):\n%s", diff)
	}
}

func TestFileInheritance(t *testing.T) {
	doc := `<testsuites>
  <testsuite name="outer" file="./spec/outer_spec.rb">
    <testcase name="inherits"/>
    <testcase name="own" file="./spec/own_spec.rb"/>
    <testsuite name="inner">
      <testcase name="from-outer"/>
    </testsuite>
    <testsuite name="inner2" file="src\Win\Path.cs">
      <testcase name="backslashes-kept"/>
    </testsuite>
  </testsuite>
  <testsuite name="Root Suite" file="cypress/e2e/a.cy.js"></testsuite>
  <testsuite name="sibling"><testcase name="no-file"/></testsuite>
  <testsuite name="pct"><testcase name="decoded" file="a%20b/c%2Fd.swift"/><testcase name="lone-percent" file="100%/x"/></testsuite>
</testsuites>`
	runs, _, err := collect(t, []byte(doc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range runs {
		got[r.Name] = r.File
	}
	want := map[string]string{
		"inherits":         "spec/outer_spec.rb",
		"own":              "spec/own_spec.rb",
		"from-outer":       "spec/outer_spec.rb",
		"backslashes-kept": `src\Win\Path.cs`,
		"no-file":          "", // a sibling suite's file is not inherited
		"decoded":          "a b/c/d.swift",
		"lone-percent":     "100%/x",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("files mismatch (-got +want):\n%s", diff)
	}

	runs, _, err = collect(t, readFixture(t, "rspec-junit-formatter.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].File != "spec/models/article_spec.rb" {
		t.Errorf("rspec file = %q, want the ./ removed", runs[0].File)
	}
}

func TestMessage(t *testing.T) {
	doc := `<testsuite name="s">
  <testcase name="attr"><failure message="  from attribute  ">body line</failure></testcase>
  <testcase name="empty-attr"><failure message="   ">

     first body line   
     second</failure></testcase>
  <testcase name="cdata"><error><![CDATA[
  panic: boom
goroutine 1]]></error></testcase>
  <testcase name="split-tokens"><failure>   start <!-- c --> end
next</failure></testcase>
  <testcase name="no-newline"><failure>  only line  </failure></testcase>
  <testcase name="nothing"><failure/></testcase>
  <testcase name="multiline-attr"><failure message="&#10;line one&#10;line two&#10;"/></testcase>
  <testcase name="first-of-two"><failure message="one"/><failure message="two"/></testcase>
  <testcase name="skip-message"><skipped message="not a failure text"/></testcase>
  <testcase name="child-text-ignored"><failure><details>inner</details>
outer</failure></testcase>
</testsuite>`
	runs, _, err := collect(t, []byte(doc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range runs {
		got[r.Name] = r.Message
	}
	want := map[string]string{
		"attr":               "from attribute",
		"empty-attr":         "first body line",
		"cdata":              "panic: boom",
		"split-tokens":       "start  end",
		"no-newline":         "only line",
		"nothing":            "",
		"multiline-attr":     "line one\nline two",
		"first-of-two":       "one",
		"skip-message":       "",
		"child-text-ignored": "outer",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("messages mismatch (-got +want):\n%s", diff)
	}

	// The same rules on real reports.
	for _, tc := range []struct{ file, name, msg string }{
		{"cargo-nextest.xml", "test_failure", "thread 'test_failure' panicked at tests/parry3d.rs:154:5:"},
		{"jest-junit-windows-paths.xml", "Failing test", "Error: expect(received).toBeTruthy()"},
		{"ant-2009-no-classname-crlf.xml", "org.twia.vendor.VendorManagerTest.testGetVendorFirmKeyForVendorRep", "java.lang.NullPointerException"},
		{"ant-2009-no-classname-crlf.xml", "org.twia.vendor.VendorManagerTest.testGetRevokedClaimsForAdjustingFirm",
			"RuntimeException; nested exception is: \n\tjava.lang.IllegalArgumentException: id to load is required for loading"},
		{"xctest-double-escaped.xml", "testMulti", `XCTAssertEqual failed: (&quot;12&quot;) is not equal to (&quot;10&quot;)`},
		{"multiple-results-per-case.xml", "test that errors", "test teardown failure"},
		{"xml-entities.xml", "Test with & in the test name", "A message with &"},
		{"go-junit-report-subtests.xml", "TestMultiple", "Failed"},
	} {
		runs, _, err := collect(t, readFixture(t, tc.file), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range runs {
			if r.Name == tc.name {
				found = true
				if r.Message != tc.msg {
					t.Errorf("%s %q: message %q, want %q", tc.file, tc.name, r.Message, tc.msg)
				}
			}
		}
		if !found {
			t.Errorf("%s: no run named %q", tc.file, tc.name)
		}
	}

	// Surefire's 2.9 KB multi-line message attribute is kept whole (trimmed).
	runs, _, err = collect(t, readFixture(t, "surefire-long-message-attr.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	m := runs[1].Message
	if !strings.HasPrefix(m, "Expected: (an instance of java.lang.IllegalArgumentException") || !strings.Contains(m, "\n     but: ") || len(m) < 2000 {
		t.Errorf("long message attribute not kept as written: %d bytes %q...", len(m), cut(m, 120))
	}
}

func TestXcresultIDsAndEscapedFiles(t *testing.T) {
	runs, _, err := collect(t, readFixture(t, "xcresult-swift-testing-ids.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2025, 2, 18, 16, 45, 47, 900_000_000, time.UTC)
	file := "/Users/work/src/swift-testing/swift testing example/swift testing exampleTests/swift_testing_exampleTests.swift"
	want := []Run{
		{Name: "helloWorld()", Classname: "HelloWorldTestSuite", Parent: "swift testing exampleTests.HelloWorldTestSuite",
			ID: "fad828ef-3dd7-5448-8e6f-fa27005fa695", Status: Passed, Timestamp: ts},
		{Name: "helloWorldInvalid()", Classname: "HelloWorldTestSuite", Parent: "swift testing exampleTests.HelloWorldTestSuite",
			ID: "895f83b5-094f-5899-b004-5da75e1c1019", File: file, Status: Failed, Timestamp: ts,
			Message: `swift_testing_exampleTests.swift:31: Expectation failed: (greeting → "Hello, world!") == "Hello"`},
		{Name: "helloWorld()", Classname: "helloWorld()", Parent: "swift testing exampleTests",
			ID: "7ecfda2a-0be3-5d89-baa8-55a4db82dbc3", Status: Passed, Timestamp: ts},
		{Name: "helloWorldInvalid()", Classname: "helloWorldInvalid()", Parent: "swift testing exampleTests",
			ID: "5bc0c7dc-c9a3-56ce-9f89-0161d851e2e2", File: file, Status: Failed, Timestamp: ts, Duration: time.Millisecond,
			Message: `swift_testing_exampleTests.swift:19: Expectation failed: (greeting → "Hello, world!") == "Hello"`},
	}
	if diff := cmp.Diff(runs, want); diff != "" {
		t.Errorf("runs mismatch (-got +want):\n%s", diff)
	}

	// An id alone separates otherwise identical cases.
	doc := `<testsuite name="s"><testcase name="t" id="1"/><testcase name="t" id="2"/><testcase name="t" id="1"/></testsuite>`
	runs, sum, err := collect(t, []byte(doc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{runs[0].Attempt, runs[1].Attempt, runs[2].Attempt}; !cmp.Equal(got, []int{0, 0, 1}) || sum.Cases != 2 {
		t.Errorf("attempts %v, cases %d; want [0 0 1], 2", got, sum.Cases)
	}
}

func TestBOMQuotesAndEntities(t *testing.T) {
	runs, _, err := collect(t, readFixture(t, "xunit-net-bom.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Name != "mytestapp.Tests.AttriubteTests.SetTestNoFeature" || runs[0].Parent != "Rhino Collection" {
		t.Errorf("BOM report read as %+v", runs)
	}

	doc := "\uFEFF<?xml version='1.0' encoding='UTF-8'?>\n<testsuite name='s'><testcase name='a &amp; b &lt;c&gt; &#10;&#xA;&#x1F600;' classname='k'/></testsuite>"
	runs, _, err = collect(t, []byte(doc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a & b <c> \n\n😀"; len(runs) != 1 || runs[0].Name != want {
		t.Errorf("runs = %+v, want one named %q", runs, want)
	}

	runs, _, err = collect(t, readFixture(t, "xml-entities.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].Name != `Test with "quotes" in the test name` || runs[3].Name != "Test with < and > in the test name" {
		t.Errorf("entity names read as %q and %q", runs[0].Name, runs[3].Name)
	}
}

func TestEncodings(t *testing.T) {
	latin1 := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><testsuite name=\"caf\xe9\"><testcase name=\"na\xefve\"><failure message=\"\xa9 1999\"/></testcase></testsuite>")
	runs, _, err := collect(t, latin1, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Run{{Name: "naïve", Parent: "café", Status: Failed, Message: "© 1999"}}
	if diff := cmp.Diff(runs, want); diff != "" {
		t.Errorf("latin1 runs mismatch (-got +want):\n%s", diff)
	}

	ascii := `<?xml version="1.0" encoding="US-ASCII"?><testsuite><testcase name="a"/></testsuite>`
	if _, _, err := collect(t, []byte(ascii), Limits{}); err != nil {
		t.Errorf("US-ASCII report: %v", err)
	}

	for _, tc := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"declared", []byte(`<?xml version="1.0" encoding="Shift_JIS"?><testsuite/>`), `encoded as "Shift_JIS"`},
		{"utf16", append([]byte{0xFF, 0xFE}, "<\x00t\x00/\x00>\x00"...), "UTF-16"},
		{"invalid-utf8", []byte("<testsuite name=\"\xff\xfe\"/>"), "invalid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := collect(t, tc.doc, Limits{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestDoctypeRefused checks that no DOCTYPE is ever honoured and that the
// entities it declares are never fetched or read: the targets below are a
// local HTTP server that counts requests and a file with a secret.
func TestDoctypeRefused(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `<!ENTITY oob "stolen">`)
	}))
	defer srv.Close()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}

	fixture := readFixture(t, "xxe-external-entity.xml")
	docs := map[string]string{
		"fixture":          string(fixture),
		"fixture-live-url": strings.Replace(string(fixture), "$OOB_LINK$", srv.URL+"/dtd", 1),
		"external-file": `<?xml version="1.0"?><!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file://` + secret + `">]>
<testsuite name="s"><testcase name="&xxe;"/></testsuite>`,
		"external-url": `<!DOCTYPE testsuite SYSTEM "` + srv.URL + `/x.dtd"><testsuite><testcase name="a"/></testsuite>`,
		"billion-laughs": `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><testsuite><testcase name="&lol3;"/></testsuite>`,
		"plain-doctype":     `<!DOCTYPE testsuites><testsuites><testsuite><testcase name="a"/></testsuite></testsuites>`,
		"lowercase-doctype": `<!doctype testsuites><testsuites/>`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			runs, sum, err := collect(t, []byte(doc), Limits{})
			if err == nil || !strings.Contains(err.Error(), "DOCTYPE") || !strings.Contains(err.Error(), "not allowed") {
				t.Errorf("error = %v, want a refusal naming the DOCTYPE", err)
			}
			if strings.HasPrefix(name, "fixture") && !strings.Contains(err.Error(), "line 2:") {
				t.Errorf("error = %v, want the line where the DOCTYPE starts", err)
			}
			if len(runs) != 0 || sum.Runs != 0 {
				t.Errorf("runs emitted from a refused report: %+v", runs)
			}
			if strings.Contains(fmt.Sprint(err), "TOP-SECRET") || strings.Contains(fmt.Sprint(err), "stolen") {
				t.Errorf("error leaks entity content: %v", err)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the entity server was fetched %d times", n)
	}

	// An entity used without any declaration is simply not well-formed.
	_, _, err := collect(t, []byte(`<testsuite><testcase name="&xxe;"/></testsuite>`), Limits{})
	if err == nil || !strings.Contains(err.Error(), "xxe") {
		t.Errorf("undeclared entity: error = %v", err)
	}
}

func TestTruncatedRefused(t *testing.T) {
	_, _, err := collect(t, readFixture(t, "corrupt-truncated.xml"), Limits{})
	if err == nil {
		t.Fatal("truncated report accepted")
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "unexpected EOF") || !strings.Contains(err.Error(), "line 11") {
		t.Errorf("error = %v, want an unexpected EOF at line 11", err)
	}

	// Cut a good report at every byte: each prefix that is not the whole
	// document must be refused, never silently accepted as a shorter one.
	full := readFixture(t, "pytest-horovod-fail-skip.xml")
	end := bytes.LastIndex(full, []byte("</testsuites>"))
	for n := 1; n <= end; n++ {
		_, _, err := collect(t, full[:n], Limits{})
		if err == nil {
			t.Fatalf("prefix of %d bytes accepted", n)
		}
	}
}

func TestNotXMLRefused(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rnd.UintN(256))
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"empty", nil, "empty"},
		{"whitespace", []byte(" \n\t "), "no XML element"},
		{"random", random, "junit: "},
		{"json", []byte(`{"testsuites": [{"name": "a"}]}`), "not an XML report"},
		{"text", []byte("PASS\nok  \tpkg\t0.1s\n"), "not an XML report"},
		{"html", []byte(`<html><body>502 Bad Gateway</body></html>`), "not a JUnit report"},
		{"other-xml", []byte(`<?xml version="1.0"?><assemblies><assembly/></assemblies>`), "<assemblies>"},
		{"mismatched", []byte(`<testsuite><testcase name="a"></testsuite>`), "not well-formed"},
		{"xml-1.1", []byte(`<?xml version="1.1"?><testsuite/>`), "version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := collect(t, tc.doc, Limits{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "junit: ") {
				t.Errorf("error = %v, want a junit: sentence containing %q", err, tc.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Run("max-runs", func(t *testing.T) {
		doc := `<testsuite>` + strings.Repeat(`<testcase name="t"/>`, 5) + `</testsuite>`
		runs, _, err := collect(t, []byte(doc), Limits{MaxRuns: 3})
		if err == nil || !strings.Contains(err.Error(), "more than 3 test runs") {
			t.Errorf("error = %v, want the run limit", err)
		}
		if len(runs) != 3 {
			t.Errorf("%d runs before the limit, want 3", len(runs))
		}
		// Surefire reruns waiting for their case count too.
		doc = `<testsuite><testcase name="t"><failure/>` + strings.Repeat(`<rerunFailure/>`, 10) + `</testcase></testsuite>`
		if _, _, err := collect(t, []byte(doc), Limits{MaxRuns: 4}); err == nil || !strings.Contains(err.Error(), "more than 4") {
			t.Errorf("reruns: error = %v, want the run limit", err)
		}
		if _, sum, err := collect(t, []byte(doc), Limits{MaxRuns: 11}); err != nil || sum.Runs != 11 {
			t.Errorf("exactly at the limit: %+v, %v", sum, err)
		}
		// Waiting reruns are bounded before their case ends, not after.
		endless := `<testsuite><testcase name="t"><failure/>` + strings.Repeat(`<rerunFailure/>`, 10)
		if _, _, err := collect(t, []byte(endless), Limits{MaxRuns: 4}); err == nil || !strings.Contains(err.Error(), "more than 4") {
			t.Errorf("unfinished case with reruns: error = %v, want the run limit", err)
		}
	})
	t.Run("depth", func(t *testing.T) {
		deep := func(n int) []byte {
			return []byte(strings.Repeat("<testsuite>", n) + `<testcase name="x"/>` + strings.Repeat("</testsuite>", n))
		}
		if _, _, err := collect(t, deep(63), Limits{}); err != nil {
			t.Errorf("64 levels: %v", err)
		}
		_, _, err := collect(t, deep(64), Limits{})
		if err == nil || !strings.Contains(err.Error(), "nested more than 64 deep") {
			t.Errorf("65 levels: error = %v, want the depth limit", err)
		}
		_, _, err = collect(t, deep(10_000), Limits{MaxDepth: 8})
		if err == nil || !strings.Contains(err.Error(), "more than 8 deep") || !strings.Contains(err.Error(), "line 1:") {
			t.Errorf("custom depth: error = %v", err)
		}
	})
	t.Run("huge-message-attribute", func(t *testing.T) {
		big := strings.Repeat("é", 700_000) // 1.4 MB
		doc := `<testsuite><testcase name="t"><failure message="` + big + `"/></testcase><testcase name="after"/></testsuite>`
		runs, _, err := collect(t, []byte(doc), Limits{})
		if err != nil {
			t.Fatalf("1 MiB+ message refused: %v", err)
		}
		if len(runs) != 2 || len(runs[0].Message) != maxMessageBytes || !utf8.ValidString(runs[0].Message) {
			t.Errorf("message is %d bytes (valid UTF-8: %v), want %d", len(runs[0].Message), utf8.ValidString(runs[0].Message), maxMessageBytes)
		}
	})
	t.Run("huge-body-and-system-out", func(t *testing.T) {
		var sb strings.Builder
		sb.WriteString("<testsuite name=\"s\">\n<testcase name=\"t\"><failure>")
		sb.WriteString(strings.Repeat("x&amp;y", 400_000)) // 2.8 MB first line
		sb.WriteString("</failure><system-out><![CDATA[")
		for range 200_000 {
			sb.WriteString("log line ]] > -- ]\n") // 4 MB, 200,000 lines, ]] and -- inside
		}
		sb.WriteString("]]></system-out>\n<!-- ")
		sb.WriteString(strings.Repeat("- comment\n", 200_000))
		sb.WriteString("-->\n</testcase>\n<testcase name=\"after\"/>\n<testcase name=\"broken\"></testsuite>\n")
		runs, _, err := collect(t, []byte(sb.String()), Limits{MaxTextBytes: 1 << 16})
		if err == nil || !strings.Contains(err.Error(), "line 400006:") {
			t.Errorf("error = %v, want a syntax error on the real line 400006", err)
		}
		if len(runs) != 2 || runs[1].Name != "after" {
			t.Fatalf("runs = %d, want t and after", len(runs))
		}
		if m := runs[0].Message; len(m) != maxMessageBytes || !strings.HasPrefix(m, "x&yx&y") {
			t.Errorf("message %d bytes %q...", len(m), cut(m, 20))
		}
	})
	t.Run("body-in-many-tokens", func(t *testing.T) {
		// 300,000 tokens without a newline: each byte must be looked at
		// once (this took minutes when the body was rescanned per token).
		doc := `<testsuite><testcase name="t"><failure>` + strings.Repeat("ab<!---->", 300_000) +
			`</failure></testcase><testcase name="u"><failure>` + strings.Repeat("\u00a0", 100) + strings.Repeat("é", 5000) +
			`</failure></testcase></testsuite>`
		start := time.Now()
		runs, _, err := collect(t, []byte(doc), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("took %v", d)
		}
		if m := runs[0].Message; m != strings.Repeat("ab", maxMessageBytes/2) {
			t.Errorf("message %d bytes %q...", len(m), cut(m, 20))
		}
		if m := runs[1].Message; !utf8.ValidString(m) || !strings.HasPrefix(m, "éé") || len(m) > maxMessageBytes {
			t.Errorf("message %d bytes, valid UTF-8 %v, %q...", len(m), utf8.ValidString(m), cut(m, 20))
		}
	})
	t.Run("line-before-later-cut", func(t *testing.T) {
		// The decoder reads ahead, so text after the error may already
		// have been cut; its lost newlines must not shift the error line.
		doc := "<testsuite>\n<testcase name=\"a\"></testsuite>\n<x>" + strings.Repeat("log\n", 200) + "</x>"
		_, _, err := collect(t, []byte(doc), Limits{MaxTextBytes: 16})
		if err == nil || !strings.Contains(err.Error(), "line 2:") {
			t.Errorf("error = %v, want it on line 2", err)
		}
	})
	t.Run("huge-limits", func(t *testing.T) {
		_, sum, err := collect(t, readFixture(t, "gotestsum-report.xml"), Limits{MaxRuns: math.MaxInt, MaxDepth: math.MaxInt, MaxTextBytes: math.MaxInt})
		if err != nil || sum.Runs != 60 {
			t.Errorf("%+v, %v", sum, err)
		}
	})
	t.Run("huge-tag-refused", func(t *testing.T) {
		var sb strings.Builder
		sb.WriteString("<testsuite><testcase")
		for i := range 5000 {
			fmt.Fprintf(&sb, ` a%d="%s"`, i, strings.Repeat("v", 100))
		}
		sb.WriteString(`/></testsuite>`)
		_, _, err := collect(t, []byte(sb.String()), Limits{MaxTextBytes: 10})
		if err == nil || !strings.Contains(err.Error(), "line 1: an element tag is longer than 65576 bytes") {
			t.Errorf("error = %v, want the tag limit", err)
		}
	})
}

func TestTimestampsAndDurations(t *testing.T) {
	runs, _, err := collect(t, readFixture(t, "timestamp-formats.xml"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	utc := func(h, m, s, ns int) time.Time { return time.Date(2024, 1, 3, h, m, s, ns, time.UTC) }
	sec := func(f float64) time.Duration { return time.Duration(math.Round(f * float64(time.Second))) }
	type td struct {
		Name string
		TS   time.Time
		D    time.Duration
	}
	want := []td{
		{"testOffset", utc(11, 23, 0, 0), sec(10.45)}, // from <testsuites>
		{"testDate", utc(11, 23, 0, 0), sec(11)},
		{"invalid if password does not match test", utc(12, 27, 11, 0), sec(1)},
		{"invalid if password is weak test", utc(12, 27, 18, 0), sec(0.32)},
		{"home button redirects to home test", utc(12, 40, 13, 0), sec(4)}, // "T 12:40:13"
		{"sign out button ends session test", utc(12, 40, 13, 0), sec(11)},
		{"sign out button redirects to sign in test", utc(12, 40, 13, 0), sec(13)},
		{"testExperience", utc(12, 27, 44, 0), sec(11)},
		{"testGet", utc(12, 27, 54, 0), sec(133.01)}, // "2024-01-03 12:27:54Z"
		{"testPopup", utc(0, 0, 0, 0), sec(23)},      // date only
		{"testResize", utc(13, 27, 11, 210_000_000), sec(41)},
		{"testShop", utc(11, 27, 15, 0), sec(29)},
	}
	var got []td
	for _, r := range runs {
		got = append(got, td{r.Name, r.Timestamp, r.Duration})
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("timestamps mismatch (-got +want):\n%s", diff)
	}

	for _, tc := range []struct {
		file, name string
		ts         time.Time
		d          time.Duration
	}{
		{"testng-retry-skipped-then-failed.xml", "testVersionStrings", time.Date(2021, 3, 7, 10, 36, 56, 0, time.UTC), 99 * time.Millisecond},
		{"gotestsum-report.xml", "TestMain", time.Time{}, 0}, // 0001-01-01T00:00:00Z is unknown
		{"negative-duration-duplicate-names.xml", "testDummyMethod", time.Date(2009, 1, 16, 22, 57, 13, 0, time.UTC), 0},
		{"cargo-nextest.xml", "test_failure", time.Date(2024, 12, 2, 20, 6, 10, 513_000_000, time.UTC), 774 * time.Millisecond},
		{"rspec-junit-formatter.xml", "Article validation is invalid without a title", time.Date(2021, 3, 22, 5, 6, 25, 0, time.UTC), 4651 * time.Microsecond},
	} {
		runs, _, err := collect(t, readFixture(t, tc.file), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		r := runs[0]
		if r.Name != tc.name || !r.Timestamp.Equal(tc.ts) || r.Duration != tc.d {
			t.Errorf("%s: first run %q at %v for %v; want %q at %v for %v", tc.file, r.Name, r.Timestamp, r.Duration, tc.name, tc.ts, tc.d)
		}
	}

	for in, want := range map[string]time.Duration{
		"1,234.5": 1234500 * time.Millisecond, "": 0, "  2 ": 2 * time.Second, "-1": 0, "abc": 0,
		"NaN": 0, "1e20": time.Duration(math.MaxInt64), "1.5s": 1500 * time.Millisecond, "0.0000001": 100,
	} {
		if got, _ := parseSeconds(in); got != want {
			t.Errorf("parseSeconds(%q) = %v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]time.Time{
		"2020-09-04T16:18:04.966371":  time.Date(2020, 9, 4, 16, 18, 4, 966371000, time.UTC),
		"2024-12-10T01:00:00.000":     time.Date(2024, 12, 10, 1, 0, 0, 0, time.UTC),
		"2021-03-22T14:06:25+09:00":   time.Date(2021, 3, 22, 5, 6, 25, 0, time.UTC),
		"2021-01-20 08:49:02":         time.Date(2021, 1, 20, 8, 49, 2, 0, time.UTC),
		"2021-01-20T08:49:02+0100":    time.Date(2021, 1, 20, 7, 49, 2, 0, time.UTC),
		"0001-01-01T00:00:00Z":        {},
		"yesterday":                   {},
		"2021-02-30T00:00:00":         {},
		"Mon, 02 Jan 2006 15:04:05 Z": {},
	} {
		if got := parseTimestamp(in); !got.Equal(want) {
			t.Errorf("parseTimestamp(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestSkipStatusAttributes(t *testing.T) {
	doc := `<testsuites><testsuite name="gtest">
  <testcase name="ran" status="run" result="completed"/>
  <testcase name="disabled" status="notrun" result="suppressed"/>
  <testcase name="gtest-skip" status="run" result="skipped"><skipped message="x"/></testcase>
  <testcase name="gtest-skip-no-element" status="run" result="skipped"/>
  <testcase name="ctest-disabled" status="disabled"/>
  <testcase name="ctest-notrun" status="notrun"/>
  <testcase name="status-case" status="NotRun"/>
  <testcase name="failed-beats-status" status="notrun"><failure message="f"/></testcase>
</testsuite></testsuites>`
	runs, _, err := collect(t, []byte(doc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Status{}
	for _, r := range runs {
		got[r.Name] = r.Status
	}
	want := map[string]Status{
		"ran": Passed, "disabled": Skipped, "gtest-skip": Skipped, "gtest-skip-no-element": Skipped,
		"ctest-disabled": Skipped, "failed-beats-status": Failed, "ctest-notrun": Skipped, "status-case": Skipped,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("statuses mismatch (-got +want):\n%s", diff)
	}
}

func TestUnnamed(t *testing.T) {
	doc := `<testsuite name="s"><testcase classname="only.Classname"/><testcase name=""/><testcase name="  " classname=""/>
	<testcase><flakyFailure message="x"/><failure/></testcase><testcase name="named"/></testsuite>`
	runs, sum, err := collect(t, []byte(doc), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Unnamed != 3 || len(runs) != 2 || runs[0].Name != "only.Classname" || runs[1].Name != "named" {
		t.Errorf("Unnamed %d, runs %+v", sum.Unnamed, runs)
	}
}

func TestCallbackErrorStops(t *testing.T) {
	stop := errors.New("stop here")
	calls := 0
	sum, err := Parse(bytes.NewReader(readFixture(t, "gotestsum-report.xml")), Limits{}, func(Run) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("error = %v, want fn's error unchanged", err)
	}
	if calls != 3 || sum.Runs != 3 {
		t.Errorf("%d calls, Summary.Runs %d; want 3 and 3", calls, sum.Runs)
	}
	// A nil fn only counts.
	sum, err = Parse(bytes.NewReader(readFixture(t, "gotestsum-report.xml")), Limits{}, nil)
	if err != nil || sum.Runs != 60 {
		t.Errorf("nil fn: %+v, %v", sum, err)
	}
}

// oneByteReader hands out one byte per Read, so every boundary inside a
// token, an entity or a UTF-8 sequence is also a read boundary.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func TestByteAtATimeMatchesWhole(t *testing.T) {
	for _, tc := range fixtureWants {
		data := readFixture(t, tc.file)
		whole, sumW, errW := collect(t, data, Limits{})
		var slow []Run
		sumS, errS := Parse(oneByteReader{bytes.NewReader(data)}, Limits{}, func(r Run) error {
			slow = append(slow, r)
			return nil
		})
		if fmt.Sprint(errW) != fmt.Sprint(errS) {
			t.Errorf("%s: errors differ: %v / %v", tc.file, errW, errS)
		}
		if diff := cmp.Diff(whole, slow); diff != "" || sumW != sumS {
			t.Errorf("%s: byte-at-a-time reading differs:\n%s", tc.file, diff)
		}
	}
}

// boundOutput runs data through the bounding reader with the given limit.
func boundOutput(data []byte, limit int, chunk int) ([]byte, error) {
	var src io.Reader = bytes.NewReader(data)
	if chunk == 1 {
		src = oneByteReader{src}
	}
	return io.ReadAll(newBoundReader(src, limit))
}

// wellFormed reports whether encoding/xml, set up as Parse sets it up,
// reads data to the end without error.
func wellFormed(data []byte) bool {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = charsetReader
	for {
		_, err := d.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}

func TestBoundReaderKeepsDocumentsWellFormed(t *testing.T) {
	cases := [][]byte{
		[]byte(`<a b="x&amp;y&#x1F600;z">t&lt;t&#10;é😀é<![CDATA[c]]]]><![CDATA[>d]]]><!--a-b-c--><?pi a?b?></a>`),
		[]byte(`<a><![CDATA[]]]]]]]]]]]]]]]]></a>`),
		[]byte(`<a><!----></a>`),
		[]byte(`<a><!-- - - - - - - - --></a>`),
		[]byte("<a b='&#1234567;'>&#0000000000000065;</a>"),
	}
	for _, tc := range fixtureWants {
		cases = append(cases, readFixture(t, tc.file))
	}
	for i, data := range cases {
		okIn := wellFormed(data)
		for _, limit := range []int{1, 2, 3, 5, 8, 64} {
			for _, chunk := range []int{1, 4096} {
				out, err := boundOutput(data, limit, chunk)
				if err != nil {
					t.Fatalf("case %d limit %d: %v", i, limit, err)
				}
				if okIn && !wellFormed(out) {
					t.Errorf("case %d limit %d chunk %d: cut made a well-formed document malformed:\n%s", i, limit, chunk, cut(string(out), 400))
				}
			}
		}
		if out, _ := boundOutput(data, len(data)+1, 4096); !bytes.Equal(out, data) {
			t.Errorf("case %d: changed although nothing is over the limit", i)
		}
	}
	if !wellFormed(cases[0]) {
		t.Fatal("hand-written case 0 is not well-formed; the test is broken")
	}
}

// FuzzParse asserts that no input makes Parse panic, that its Summary
// always adds up, and that cutting long texts never turns a report Parse
// accepts into one it refuses.
func FuzzParse(f *testing.F) {
	// Only the small fixtures: the fuzzer minimises every new interesting
	// input, and on a 26-133 KB seed that takes the whole time budget. The
	// big reports are read by TestFixtures; their shapes are here in small.
	for _, tc := range fixtureWants {
		if data := readFixture(f, tc.file); len(data) <= 8<<10 {
			f.Add(data)
		}
	}
	for _, seed := range []string{
		`<testsuite name="s" file="./a%20b.rb" timestamp="2024-01-03T 12:40:13"><testcase name="a" time="1,5"><flakyFailure message="m"><stackTrace>t
x</stackTrace><system-out>o</system-out></flakyFailure><flakyError/></testcase>
<testcase classname="c"><failure/><rerunFailure><stackTrace><![CDATA[s]]></stackTrace></rerunFailure><rerunError/></testcase>
<error message="suite"/><testsuite><testcase name="a" status="notrun" id="u"/></testsuite></testsuite>`,
		`<?xml version="1.0" encoding="ISO-8859-1"?><testsuites><testcase name="caf` + "\xe9" + `"><skipped/></testcase></testsuites>`,
		"\uFEFF<testsuites><testsuite><testcase/><testcase name='q' result='skipped'/></testsuite></testsuites>",
		`<!DOCTYPE x [<!ENTITY e "v">]><testsuite/>`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			t.Skip() // see FuzzBoundReader: minimising big inputs eats the run
		}
		var runs []Run
		sum, err := Parse(bytes.NewReader(data), Limits{MaxRuns: 10_000}, func(r Run) error {
			runs = append(runs, r)
			return nil
		})
		checkConsistent(t, runs, sum)
		if err != nil && !strings.HasPrefix(err.Error(), "junit: ") {
			t.Errorf("error is not a junit: sentence: %v", err)
		}
		if err != nil {
			return
		}
		small, err := Parse(bytes.NewReader(data), Limits{MaxRuns: 10_000, MaxTextBytes: 7}, nil)
		if err != nil {
			t.Errorf("accepted with default limits, refused with MaxTextBytes 7: %v", err)
		}
		if small.SuiteErrors != sum.SuiteErrors {
			t.Errorf("truncating texts changed the structure: %+v vs %+v", small, sum)
		}
	})
}

// FuzzBoundReader asserts the bounding reader's promise directly: input
// under the limit passes unchanged, and a cut never breaks well-formed
// XML, whatever the read boundaries.
func FuzzBoundReader(f *testing.F) {
	f.Add([]byte(`<a b="x&amp;y">t&lt;<![CDATA[c]]]]><!--a-b--></a>`), uint8(3))
	f.Add([]byte("<?xml version='1.0'?>\n<s a='&#x1F600;é&quot;'>é😀<![CDATA[]]]]]><!-- - --><?p ?x?></s>"), uint8(36))
	f.Add([]byte(`<t><f message="m">line&#10;two</f><o><![CDATA[x]]></o></t>`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		if len(data) > 2048 {
			// Minimising a large new input tries O(n²) variants and would
			// eat the whole run; small inputs reach every lexer state.
			t.Skip()
		}
		lim := int(limit%32) + 1
		chunk := 1 + int(limit/32%2)*4095 // one byte at a time, or 4 KiB reads
		out, err := boundOutput(data, lim, chunk)
		if err != nil {
			return // a tag or declaration over its cap
		}
		if len(out) > len(data)+2 {
			t.Errorf("output grew from %d to %d bytes", len(data), len(out))
		}
		if wellFormed(data) && !wellFormed(out) {
			t.Errorf("limit %d broke a well-formed document:\n%q\n%q", lim, data, out)
		}
		if same, _ := boundOutput(data, len(data)+1, 4096); !bytes.Equal(same, data) {
			t.Errorf("changed input under the limit")
		}
	})
}

// benchReport builds an n-case report shaped like a big Surefire/Gradle
// aggregate: 100 cases per suite, 2% failures with stack traces, 1% skips,
// a few retries.
func benchReport(n int) []byte {
	var sb strings.Builder
	sb.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<testsuites>\n")
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			if i > 0 {
				sb.WriteString("  </testsuite>\n")
			}
			fmt.Fprintf(&sb, `  <testsuite name="com.example.module%d.SomeTest" tests="100" failures="2" time="1.234" timestamp="2024-05-01T10:00:00Z" hostname="ci">`+"\n", i/100)
			sb.WriteString("    <properties><property name=\"java.version\" value=\"21\"/></properties>\n")
		}
		name := fmt.Sprintf("testSomething%d", i%100)
		if i%250 == 1 {
			name = fmt.Sprintf("testSomething%d", i%100-1) // a retry of the previous case
		}
		fmt.Fprintf(&sb, `    <testcase name="%s" classname="com.example.module%d.SomeTest" time="0.%03d">`, name, i/100, i%1000)
		switch {
		case i%50 == 7:
			sb.WriteString("\n      <failure message=\"expected:&lt;1&gt; but was:&lt;2&gt;\" type=\"java.lang.AssertionError\">java.lang.AssertionError: expected:&lt;1&gt; but was:&lt;2&gt;\n")
			sb.WriteString(strings.Repeat("\tat com.example.SomeTest.testSomething(SomeTest.java:42)\n", 20))
			sb.WriteString("      </failure>\n    ")
		case i%100 == 13:
			sb.WriteString(`<skipped message="disabled"/>`)
		}
		sb.WriteString("</testcase>\n")
	}
	sb.WriteString("  </testsuite>\n</testsuites>\n")
	return []byte(sb.String())
}

func BenchmarkParse(b *testing.B) {
	const cases = 100_000
	report := benchReport(cases)
	b.SetBytes(int64(len(report)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		sum, err := Parse(bytes.NewReader(report), Limits{}, func(Run) error { return nil })
		if err != nil || sum.Runs != cases {
			b.Fatalf("Parse: %+v, %v", sum, err)
		}
	}
	b.ReportMetric(float64(cases)*float64(n)/b.Elapsed().Seconds(), "cases/s")
}
