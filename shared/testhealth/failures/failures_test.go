package failures

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/internal/testkit"
)

// fixtureDir holds the real CI reports shared by the repository's tests.
var fixtureDir = testkit.JUnitDir()

func TestText(t *testing.T) {
	tests := []struct {
		name, message, body, want string
	}{
		{"message wins", "expected 1", "body line", "expected 1"},
		{"message trimmed", "\n  Expected: x\n  but: y\n", "", "Expected: x\n  but: y"},
		{"blank message falls back to body", "  \t", "\n\n   Error: expect(received).toBeTruthy()\n\nReceived: false\n", "Error: expect(received).toBeTruthy()"},
		{"CRLF body", "", "\r\n\r\n  boom \r\nnext\r\n", "boom"},
		{"body without newline", "", "  only line  ", "only line"},
		{"both blank", " ", " \n\t\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(Text(tt.message, tt.body), tt.want); diff != "" {
				t.Errorf("Text (-got +want):\n%s", diff)
			}
		})
	}
}

// TestNormalize shows each replacement on text taken from the fixtures'
// failures (Go, Surefire, pytest, Jest, Playwright, nextest, Swift, .NET).
func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		// numbers
		{"expected [1.2.1] but found [1.2.0]", "expected [<n>.<n>] but found [<n>.<n>]"},
		{"=== RUN   TestSkipped\n    fails_test.go:26: \n--- SKIP: TestSkipped (0.00s)\n", "=== RUN TestSkipped <pos>: --- SKIP: TestSkipped (<n>s)"},
		{"exited with error code 1", "exited with error code <n>"},
		{"Test timeout of 1ms exceeded.", "Test timeout of <n>ms exceeded."},
		{"got -1.5e-3, want 2E10", "got -<n>, want <n>"},
		{"TestFoo3817263 python3.8 x64 utf8 sha256", "TestFoo<n> python3.<n> x64 utf8 sha<n>"},
		{"TEST_42 failed", "TEST_<n> failed"},
		// hex, addresses
		{"Write at 0x00c000138168 by goroutine 8:", "Write at <addr> by goroutine <n>:"},
		{"/src/package/name/panic/main_test.go:6 +0x27", "<pos> +<hex>"},
		{"commit 44d74c74c5 and deadbeef", "commit <hex> and deadbeef"},
		{"test-instance-44d74c74c5 exists", "test-instance-<hex> exists"},
		{"java.lang.Object@6d06d69c", "java.lang.Object@<hex>"},
		// uuids
		{"run 550e8400-e29b-41d4-a716-446655440000 failed", "run <uuid> failed"},
		{"id=6BA7B811-9DAD-11D1-80B4-00C04FD430C8.", "id=<uuid>."},
		// quoted strings
		{`A message with "quotes"`, "A message with <str>"},
		{"A message with 'apostrophes'", "A message with <str>"},
		{"Input='' didn't match condition.", "Input=<str> didn't match condition."},
		{"assertion `left == right` failed: 0 must equal 1", "assertion <str> failed: <n> must equal <n>"},
		{`swift_testing_exampleTests.swift:19: Expectation failed: (greeting → "Hello, world!") == "Hello"`, "<pos>: Expectation failed: (greeting → <str>) == <str>"},
		{`it's "unclosed`, `it's "unclosed`},
		{`say "a \" b" now`, "say <str> now"},
		{"thread 'test_failure' panicked at tests/parry3d.rs:154:5:", "thread <str> panicked at <pos>:"},
		// positions
		{"at action.surefire.report.calc.StringUtils.requireNotBlank(StringUtils.java:25)", "at action.surefire.report.calc.StringUtils.requireNotBlank(<pos>)"},
		{`at Object.<anonymous> (C:\Users\Michal\Workspace\dorny\test-check\reports\jest\__tests__\main.test.js:10:21)`, "at Object.<anonymous> (<pos>)"},
		{"timeout-example.spec.ts:3:5 time-out", "<pos> time-out"},
		{"  [chromium] › tests/timeout-example.spec.ts:3:5 › time-out ────", "[chromium] › <pos> › time-out ────"},
		{`File "/workspace/e2e_test.py", line 70, in services`, "File <str>, <pos>, in services"},
		{"Syntax error at line 3", "Syntax error at <pos>"},
		{"inline 3 and main:12", "inline <n> and main:<n>"},
		// timestamps and times
		{"at 2026-07-23T01:32:50.000Z", "at <time>"},
		{"at 2026-07-23 01:32:50 UTC", "at <time> UTC"},
		{"timestamp=2020-08-11T11:29:15.048360+02:00 ok", "timestamp=<time> ok"},
		{"on 2026-07-23.", "on <time>."},
		{"at 12:01:02.123 and Failure at 1:00", "at <time> and Failure at <time>"},
		{"ratio 3:5 and 12:345", "ratio <n>:<n> and <n>:<n>"},
		// temporary paths
		{"open /tmp/TestFoo123/001/config.yaml: no such file", "open <tmp>: no such file"},
		{"open /var/folders/x_/abc123/T/pytest-of-me/y: denied", "open <tmp>: denied"},
		{`C:\Users\me\AppData\Local\Temp\tmpab3kd9x_\f.txt is locked`, "<tmp> is locked"},
		{"ls /tmp", "ls /tmp"},
		// whitespace and escapes
		{"  a \t\r\n b  ", "a b"},
		{"\x1b[31mred\x1b[0m text", "red text"},
		{"", ""},
		{"bad \xff byte", "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Normalize(tt.in)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Normalize(%q) (-got +want):\n%s", tt.in, diff)
			}
			if again := Normalize(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

// TestClusters: two runs of one failure that differ in numbers, addresses,
// temporary paths, ids or timestamps share a key; different failures don't.
// The first text of each group is a real fixture failure.
func TestClusters(t *testing.T) {
	groups := []struct {
		name  string
		texts []string
	}{
		{"go race", []string{
			"race_test.go:13: x = 3 WARNING: DATA RACE Write at 0x00c000138168 by goroutine 8:",
			"race_test.go:14: x = 4 WARNING: DATA RACE Write at 0x00c0001a2f40 by goroutine 23:",
		}},
		{"go panic body", []string{
			"panic: init\n\ngoroutine 1 [running]:\npackage/name/panic.init.0()\n\t/src/package/name/panic/main_test.go:6 +0x27\nexit status 2",
			"panic: init\n\ngoroutine 7 [running]:\npackage/name/panic.init.0()\n\t/home/runner/work/x/x/package/name/panic/main_test.go:6 +0x2f\nexit status 2",
		}},
		{"surefire", []string{
			"RuntimeException; nested exception is: \n\torg.twia.dao.DAOException: [S2001] Hibernate encountered an error updating Claim [null] : \n\tid = C0147909. Reason = The given object has a null identifier: org.twia.claim.Claim; Logon Id: tbotadauth. Claim Id: {3}.",
			"RuntimeException; nested exception is: \n\torg.twia.dao.DAOException: [S2001] Hibernate encountered an error updating Claim [null] : \n\tid = C0150211. Reason = The given object has a null identifier: org.twia.claim.Claim; Logon Id: tbotadauth. Claim Id: {12}.",
		}},
		{"pytest setup", []string{
			"failed on setup with \"subprocess.CalledProcessError: Command '['gcloud', 'redis', 'instances', 'create', 'test-instance-44d74c74c5', '--region=us-central1']' returned non-zero exit status 1.\"",
			"failed on setup with \"subprocess.CalledProcessError: Command '['gcloud', 'redis', 'instances', 'create', 'test-instance-9f0e1d2c3b', '--region=us-central1']' returned non-zero exit status 1.\"",
		}},
		{"pytest tmp path", []string{
			"FileNotFoundError: [Errno 2] No such file or directory: '/tmp/pytest-of-runner/pytest-12/test_load0/config.yaml'",
			"FileNotFoundError: [Errno 2] No such file or directory: '/tmp/pytest-of-root/pytest-3/test_load0/config.yaml'",
		}},
		{"go tmp dir", []string{
			"open /tmp/TestLoad3817263/001/config.yaml: no such file or directory",
			"open /tmp/TestLoad1029384/002/config.yaml: no such file or directory",
		}},
		{"jest", []string{
			"Error: Some error\n    at Object.throwError (C:\\Users\\Michal\\Workspace\\dorny\\test-check\\reports\\jest\\lib\\main.js:2:9)",
			"Error: Some error\n    at Object.throwError (/home/runner/work/test-check/test-check/reports/jest/lib/main.js:2:11)",
		}},
		{"jest timeout", []string{
			": Timeout - Async callback was not invoked within the 1 ms timeout specified by jest.setTimeout.",
			": Timeout - Async callback was not invoked within the 5000 ms timeout specified by jest.setTimeout.",
		}},
		{"playwright", []string{
			"timeout-example.spec.ts:3:5 time-out",
			"timeout-example.spec.ts:4:7 time-out",
		}},
		{"nextest", []string{
			"thread 'test_failure' panicked at tests/parry3d.rs:154:5:",
			"thread 'test_failure' panicked at tests/parry3d.rs:160:9:",
		}},
		{"swift", []string{
			`swift_testing_exampleTests.swift:19: Expectation failed: (greeting → "Hello, world!") == "Hello"`,
			`swift_testing_exampleTests.swift:31: Expectation failed: (greeting → "Hello, there!") == "Hi"`,
		}},
		{"timestamps and ids", []string{
			"job 550e8400-e29b-41d4-a716-446655440000 timed out at 2026-07-23T01:32:50.000Z after 30s",
			"job 6ba7b811-9dad-11d1-80b4-00c04fd430c8 timed out at 2026-07-24 11:02:07 after 31s",
		}},
		{"surefire expectation", []string{"expected [1.2.1] but found [1.2.0]", "expected [2.0.0] but found [1.9.9]"}},
		{"testng", []string{"expected: [a] but was: [b]"}},
		{"nunit", []string{"System.ApplicationException : Intentional Exception"}},
		{"pytest assert", []string{"assert False"}},
		{"spark", []string{"get_available_devices only supported in Spark 3.0 and above"}},
		{"go build", []string{"Build error"}},
		{"go skip", []string{"the skip message"}},
	}
	keys := map[string]string{} // key -> group
	for _, g := range groups {
		want := Key(g.texts[0])
		if len(want) != keyHexChars || strings.Trim(want, "0123456789abcdef") != "" {
			t.Fatalf("%s: Key = %q, want %d lowercase hex characters", g.name, want, keyHexChars)
		}
		for _, text := range g.texts[1:] {
			if got := Key(text); got != want {
				t.Errorf("%s: keys differ:\n  %q\n  -> %q\n  %q\n  -> %q", g.name, g.texts[0], Normalize(g.texts[0]), text, Normalize(text))
			}
		}
		if other, ok := keys[want]; ok {
			t.Errorf("groups %q and %q share key %s (%q)", other, g.name, want, Normalize(g.texts[0]))
		}
		keys[want] = g.name
	}
}

func TestKeyIsNormalizeHash(t *testing.T) {
	if Key("a 1") != Key("a   22") {
		t.Error("equal normal forms, different keys")
	}
	if Key("a 1") == Key("b 1") {
		t.Error("different normal forms, equal keys")
	}
	if Key("") == Key(" x") {
		t.Error("empty text shares a key with x")
	}
}

func TestSummary(t *testing.T) {
	long := strings.Repeat("é", SummaryRunes+10)
	tests := []struct {
		name, in, want string
	}{
		{"short kept", "it broke", "it broke"},
		{"exactly 256", strings.Repeat("a", SummaryRunes), strings.Repeat("a", SummaryRunes)},
		{"cut in runes", long, strings.Repeat("é", SummaryRunes)},
		{"astral runes", strings.Repeat("𒍺", 300), strings.Repeat("𒍺", SummaryRunes)},
		{"invalid UTF-8 replaced", "a\xffb", "a\uFFFDb"},
		{"original kept", "Write at 0x00c000138168", "Write at 0x00c000138168"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summary(tt.in)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Summary (-got +want):\n%s", diff)
			}
			if !utf8.ValidString(got) || utf8.RuneCountInString(got) > SummaryRunes {
				t.Errorf("Summary = %q: invalid or too long", got)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	t.Run("only the first MaxInput bytes count", func(t *testing.T) {
		head := strings.Repeat("abc ", MaxInput/4)
		if a, b := Normalize(head+"tail one"), Normalize(head+"another tail "+strings.Repeat("z", 1<<20)); a != b {
			t.Errorf("texts equal in their first %d bytes normalise differently", MaxInput)
		}
	})
	t.Run("a cut never splits a rune", func(t *testing.T) {
		got := Normalize("a" + strings.Repeat("é", MaxInput))
		if !utf8.ValidString(got) {
			t.Error("invalid UTF-8")
		}
	})
	t.Run("expanded output is cut at a space", func(t *testing.T) {
		in := strings.Repeat("1 ", MaxInput/2) // every "1" becomes "<n>"
		got := Normalize(in)
		if len(got) > MaxInput || !strings.HasSuffix(got, "<n>") || strings.HasSuffix(got, " ") {
			t.Errorf("len %d, ends %q", len(got), got[max(0, len(got)-8):])
		}
		if Normalize(got) != got {
			t.Error("cut output is not a fixed point")
		}
	})
	t.Run("expanded output without spaces is cut after a placeholder", func(t *testing.T) {
		got := Normalize(strings.Repeat("1,", MaxInput/2))
		if len(got) > MaxInput || !strings.HasSuffix(got, "<n>") {
			t.Errorf("len %d, ends %q", len(got), got[max(0, len(got)-8):])
		}
		if Normalize(got) != got {
			t.Error("cut output is not a fixed point")
		}
	})
}

// fixtureFailure is one <failure>/<error> (and Surefire's flaky and rerun
// variants) of a fixture report.
type fixtureFailure struct {
	file, message, body string
}

// readFixtureFailures collects every failure of every fixture report with
// encoding/xml, independently of the service's own JUnit reader. Broken
// fixtures (truncated, DOCTYPE) yield what precedes the break.
func readFixtureFailures(t testing.TB) []fixtureFailure {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.xml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	kinds := []string{"failure", "error", "flakyFailure", "flakyError", "rerunFailure", "rerunError"}
	var out []fixtureFailure
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(f)
		d.Strict = false
		var cur *fixtureFailure
		var body strings.Builder
		for {
			tok, err := d.Token()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Logf("%s: %v (kept what came before)", filepath.Base(p), err)
				}
				break
			}
			switch el := tok.(type) {
			case xml.StartElement:
				if cur == nil && slices.Contains(kinds, el.Name.Local) {
					cur = &fixtureFailure{file: filepath.Base(p)}
					for _, a := range el.Attr {
						if a.Name.Local == "message" {
							cur.message = a.Value
						}
					}
					body.Reset()
				}
			case xml.CharData:
				if cur != nil {
					body.Write(el)
				}
			case xml.EndElement:
				if cur != nil && slices.Contains(kinds, el.Name.Local) {
					cur.body = body.String()
					out = append(out, *cur)
					cur = nil
				}
			}
		}
		f.Close()
	}
	return out
}

// TestFixtureFailures runs every real failure of the fixtures through
// Text and Normalize: non-empty texts normalise idempotently to valid
// UTF-8 within the bound, and failures from different generators keep
// apart.
func TestFixtureFailures(t *testing.T) {
	fails := readFixtureFailures(t)
	if len(fails) < 50 {
		t.Fatalf("read %d failures from the fixtures, expected many more", len(fails))
	}
	byKey := map[string][]string{} // key -> fixture files
	for _, f := range fails {
		text := Text(f.message, f.body)
		n := Normalize(text)
		if again := Normalize(n); again != n {
			t.Errorf("%s: not idempotent:\n%q\n%q", f.file, n, again)
		}
		if !utf8.ValidString(n) || len(n) > MaxInput {
			t.Errorf("%s: bad output (valid %v, %d bytes)", f.file, utf8.ValidString(n), len(n))
		}
		if text != "" && n == "" {
			t.Errorf("%s: %q normalised to nothing", f.file, text)
		}
		k := Key(text)
		if !slices.Contains(byKey[k], f.file) {
			byKey[k] = append(byKey[k], f.file)
		}
	}
	t.Logf("%d failures, %d clusters", len(fails), len(byKey))
	if len(byKey) < 40 {
		t.Errorf("only %d distinct clusters across %d fixture failures", len(byKey), len(fails))
	}
}

func FuzzNormalize(f *testing.F) {
	f.Add("Write at 0x00c000138168 by goroutine 8:")
	f.Add(`it's "a" 'b'x 'c' "d\" e" ` + "`f`")
	f.Add("at 2026-07-23T01:32:50.000Z 12:01:02.123 1:00 line 3 foo.go:12:3")
	f.Add("open /tmp/a1/b: x; C:\\a\\AppData\\Local\\Temp\\x y 550e8400-e29b-41d4-a716-446655440000")
	f.Add("1'a b'2 \x1b[31m'x'\x1b[0my \xff")
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if !utf8.ValidString(n) {
			t.Fatalf("invalid UTF-8: %q", n)
		}
		if len(n) > MaxInput {
			t.Fatalf("%d bytes", len(n))
		}
		if again := Normalize(n); again != n {
			t.Fatalf("not idempotent:\nin    %q\nonce  %q\ntwice %q", s, n, again)
		}
		if sum := Summary(s); !utf8.ValidString(sum) || utf8.RuneCountInString(sum) > SummaryRunes {
			t.Fatalf("Summary %q", sum)
		}
	})
}
