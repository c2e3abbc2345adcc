package bundle

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/testhealth/junit"
)

// fixtures holds the real CI reports shared by the repository's tests.
var fixtures = testkit.JUnitDir()

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testMeta() Meta {
	return Meta{
		Version:    "1",
		CLIVersion: "0.10.3",
		Org:        "acme",
		Repo: Repo{
			Host: "github.com", Owner: "acme", Name: "widgets",
			HeadSHA: "0123456789abcdef0123456789abcdef01234567", HeadBranch: "main",
			URL:            "https://github.com/acme/widgets.git",
			HeadCommitTime: time.Unix(1_700_000_000, 0).UTC(),
		},
		BundleUploadID: "6b1c5d0e-2f0a-4c1e-9d3b-5a7e8f9a0b1c",
		UploadTime:     time.Unix(1_700_000_600, 0).UTC(),
		Variant:        "linux",
		Envs:           map[string]string{"GITHUB_REF": "refs/pull/42/merge", "CI": "true"},
		Tags:           []Tag{{"team", "core"}, {"shard", "1"}},
	}
}

// recorder is a Handler that remembers everything it was given.
type recorder struct {
	meta       []Meta
	files      []string
	runs       map[string][]junit.Run
	codeowners []byte
	order      []string
}

func (r *recorder) handler() Handler {
	r.runs = map[string][]junit.Run{}
	return Handler{
		Meta: func(m Meta) error {
			r.meta = append(r.meta, m)
			r.order = append(r.order, "meta")
			return nil
		},
		JUnitFile: func(name string) error {
			r.files = append(r.files, name)
			r.order = append(r.order, name)
			return nil
		},
		Run: func(file string, run junit.Run) error {
			r.runs[file] = append(r.runs[file], run)
			return nil
		},
		Codeowners: func(text []byte) error {
			r.codeowners = text
			r.order = append(r.order, "codeowners")
			return nil
		},
	}
}

func parseDirect(t testing.TB, body []byte) (junit.Summary, []junit.Run) {
	t.Helper()
	var runs []junit.Run
	s, err := junit.Parse(bytes.NewReader(body), junit.Limits{}, func(r junit.Run) error {
		runs = append(runs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("junit.Parse: %v", err)
	}
	return s, runs
}

func TestRoundTrip(t *testing.T) {
	names := []string{"gotestsum-report.xml", "surefire-3.0.2-flakyFailure.xml", "pytest-horovod-fail-skip.xml"}
	in := WriteInput{Meta: testMeta(), Codeowners: []byte("* @acme/core\n/docs/ @acme/docs\n")}
	for i, n := range names {
		in.JUnit = append(in.JUnit, File{
			OriginalPath: "reports/" + n,
			Body:         fixture(t, n),
			ModTime:      time.Unix(1_700_000_100+int64(i), 5).UTC(),
		})
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}

	var rec recorder
	sum, err := Read(bytes.NewReader(buf.Bytes()), Limits{}, rec.handler())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if diff := cmp.Diff(rec.meta, []Meta{testMeta()}); diff != "" {
		t.Errorf("meta (-got +want):\n%s", diff)
	}
	if got := rec.meta[0].PullRequest(); got != 42 {
		t.Errorf("PullRequest = %d, want 42", got)
	}
	wantOrder := []string{"meta", "junit/0", "junit/1", "junit/2", "codeowners"}
	if diff := cmp.Diff(rec.order, wantOrder); diff != "" {
		t.Errorf("handler order (-got +want):\n%s", diff)
	}
	var want Summary
	for i, f := range in.JUnit {
		s, runs := parseDirect(t, f.Body)
		name := fmt.Sprintf("junit/%d", i)
		if s.Runs == 0 {
			t.Fatalf("fixture %s has no runs; pick another", names[i])
		}
		if diff := cmp.Diff(runs, rec.runs[name]); diff != "" {
			t.Errorf("%s runs (-direct +bundle):\n%s", name, diff)
		}
		want.Files++
		want.Runs += s.Runs
		want.Passed += s.Passed
		want.Failed += s.Failed
		want.Errored += s.Errored
		want.Skipped += s.Skipped
		want.Retries += s.Retries
	}
	if diff := cmp.Diff(sum, want); diff != "" {
		t.Errorf("summary (-got +want):\n%s", diff)
	}
	if string(rec.codeowners) != string(in.Codeowners) {
		t.Errorf("codeowners = %q, want %q", rec.codeowners, in.Codeowners)
	}
}

// TestWriteLayout checks what Write puts in the archive: the uploader's
// entry order and meta.json field names.
func TestWriteLayout(t *testing.T) {
	in := WriteInput{
		Meta:       testMeta(),
		JUnit:      []File{{OriginalPath: "a.xml", Body: []byte("<testsuite/>")}, {OriginalPath: "b.xml", Body: []byte("<testsuites/>")}},
		Codeowners: []byte("* @x\n"),
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	entries := untar(t, buf.Bytes())
	var names []string
	for _, e := range entries {
		names = append(names, e.name)
	}
	if diff := cmp.Diff(names, []string{"meta.json", "junit/0", "junit/1", "CODEOWNERS"}); diff != "" {
		t.Errorf("entries (-got +want):\n%s", diff)
	}
	var m map[string]any
	if err := json.Unmarshal(entries[0].body, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "cli_version", "org", "repo", "bundle_upload_id", "bundle_upload_id_v2", "tags",
		"file_sets", "envs", "upload_time_epoch", "test_command", "os_info", "quarantined_tests", "codeowners",
		"num_files", "num_tests", "command_line", "trunk_envs", "variant", "failed_tests"} {
		if _, ok := m[k]; !ok {
			t.Errorf("meta.json lacks %q", k)
		}
	}
	repo := m["repo"].(map[string]any)
	for _, k := range []string{"repo", "repo_url", "repo_head_sha", "repo_head_sha_short", "repo_head_branch",
		"repo_head_commit_epoch", "repo_head_commit_message", "repo_head_author_name", "repo_head_author_email", "repo_root"} {
		if _, ok := repo[k]; !ok {
			t.Errorf("meta.json repo lacks %q", k)
		}
	}
	if m["version"] != "1" || repo["repo_head_sha_short"] != "0123456" || m["num_files"] != float64(2) {
		t.Errorf("version %v, sha_short %v, num_files %v", m["version"], repo["repo_head_sha_short"], m["num_files"])
	}
	fs := m["file_sets"].([]any)[1].(map[string]any)
	f := fs["files"].([]any)[0].(map[string]any)
	if fs["file_set_type"] != "Junit" || f["path"] != "junit/1" || f["original_path"] != "b.xml" {
		t.Errorf("file_sets[1] = %v", fs)
	}
	if c := m["codeowners"].(map[string]any); c["path"] != "CODEOWNERS" {
		t.Errorf("codeowners = %v", c)
	}

	if err := Write(io.Discard, WriteInput{Meta: Meta{Org: "x"}}); err == nil {
		t.Error("Write accepted a meta without repo and bundle id")
	}
}

type entry struct {
	name string
	body []byte
}

func untar(t *testing.T, b []byte) []entry {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{h.Name, body})
	}
}

// uploaderMeta is a meta.json as the uploader writes it (BundleMetaV0_7_8),
// with fields this package ignores.
const uploaderMeta = `{
  "version": "1",
  "cli_version": "cargo=0.10.3 git=abc123 rustc=1.83.0",
  "org": "acme",
  "test_collection_short_id": null,
  "repo": {
    "repo": {"host": "gitlab.com", "owner": "acme/platform", "name": "api"},
    "repo_root": "/builds/acme/platform/api",
    "repo_url": "https://gitlab.com/acme/platform/api.git",
    "repo_head_sha": "feedfacecafebeef",
    "repo_head_sha_short": "feedfac",
    "repo_head_branch": "refs/heads/feature",
    "repo_head_commit_epoch": 1712345678,
    "repo_head_commit_message": "Fix it",
    "repo_head_author_name": "Ann",
    "repo_head_author_email": "ann@example.com",
    "use_uncloned_repo": false
  },
  "bundle_upload_id": "b-1",
  "tags": [{"key": "k", "value": "v"}],
  "file_sets": [{"file_set_type": "Junit", "files": [{"original_path": "/builds/x/report.xml",
     "original_path_rel": "report.xml", "path": "junit/0", "last_modified_epoch_ns": 1712345678000000000,
     "owners": ["@ann"], "team": null}], "glob": "**/report.xml", "resolved_status": null},
    {"file_set_type": "Internal", "files": [{"original_path": "/tmp/t.bin", "original_path_rel": null,
     "path": "internal/0", "last_modified_epoch_ns": 0, "owners": [], "team": null}], "glob": "*.bin"}],
  "envs": {"CI_MERGE_REQUEST_IID": "17", "GITLAB_CI": "true"},
  "upload_time_epoch": 1712345700,
  "test_command": "make test",
  "os_info": "linux",
  "quarantined_tests": [{"name": "t", "parentName": "p", "className": null, "file": null, "id": "x",
     "timestamp_millis": null, "is_quarantined": true, "failure_message": null, "variant": null}],
  "codeowners": {"path": "/builds/acme/platform/api/.github/CODEOWNERS"},
  "use_uncloned_repo": false,
  "num_files": 1,
  "num_tests": 3,
  "command_line": "trunk-analytics-cli test make test",
  "trunk_envs": {"TRUNK_ORG_URL_SLUG": "acme"},
  "bundle_upload_id_v2": "b-1-v2",
  "variant": null,
  "internal_bundled_file": {"original_path": "internal.bin", "path": "internal.bin"},
  "failed_tests": []
}`

const smallJUnit = `<?xml version="1.0"?>
<testsuites><testsuite name="s" tests="3">
<testcase classname="c" name="a" time="0.1"/>
<testcase classname="c" name="b"><failure message="boom"/></testcase>
<testcase classname="c" name="c"><skipped/></testcase>
</testsuite></testsuites>`

// tarEntry is one entry of a hand-built bundle.
type tarEntry struct {
	name string
	body string
	typ  byte // 0 means tar.TypeReg
	link string
	size int64 // declared size when body is streamed from a reader
	data io.Reader
}

// build writes entries as tar, compressed with zstd, the way the test
// wants it; it streams, so declared sizes may be huge.
func build(t testing.TB, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: e.typ, Linkname: e.link, ModTime: time.Unix(1_700_000_000, 0)}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		var body io.Reader = strings.NewReader(e.body)
		h.Size = int64(len(e.body))
		if e.data != nil {
			body, h.Size = e.data, e.size
		}
		if h.Typeflag != tar.TypeReg {
			h.Size, body = 0, strings.NewReader("")
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestUploaderLayout(t *testing.T) {
	b := build(t, []tarEntry{
		{name: "meta.json", body: uploaderMeta},
		{name: "internal.bin", body: "\x0a\x03abc\x12\x00binary"},
		{name: "./junit/0", body: smallJUnit},
		{name: "internal/0", body: "\x00\x01\x02"},
		{name: "junit/", typ: tar.TypeDir},
		{name: "junit/link", typ: tar.TypeSymlink, link: "/etc/passwd"},
		{name: "junit/hard", typ: tar.TypeLink, link: "junit/0"},
		{name: "junit/dev", typ: tar.TypeChar},
		{name: ".github/CODEOWNERS", body: "* @acme/platform\n"},
		{name: "bazel_bep.json", body: `{"id":{}}` + "\n"},
	})
	var rec recorder
	sum, err := Read(bytes.NewReader(b), Limits{}, rec.handler())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	want := Meta{
		Version: "1", CLIVersion: "cargo=0.10.3 git=abc123 rustc=1.83.0", Org: "acme",
		Repo: Repo{Host: "gitlab.com", Owner: "acme/platform", Name: "api", HeadSHA: "feedfacecafebeef",
			HeadBranch: "refs/heads/feature", URL: "https://gitlab.com/acme/platform/api.git",
			HeadCommitTime: time.Unix(1712345678, 0).UTC()},
		BundleUploadID: "b-1",
		UploadTime:     time.Unix(1712345700, 0).UTC(),
		Envs:           map[string]string{"CI_MERGE_REQUEST_IID": "17", "GITLAB_CI": "true"},
		Tags:           []Tag{{"k", "v"}},
	}
	if diff := cmp.Diff(rec.meta, []Meta{want}); diff != "" {
		t.Errorf("meta (-got +want):\n%s", diff)
	}
	if pr := rec.meta[0].PullRequest(); pr != 17 {
		t.Errorf("PullRequest = %d, want 17", pr)
	}
	if diff := cmp.Diff(rec.order, []string{"meta", "junit/0", "codeowners"}); diff != "" {
		t.Errorf("order (-got +want):\n%s", diff)
	}
	wantSum := Summary{Files: 1, Runs: 3, Passed: 1, Failed: 1, Skipped: 1}
	if diff := cmp.Diff(sum, wantSum); diff != "" {
		t.Errorf("summary (-got +want):\n%s", diff)
	}
	if len(rec.runs["junit/0"]) != 3 || string(rec.codeowners) != "* @acme/platform\n" {
		t.Errorf("runs %v, codeowners %q", rec.runs, rec.codeowners)
	}
}

func zstdOf(t testing.TB, b []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(b, nil)
}

func metaWith(t testing.TB, edit func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(uploaderMeta), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRefusals(t *testing.T) {
	good := func(extra ...tarEntry) []byte {
		return build(t, append([]tarEntry{{name: "meta.json", body: uploaderMeta}}, extra...))
	}
	valid := good(tarEntry{name: "junit/0", body: smallJUnit})
	many := []tarEntry{{name: "meta.json", body: uploaderMeta}}
	for i := range 12 {
		many = append(many, tarEntry{name: fmt.Sprintf("internal/%d", i), body: "x"})
	}
	tests := []struct {
		name   string
		bundle []byte
		lim    Limits
		reason string
		// runsOK: the refusal comes after a JUnit file was streamed.
		runsOK bool
		// whole: the bundle as a whole is refused, not one file.
		whole bool
	}{
		{name: "not zstd", bundle: []byte("PK\x03\x04 this is a zip file"), reason: "not zstd-compressed"},
		{name: "empty", bundle: nil, reason: "not zstd-compressed"},
		{name: "gzip", bundle: []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}, reason: "not zstd-compressed"},
		{name: "zstd but not tar", bundle: zstdOf(t, bytes.Repeat([]byte("hello, not a tar archive\n"), 40)), reason: "does not hold a tar archive"},
		{name: "corrupt zstd", bundle: append(append([]byte{}, valid[:4]...), bytes.Repeat([]byte{0xff}, 64)...), reason: "zstd stream is corrupt"},
		{name: "truncated zstd", bundle: valid[:len(valid)/2], reason: "corrupt or truncated"},
		{name: "no meta.json", bundle: build(t, []tarEntry{{name: "internal.bin", body: "x"}}), reason: "has no meta.json"},
		{name: "meta not JSON", bundle: build(t, []tarEntry{{name: "meta.json", body: "{not json"}}), reason: "meta.json is not valid JSON"},
		{name: "meta wrong shape", bundle: build(t, []tarEntry{{name: "meta.json", body: `{"org": 3}`}}), reason: "meta.json is not valid JSON"},
		{name: "no org", bundle: build(t, []tarEntry{{name: "meta.json", body: metaWith(t, func(m map[string]any) { delete(m, "org") })}}), reason: "meta.json lacks org"},
		{name: "no repo", bundle: build(t, []tarEntry{{name: "meta.json", body: metaWith(t, func(m map[string]any) { delete(m, "repo") })}}), reason: "meta.json lacks repo.repo.host, repo.repo.owner, repo.repo.name"},
		{name: "no repo name", bundle: build(t, []tarEntry{{name: "meta.json", body: metaWith(t, func(m map[string]any) {
			m["repo"].(map[string]any)["repo"].(map[string]any)["name"] = ""
		})}}), reason: "meta.json lacks repo.repo.name"},
		{name: "no bundle id", bundle: build(t, []tarEntry{{name: "meta.json", body: metaWith(t, func(m map[string]any) { m["bundle_upload_id"] = nil })}}), reason: "meta.json lacks bundle_upload_id"},
		{name: "long variant", bundle: build(t, []tarEntry{{name: "meta.json", body: metaWith(t, func(m map[string]any) { m["variant"] = strings.Repeat("v", 65) })}}), reason: "variant of 65 characters"},
		{name: "bad epoch", bundle: build(t, []tarEntry{{name: "meta.json", body: metaWith(t, func(m map[string]any) { m["upload_time_epoch"] = "soon" })}}), reason: "meta.json is not valid JSON"},
		{name: "two metas", bundle: good(tarEntry{name: "meta.json", body: uploaderMeta}), reason: "more than one meta.json"},
		{name: "junit before meta", bundle: build(t, []tarEntry{{name: "junit/0", body: smallJUnit}, {name: "meta.json", body: uploaderMeta}}), reason: "JUnit file junit/0 before its meta.json"},
		{name: "meta too big", bundle: good(), lim: Limits{MaxMeta: 100}, reason: "meta.json is larger than 100 bytes"},
		{name: "codeowners too big", bundle: good(tarEntry{name: "CODEOWNERS", body: strings.Repeat("* @a\n", 300)}), lim: Limits{MaxCodeowners: 1024}, reason: "CODEOWNERS is larger than 1 KiB"},
		{name: "compressed too big", bundle: valid, lim: Limits{MaxCompressed: 64}, reason: "larger than 64 bytes compressed"},
		{name: "uncompressed too big (declared)", bundle: good(tarEntry{name: "internal.bin", body: strings.Repeat("z", 5000)}), lim: Limits{MaxUncompressed: 4096 + 1024}, reason: "larger than 5 KiB uncompressed"},
		{name: "entry too big", bundle: good(tarEntry{name: "internal.bin", body: strings.Repeat("z", 5000)}), lim: Limits{MaxEntry: 4096}, reason: `entry "internal.bin" is larger than 4 KiB`},
		{name: "too many entries", bundle: build(t, many), lim: Limits{MaxEntries: 10}, reason: "more than 10 entries"},
		{name: "path traversal", bundle: good(tarEntry{name: "../evil", body: "x"}), reason: `unsafe path "../evil"`},
		{name: "path traversal inside", bundle: good(tarEntry{name: "junit/../../evil", body: "x"}), reason: "unsafe path"},
		{name: "absolute path", bundle: good(tarEntry{name: "/etc/cron.d/x", body: "x"}), reason: "unsafe path"},
		{name: "truncated junit", bundle: good(tarEntry{name: "junit/0", body: string(fixture(t, "corrupt-truncated.xml"))}), reason: "JUnit file junit/0 (/builds/x/report.xml) was refused: junit: ", runsOK: true},
		{name: "doctype junit", bundle: good(tarEntry{name: "junit/0", body: smallJUnit}, tarEntry{name: "junit/1", body: string(fixture(t, "xxe-external-entity.xml"))}), reason: "JUnit file junit/1 was refused: junit: ", runsOK: true},
		{name: "not xml junit", bundle: good(tarEntry{name: "junit/0", body: "{\"tests\": []}"}), reason: "JUnit file junit/0 (/builds/x/report.xml) was refused", runsOK: true},
		{name: "junit over run limit", bundle: valid, lim: Limits{JUnit: junit.Limits{MaxRuns: 2}}, reason: "JUnit file junit/0 (/builds/x/report.xml) was refused", runsOK: true},
		// Two files each under the per-file limit, together over the
		// bundle's: refused before the first run past it is handed on.
		{name: "bundle over run limit", bundle: good(tarEntry{name: "junit/0", body: smallJUnit}, tarEntry{name: "junit/1", body: smallJUnit}),
			lim: Limits{MaxRuns: 5, JUnit: junit.Limits{MaxRuns: 5}}, reason: "the bundle holds more than 5 test runs", runsOK: true, whole: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var runs int
			h := Handler{Run: func(string, junit.Run) error { runs++; return nil }}
			sum, err := Read(bytes.NewReader(tc.bundle), tc.lim, h)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Read error = %v (%T), want *Error", err, err)
			}
			if !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("Reason = %q, want it to contain %q", e.Reason, tc.reason)
			}
			if !tc.runsOK && runs != 0 {
				t.Errorf("h.Run called %d times for a bundle refused by %s", runs, tc.name)
			}
			if tc.runsOK && !tc.whole && (len(sum.Refused) != 1 || !strings.HasPrefix(sum.Refused[0].File, "junit/")) {
				t.Errorf("Summary.Refused = %v, want the refused file", sum.Refused)
			}
		})
	}
	// The well-formed bundle the cases above are cut from is accepted.
	if _, err := Read(bytes.NewReader(valid), Limits{}, Handler{}); err != nil {
		t.Fatalf("valid bundle refused: %v", err)
	}
}

func TestHandlerErrorsReturnedUnchanged(t *testing.T) {
	b := build(t, []tarEntry{{name: "meta.json", body: uploaderMeta}, {name: "junit/0", body: smallJUnit}, {name: "CODEOWNERS", body: "*"}})
	stop := errors.New("storage down")
	for name, h := range map[string]Handler{
		"meta":       {Meta: func(Meta) error { return stop }},
		"junitfile":  {JUnitFile: func(string) error { return stop }},
		"run":        {Run: func(string, junit.Run) error { return stop }},
		"codeowners": {Codeowners: func([]byte) error { return stop }},
	} {
		if _, err := Read(bytes.NewReader(b), Limits{}, h); err != stop {
			t.Errorf("%s: Read error = %v, want the handler's error unchanged", name, err)
		}
	}
}

func TestPullRequest(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want int
	}{
		{map[string]string{"GITHUB_REF": "refs/pull/123/merge"}, 123},
		{map[string]string{"GITHUB_REF": "refs/pull/7/head"}, 7},
		{map[string]string{"GITHUB_REF": "refs/heads/main"}, 0},
		{map[string]string{"GITHUB_REF": "refs/pull/abc/merge"}, 0},
		{map[string]string{"GITHUB_REF": "refs/pull/0/merge"}, 0},
		{map[string]string{"GITHUB_REF": "refs/pull/9/other"}, 0},
		{map[string]string{"GITHUB_REF": "refs/heads/main", "CI_MERGE_REQUEST_IID": "5"}, 5},
		{map[string]string{"CI_MERGE_REQUEST_IID": "11"}, 11},
		{map[string]string{"BUILDKITE_PULL_REQUEST": "12"}, 12},
		{map[string]string{"BUILDKITE_PULL_REQUEST": "false"}, 0},
		{map[string]string{"CIRCLE_PR_NUMBER": "13"}, 13},
		{map[string]string{"CIRCLE_PULL_REQUEST": "https://github.com/acme/w/pull/14"}, 14},
		{map[string]string{"CIRCLE_PULL_REQUEST": "https://github.com/acme/w/tree/x"}, 0},
		{map[string]string{"SYSTEM_PULLREQUEST_PULLREQUESTNUMBER": "15"}, 15},
		{map[string]string{"CHANGE_ID": "16"}, 16},
		{map[string]string{"CHANGE_ID": "I8473b95934b5732ac55d26311a706c9c2bde9940"}, 0},
		{map[string]string{"DRONE_PULL_REQUEST": "17"}, 17},
		{map[string]string{"SEMAPHORE_GIT_PR_NUMBER": "18"}, 18},
		{map[string]string{"TRAVIS_PULL_REQUEST": "19"}, 19},
		{map[string]string{"TRAVIS_PULL_REQUEST": "false"}, 0},
		{map[string]string{"BITBUCKET_PR_ID": "20"}, 20},
		{map[string]string{"CI_PULL_REQUEST": "21"}, 21},
		{map[string]string{"CI_PULL_REQUEST": "https://github.com/acme/w/pull/22"}, 22},
		{map[string]string{"PULL_REQUEST_NUMBER": "23"}, 23},
		{map[string]string{"PULL_REQUEST_NUMBER": ""}, 0},
		{map[string]string{"PULL_REQUEST_NUMBER": "abc"}, 0},
		{map[string]string{"PULL_REQUEST_NUMBER": "0"}, 0},
		{map[string]string{"PULL_REQUEST_NUMBER": "-3"}, 0},
		{map[string]string{"PULL_REQUEST_NUMBER": "+3"}, 0},
		{map[string]string{"PULL_REQUEST_NUMBER": "3.5"}, 0},
		{map[string]string{"PULL_REQUEST_NUMBER": "99999999999999999999999"}, 0},
		{map[string]string{"TRAVIS_PULL_REQUEST": "false", "BITBUCKET_PR_ID": "24"}, 24},
		{map[string]string{"TRUNK_PR_NUMBER": "25", "GITHUB_REF": "refs/pull/123/merge"}, 25},
		{map[string]string{"TRUNK_PR_NUMBER": "false", "GITHUB_REF": "refs/pull/123/merge"}, 123},
		{nil, 0},
	}
	for _, tc := range tests {
		if got := (Meta{Envs: tc.env}).PullRequest(); got != tc.want {
			t.Errorf("PullRequest(%v) = %d, want %d", tc.env, got, tc.want)
		}
	}
}

// spaces reads n spaces without holding them.
type spaces struct{ n int64 }

func (s *spaces) Read(p []byte) (int, error) {
	if s.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), s.n)]
	for i := range p {
		p[i] = ' '
	}
	s.n -= int64(len(p))
	return len(p), nil
}

// countWriter counts what is written through it to w.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// buildBomb builds a bundle whose single JUnit entry decompresses to 2 GB
// of spaces, never holding more than 16 MiB of it. The tar stream is cut
// into zstd frames (a multi-frame stream is one stream to any decoder) so
// that the 16 MiB frame of spaces is compressed once and repeated:
// streaming 2 GB through the pure-Go encoder takes over 30 s under -race,
// for a bundle that is the same to the reader.
func buildBomb(t testing.TB) []byte {
	const declared, chunk = 2 << 30, 16 << 20
	var buf bytes.Buffer
	cw := &countWriter{w: &buf}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()

	// Frame 1: meta.json and the header of junit/0. The tar writer is
	// never closed, so it does not complain about the missing body.
	var head bytes.Buffer
	tw := tar.NewWriter(&head)
	for _, h := range []*tar.Header{
		{Name: "meta.json", Mode: 0o644, Size: int64(len(uploaderMeta)), Typeflag: tar.TypeReg},
		{Name: "junit/0", Mode: 0o644, Size: declared, Typeflag: tar.TypeReg},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Name == "meta.json" {
			io.WriteString(tw, uploaderMeta)
		}
	}
	cw.Write(zw.EncodeAll(head.Bytes(), nil))
	// The body: 2 GB of spaces, one 16 MiB frame repeated.
	body, err := io.ReadAll(&spaces{chunk})
	if err != nil {
		t.Fatal(err)
	}
	frame := zw.EncodeAll(body, nil)
	for range declared / chunk {
		cw.Write(frame)
	}
	// The end-of-archive marker: two zero blocks (2 GB needs no padding).
	cw.Write(zw.EncodeAll(make([]byte, 1024), nil))
	t.Logf("bomb: %d bytes compressed for %d declared", cw.n, int64(declared))
	return buf.Bytes()
}

func TestCompressionBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2 GB stream")
	}
	b := buildBomb(t)
	tests := []struct {
		name   string
		lim    Limits
		reason string
	}{
		// The default limits refuse the entry from its tar header.
		{"default limits", Limits{}, `entry "junit/0" is larger than 256 MiB`},
		// With the per-entry bound lifted, the total bound still refuses
		// from the declared size.
		{"entry limit lifted", Limits{MaxEntry: 4 << 30}, "larger than 256 MiB uncompressed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			var runs int
			_, err := Read(bytes.NewReader(b), tc.lim, Handler{Run: func(string, junit.Run) error { runs++; return nil }})
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Reason, tc.reason) {
				t.Fatalf("Read error = %v, want a refusal containing %q", err, tc.reason)
			}
			if runs != 0 {
				t.Errorf("h.Run called %d times", runs)
			}
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %v, allocated %d MB, reason %q", tc.name, elapsed, grew>>20, e.Reason)
			if grew > 200<<20 {
				t.Errorf("Read allocated %d MB, want < 200 MB", grew>>20)
			}
		})
	}
}

// TestTrailingBomb checks the decompressed-bytes bound itself: 1 GiB of
// spaces after the tar archive declares no size, so only counting what
// the decoder produces can stop it, and it must stop at the limit.
func TestTrailingBomb(t *testing.T) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	if err := tw.WriteHeader(&tar.Header{Name: "meta.json", Mode: 0o644, Size: int64(len(uploaderMeta)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tw, uploaderMeta)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	buf := zw.EncodeAll(tarBuf.Bytes(), nil)
	body, _ := io.ReadAll(&spaces{16 << 20})
	frame := zw.EncodeAll(body, nil)
	for range 64 {
		buf = append(buf, frame...)
	}

	tests := []struct {
		lim    Limits
		reason string
	}{
		// With the ratio bound lifted, the decompressed-bytes bound stops
		// it at the limit; by default the ratio stops it long before.
		{Limits{MaxUncompressed: 16 << 20, MaxRatio: 1 << 30}, "larger than 16 MiB uncompressed"},
		{Limits{MaxRatio: 1 << 30}, "larger than 256 MiB uncompressed"},
		{Limits{}, "expands more than 250 times its compressed size"},
	}
	for _, tc := range tests {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err := Read(bytes.NewReader(buf), tc.lim, Handler{})
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Reason, tc.reason) {
			t.Fatalf("Read error = %v, want %q", err, tc.reason)
		}
		grew := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s after %v, allocated %d MB", e.Reason, elapsed, grew>>20)
		if grew > 200<<20 {
			t.Errorf("Read allocated %d MB, want < 200 MB", grew>>20)
		}
	}
}

// benchJUnit generates a report of n cases across suites of 1,000, with
// one failure in 50 and one skip in 100, like a large real suite.
func benchJUnit(n, offset int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<testsuites>\n")
	for i := 0; i < n; i++ {
		if i%1000 == 0 {
			if i > 0 {
				b.WriteString("</testsuite>\n")
			}
			fmt.Fprintf(&b, `<testsuite name="pkg%d" tests="1000" time="12.5" timestamp="2026-01-02T03:04:05Z">`+"\n", (offset+i)/1000)
		}
		fmt.Fprintf(&b, `<testcase classname="com.acme.pkg%d.Test%d" name="test_case_%d" file="src/pkg%d/test_%d.py" time="0.%03d">`,
			(offset+i)/1000, (offset+i)/50, offset+i, (offset+i)/1000, (offset+i)/50, i%1000)
		switch {
		case i%50 == 7:
			fmt.Fprintf(&b, `<failure message="assert %d == %d" type="AssertionError">Traceback (most recent call last):
  File "src/test.py", line 12, in test_case
AssertionError</failure>`, i, i+1)
		case i%100 == 3:
			b.WriteString(`<skipped message="not on linux"/>`)
		}
		b.WriteString("</testcase>\n")
	}
	b.WriteString("</testsuite>\n</testsuites>\n")
	return b.Bytes()
}

func BenchmarkReadBundle(b *testing.B) {
	const cases, files = 100_000, 10
	in := WriteInput{Meta: testMeta(), Codeowners: []byte("* @acme\n")}
	for i := range files {
		in.JUnit = append(in.JUnit, File{OriginalPath: fmt.Sprintf("reports/%d.xml", i), Body: benchJUnit(cases/files, i*cases/files)})
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		b.Fatal(err)
	}
	b.Logf("bundle: %d bytes compressed", buf.Len())
	b.ReportAllocs()
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	var runs int
	for b.Loop() {
		sum, err := Read(bytes.NewReader(buf.Bytes()), Limits{}, Handler{Run: func(string, junit.Run) error { runs++; return nil }})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Runs != cases {
			b.Fatalf("runs = %d, want %d", sum.Runs, cases)
		}
	}
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "cases/s")
}

// bombJUnit is a JUnit report of about n bytes that is one XML comment:
// runs of `every` dashes-free filler, each followed by 8 bytes no earlier
// run predicts, so that it compresses about every/10 times (1,000× at
// every = 10,000) rather than the millions of times a run of one byte does.
func bombJUnit(n, every int) []byte {
	var b bytes.Buffer
	b.Grow(n + 64)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<testsuites><!--")
	filler := bytes.Repeat([]byte("x"), every)
	x := uint64(0x9e3779b97f4a7c15)
	for b.Len() < n {
		b.Write(filler)
		for range 8 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			b.WriteByte("abcdefghijklmnopqrstuvwxyz012345"[x%32])
		}
	}
	b.WriteString("--></testsuites>\n")
	return b.Bytes()
}

// bundleOf is a bundle holding meta.json and body as its one JUnit file,
// written as the uploader writes it.
func bundleOf(t testing.TB, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, WriteInput{Meta: testMeta(), JUnit: []File{{OriginalPath: "report.xml", Body: body}}}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCompressionRatio: a 23 KB bundle that expands 1,000× (one XML
// comment, the review's probe) is refused for its ratio after its first
// megabytes, not after expanding to 23 MiB; the most compressible real
// report we know, a suite of near-identical passing cases (70×), is
// accepted.
func TestCompressionRatio(t *testing.T) {
	t.Parallel()
	const raw = 23 << 20
	b := bundleOf(t, bombJUnit(raw, 14_000))
	ratio := float64(raw) / float64(len(b))
	if ratio < 800 || ratio > 1300 {
		t.Fatalf("bomb of %d bytes compresses to %d: ratio %.0f, want about 1,000", raw, len(b), ratio)
	}
	_, err := Read(bytes.NewReader(b), Limits{}, Handler{})
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Reason, "expands more than 250 times its compressed size") {
		t.Fatalf("%d-byte bomb: Read = %v, want the ratio refusal", len(b), err)
	}
	var out, in int64
	if _, err := fmt.Sscanf(e.Reason[strings.Index(e.Reason, "("):], "(%d bytes from %d)", &out, &in); err != nil {
		t.Fatalf("reason %q: %v", e.Reason, err)
	}
	if out > raw/2 || out > 250*max(in, 64<<10)+(1<<20) {
		t.Errorf("refused after decompressing %d of %d bytes (%d read): too late", out, raw, in)
	}
	t.Logf("%d-byte bomb (%.0f×): %s", len(b), ratio, e.Reason)

	var same strings.Builder
	same.WriteString("<testsuites><testsuite name=\"s\">\n")
	for i := range 80_000 {
		fmt.Fprintf(&same, "<testcase classname=\"com.acme.Foo\" name=\"test_%d\" time=\"0.001\"/>\n", i)
	}
	same.WriteString("</testsuite></testsuites>\n")
	b = bundleOf(t, []byte(same.String()))
	if same.Len() < RatioFloor+(1<<20) {
		t.Fatalf("near-identical report of %d bytes does not reach the ratio check", same.Len())
	}
	sum, err := Read(bytes.NewReader(b), Limits{}, Handler{})
	if err != nil || sum.Runs != 80_000 {
		t.Errorf("near-identical report (%.0f×): %d runs, %v", float64(same.Len())/float64(len(b)), sum.Runs, err)
	}
}

// BenchmarkBombRefusal reads a 23 KB bundle that expands 1,000× (bomb,
// refused for its ratio) beside a typical report's bundle of about the
// same compressed size (normal, accepted), and the bomb read without the
// ratio bound, as before it (bomb-unbounded: 23 MiB expanded and parsed).
// Compare the cpu-ns/op (ns/op counts other processes' time too).
func BenchmarkBombRefusal(b *testing.B) {
	bomb := bundleOf(b, bombJUnit(23<<20, 14_000))
	normal := bundleOf(b, benchJUnit(7_000, 0))
	b.Logf("bomb %d bytes compressed, normal %d", len(bomb), len(normal))
	for _, bc := range []struct {
		name   string
		bundle []byte
		lim    Limits
		refuse bool
	}{
		{"normal", normal, Limits{}, false},
		{"bomb", bomb, Limits{}, true},
		// Without the ratio bound (as before it), the bomb expands whole.
		{"bomb-unbounded", bomb, Limits{MaxRatio: 1 << 30}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				_, err := Read(bytes.NewReader(bc.bundle), bc.lim, Handler{})
				if (err != nil) != bc.refuse {
					b.Fatalf("Read = %v", err)
				}
			}
			// CPU time as well as ns/op: on a busy machine the wall
			// clock also counts the time other processes ran.
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
