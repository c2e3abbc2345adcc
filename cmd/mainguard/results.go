package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/ciinfo"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
	"github.com/mainguard/mainguard/shared/testhealth/junit"
)

// What `upload` and `test` share: what the CI job tests (its environment,
// then git, then flags), the reports read and checked, the three calls of
// the public uploader's protocol, the failures' labels, and the summary.

// clientVersion is what mainguard upload tells the service it is.
const clientVersion = "mainguard-upload 1"

// maxFailuresShown bounds the failures listed (and labelled).
const maxFailuresShown = 20

// maxReportBytes bounds one report: it is read whole, and a bundle holds
// at most 256 MiB uncompressed.
const maxReportBytes = 64 << 20

// runFlags are the flags that say what a run tests, over what the CI's
// environment and git say.
type runFlags struct {
	repo, sha, branch, variant, codeowners *string
	pr                                     *int
}

func newRunFlags(f *flags) runFlags {
	return runFlags{
		repo:       f.String("repo", "", "the repository tested, HOST/OWNER/NAME (default: the CI's, or the checkout's origin)"),
		sha:        f.String("sha", "", "the commit tested (default: the CI's, or the checkout's HEAD)"),
		branch:     f.String("branch", "", "the branch tested (default: the CI's, or the checkout's)"),
		pr:         f.Int("pr", 0, "the pull request number, if the run is for one (default: the CI's)"),
		variant:    f.String("variant", "", "the variant, e.g. an OS, when the same tests run in several"),
		codeowners: f.String("codeowners", "", "a CODEOWNERS file to send, for the tests' owners"),
	}
}

// detect is what the run tests: the CI's environment, git in the
// checkout for what it leaves out, the flags over both.
func (r runFlags) detect(e *env) ciinfo.Info {
	info := ciinfo.Detect(ciinfo.Env{
		Getenv:   e.getenv,
		ReadFile: os.ReadFile,
		Git:      func(args ...string) (string, error) { return git(e, args...) },
	})
	for _, o := range []struct {
		v   string
		dst *ciinfo.Value
	}{{*r.repo, &info.RepoURL}, {*r.sha, &info.SHA}, {*r.branch, &info.Branch}} {
		if o.v != "" {
			*o.dst = ciinfo.Value{Value: o.v, From: "flag"}
		}
	}
	if *r.pr > 0 {
		info.PR = ciinfo.Value{Value: strconv.Itoa(*r.pr), From: "flag"}
	}
	return info
}

// tested is the repository, commit and branch a run needs, or a sentence
// saying which could not be told.
func tested(info ciinfo.Info) (repository.Ref, error) {
	var missing []string
	ref, err := info.Repo()
	if err != nil {
		missing = append(missing, "--repo")
	}
	if info.SHA.Value == "" {
		missing = append(missing, "--sha")
	}
	if info.Branch.Value == "" {
		missing = append(missing, "--branch")
	}
	if len(missing) > 0 {
		return ref, fmt.Errorf("cannot tell what is tested (not from the CI's environment, nor from git here): give %s", strings.Join(missing, " and "))
	}
	// A commit is named in full, as the API's pr.sha is: a short sha is
	// ambiguous, and test health compares commits by it (pass-on-retry).
	if err := api.LimitOf("pr.sha").Check("--sha", info.SHA.Value); err != nil {
		return ref, fmt.Errorf("%s (git rev-parse HEAD prints it)", errs.MessageOf(err))
	}
	return ref, nil
}

// report is a JUnit file read and checked.
type report struct {
	file   bundle.File
	sum    junit.Summary
	failed []failedTest
}

// skip is a file named and not sent, with why.
type skip struct{ path, why string }

// failedTest is the identity of a test that failed in the reports.
type failedTest struct{ Name, Parent, Classname, File, ID string }

// readReport reads one report and checks it with the service's own
// parser: a file that is not JUnit, truncated or too large is refused with
// the sentence saying so. name is how the bundle and the user know it.
func readReport(path, name string) (report, error) {
	st, err := os.Stat(path)
	if err != nil {
		return report{}, err
	}
	if st.Size() > maxReportBytes {
		return report{}, fmt.Errorf("it is %d MiB, more than the %d MiB a report may hold", st.Size()>>20, maxReportBytes>>20)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return report{}, err
	}
	r := report{file: bundle.File{OriginalPath: name, Body: body, ModTime: st.ModTime()}}
	seen := map[failedTest]bool{}
	sum, err := junit.Parse(bytes.NewReader(body), junit.Limits{}, func(run junit.Run) error {
		if t := (failedTest{run.Name, run.Parent, run.Classname, run.File, run.ID}); (run.Status == junit.Failed || run.Status == junit.Errored) && !seen[t] {
			seen[t] = true
			r.failed = append(r.failed, t)
		}
		return nil
	})
	if err != nil {
		return report{}, errors.New(strings.TrimPrefix(err.Error(), "junit: "))
	}
	r.sum = sum
	return r, nil
}

// maxGuardCases bounds the failed test cases the guard's count remembers to
// tell a pass on retry from a failure, as the service's ingest does.
const maxGuardCases = 200_000

// guardCounts counts the reports' test cases as the infrastructure guard
// does: a case that passed on a retry, in any report, did not fail. The
// reports were parsed once already; this second pass keeps the per-case
// state out of report.
func guardCounts(reports []report) (cases, failed int) {
	guard := testhealth.NewGuardCount(maxGuardCases)
	for _, r := range reports {
		// Parsed before without an error: the same bytes parse again.
		_, _ = junit.Parse(bytes.NewReader(r.file.Body), junit.Limits{}, func(run junit.Run) error {
			key := strings.Join([]string{run.Name, run.Parent, run.Classname, run.File, run.ID}, "\x00")
			guard.Add(key, run.Attempt, run.Status == junit.Passed, run.Status == junit.Failed || run.Status == junit.Errored)
			return nil
		})
	}
	return guard.Counts()
}

// totals sums the reports' runs and lists their failed tests, each once.
func totals(reports []report) (junit.Summary, []failedTest) {
	var total junit.Summary
	var out []failedTest
	seen := map[failedTest]bool{}
	for _, r := range reports {
		total.Runs, total.Passed, total.Skipped = total.Runs+r.sum.Runs, total.Passed+r.sum.Passed, total.Skipped+r.sum.Skipped
		total.Failed += r.sum.Failed + r.sum.Errored
		for _, t := range r.failed {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return total, out
}

// sent is what the service answered an upload.
type sent struct {
	uploadID string
	bytes    int
	// quarantineOff: the repository does not quarantine; quarantined are
	// the failed tests' ids that are (lower case).
	quarantineOff bool
	quarantined   map[string]bool
}

// send uploads the reports as the public uploader does (same meta.json
// fields) through the same three calls: createBundleUpload, the PUT of
// the bundle to the address it answers, and getQuarantineConfig for the
// failed tests.
func send(ctx context.Context, c *apiClient, org string, ref repository.Ref, info ciinfo.Info, variant string, codeowners []byte, reports []report, failed []failedTest, now time.Time) (sent, error) {
	in := bundle.WriteInput{Meta: bundle.Meta{
		Org: org, CLIVersion: clientVersion, Variant: variant, UploadTime: now,
		Repo: bundle.Repo{Host: ref.Host, Owner: ref.Owner, Name: ref.Name, HeadSHA: info.SHA.Value, HeadBranch: info.Branch.Value,
			URL: "https://" + ref.Host + "/" + ref.Owner + "/" + ref.Name},
		Envs: map[string]string{},
	}, Codeowners: codeowners}
	for k, v := range info.Envs {
		in.Meta.Envs[k] = v
	}
	if n := info.PRNumber(); n > 0 {
		// The public uploader's override: the service reads it first.
		in.Meta.Envs["TRUNK_PR_NUMBER"] = strconv.Itoa(n)
	}
	for _, r := range reports {
		in.JUnit = append(in.JUnit, r.file)
	}
	repoJSON := map[string]string{"host": ref.Host, "owner": ref.Owner, "name": ref.Name}
	var created struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	if err := c.post(ctx, "/metrics/createBundleUpload", map[string]any{
		"repo": repoJSON, "orgUrlSlug": org, "clientVersion": clientVersion, "remoteUrls": []string{},
	}, &created); err != nil {
		return sent{}, err
	}
	in.Meta.BundleUploadID = created.ID
	var buf bytes.Buffer
	if err := bundle.Write(&buf, in); err != nil {
		return sent{}, err
	}
	if err := c.put(ctx, created.URL, buf.Bytes()); err != nil {
		return sent{}, err
	}
	out := sent{uploadID: created.ID, bytes: buf.Len(), quarantined: map[string]bool{}}
	if len(failed) == 0 {
		return out, nil
	}
	var quarantine struct {
		IsDisabled bool     `json:"isDisabled"`
		TestIDs    []string `json:"testIds"`
	}
	ids := make([]map[string]string, len(failed))
	for i, fl := range failed {
		ids[i] = map[string]string{"name": fl.Name, "parentName": fl.Parent, "className": fl.Classname, "file": fl.File, "id": fl.ID, "variant": variant}
	}
	if err := c.post(ctx, "/metrics/getQuarantineConfig", map[string]any{
		"repo": repoJSON, "orgUrlSlug": org, "remoteUrls": []string{}, "testIdentifiers": ids,
	}, &quarantine); err != nil {
		return out, err
	}
	out.quarantineOff = quarantine.IsDisabled
	for _, id := range quarantine.TestIDs {
		out.quarantined[strings.ToLower(id)] = true
	}
	return out, nil
}

// labelled is a failed test's label, as label-failures answers it.
type labelled struct {
	TestID   string `json:"test_id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Label    string `json:"label"`
	Evidence string `json:"evidence"`
	HTMLURL  string `json:"html_url"`
}

// labels asks label-failures about the failed tests of the upload: their
// labels by id, and the upload's page.
func labels(ctx context.Context, c *apiClient, org string, ref repository.Ref, uploadID string, ids []string) (map[string]labelled, string, error) {
	var got struct {
		Upload struct {
			HTMLURL string `json:"html_url"`
		} `json:"upload"`
		Failures []labelled `json:"failures"`
	}
	err := c.post(ctx, "/flaky-tests/label-failures", map[string]any{
		"repo": map[string]string{"host": ref.Host, "owner": ref.Owner, "name": ref.Name}, "org_url_slug": org,
		"upload_id": uploadID, "test_ids": ids,
	}, &got)
	out := map[string]labelled{}
	for _, f := range got.Failures {
		out[strings.ToLower(f.TestID)] = f
	}
	return out, got.Upload.HTMLURL, err
}

// testID is the id the service gives a failed test.
func testID(org string, ref repository.Ref, variant string, fl failedTest) string {
	return testhealth.TestID(testhealth.Identity{
		Org: org, Repo: ref.String(), File: fl.File, Classname: fl.Classname, Parent: fl.Parent,
		Name: fl.Name, ExplicitID: fl.ID, Variant: variant,
	})
}

// printResults prints what an upload held and each failed test (at most
// maxFailuresShown) with its id, its label and evidence, and its page.
func printResults(w io.Writer, reports []report, sum junit.Summary, s sent, ids []string, failed []failedTest, labs map[string]labelled, uploadURL string) {
	fmt.Fprintf(w, "uploaded %d file(s) as upload %s (%d bytes): %d runs, %d passed, %d failed, %d skipped; %d failed test(s), %d quarantined\n",
		len(reports), s.uploadID, s.bytes, sum.Runs, sum.Passed, sum.Failed, sum.Skipped, len(failed), len(s.quarantined))
	if cases, failedCases := guardCounts(reports); (testhealth.Settings{InfraGuard: true}).Guarded(cases, failedCases) {
		fmt.Fprintf(w, "%d of %d test cases failed (a test that passed on a retry in the reports did not): more than %d%%, so the infrastructure guard (on unless the repository turned it off) sets this upload aside: its failures count in the rates but flag no test flaky or broken\n",
			failedCases, cases, int(testhealth.InfraGuardShare*100))
	}
	for i, fl := range failed {
		if i == maxFailuresShown {
			fmt.Fprintf(w, "  … and %d more failed test(s)\n", len(failed)-i)
			break
		}
		line := fmt.Sprintf("  failed %s %s", ids[i], printable(fl.Name))
		if s.quarantined[ids[i]] {
			line += " (quarantined: its failure does not fail the build)"
		}
		fmt.Fprintln(w, line)
		if l, ok := labs[ids[i]]; ok {
			fmt.Fprintf(w, "         %s: %s\n", printable(l.Label), printable(l.Evidence))
			if l.HTMLURL != "" {
				fmt.Fprintf(w, "         %s\n", printable(l.HTMLURL))
			}
		}
	}
	if uploadURL != "" {
		fmt.Fprintf(w, "  upload's page: %s\n", printable(uploadURL))
	}
}

// printable is s as a terminal should show it: as it is when it holds no
// control or non-printable character, else quoted with those escaped, so
// that a test's name can neither hide nor forge output.
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// exitCode decides the exit code of a run whose tests' command exited
// code: the command's own code, except 0 when it failed, the reports hold
// failed tests, nothing put them in doubt, and the service said every one
// of them is quarantined. why says which, for one line of output.
func exitCode(code int, failed []failedTest, ids []string, doubt string, s *sent) (int, string) {
	switch {
	case code == 0:
		return 0, ""
	case doubt != "":
		return code, doubt
	case len(failed) == 0:
		return code, "the reports hold no failed test (a build error, a crash?)"
	case s == nil:
		return code, "the service did not say which tests are quarantined"
	case s.quarantineOff:
		return code, "the repository does not quarantine"
	}
	for _, id := range ids {
		if !s.quarantined[id] {
			return code, ""
		}
	}
	return 0, fmt.Sprintf("every failed test is quarantined: exit 0 instead of %d", code)
}

// failedIDs are the ids of failed tests.
func failedIDs(org string, ref repository.Ref, variant string, failed []failedTest) []string {
	ids := make([]string, len(failed))
	for i, fl := range failed {
		ids[i] = testID(org, ref, variant, fl)
	}
	return ids
}

// repoRoot is the checkout's top folder, where --junit globs start; the
// command's folder outside a checkout.
func repoRoot(e *env) string {
	if top, err := git(e, "rev-parse", "--show-toplevel"); err == nil && top != "" {
		return top
	}
	if e.dir != "" {
		return e.dir
	}
	wd, _ := os.Getwd()
	return wd
}

// relTo is path relative to root when it is inside it.
func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}
