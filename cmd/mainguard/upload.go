package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
	"github.com/mainguard/mainguard/shared/testhealth/junit"
)

// clientVersion is what mainguard upload tells the service it is.
const clientVersion = "mainguard-upload 1"

// upload is `mainguard upload FILES...`: it bundles JUnit files as the
// public uploader does (same meta.json fields) and sends them through the
// same three calls: createBundleUpload, the PUT of the bundle to the
// address it answers, and getQuarantineConfig for the failed tests. It
// then prints what the upload held and, for each failed test, its id, its
// status and its page, read back with get-test-details.
func upload(e *env, args []string) error {
	f := newFlags(cmdOf("upload"))
	client := apiFlags(f, e)
	org := f.orgFlag(e)
	repoArg := f.String("repo", "", "the repository tested, HOST/OWNER/NAME")
	sha := f.String("sha", "", "the commit tested")
	branch := f.String("branch", "", "the branch tested")
	pr := f.Int("pr", 0, "the pull request number, if the run is for one")
	variant := f.String("variant", "", "the variant, e.g. an OS, when the same tests run in several")
	codeownersPath := f.String("codeowners", "", "a CODEOWNERS file to send, for the tests' owners")
	f.require("repo", "sha", "branch")
	files, err := f.parse(e, args, -1)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageError("upload needs at least one JUnit file")
	}
	ref, err := parseRepo(*repoArg)
	if err != nil {
		return err
	}
	in := bundle.WriteInput{Meta: bundle.Meta{
		Org: *org, CLIVersion: clientVersion, Variant: *variant, UploadTime: e.now(),
		Repo: bundle.Repo{Host: ref.Host, Owner: ref.Owner, Name: ref.Name, HeadSHA: *sha, HeadBranch: *branch,
			URL: "https://" + ref.Host + "/" + ref.Owner + "/" + ref.Name},
		Envs: map[string]string{},
	}}
	if *pr > 0 {
		// As GitHub Actions says it; the service reads the number back.
		in.Meta.Envs["GITHUB_REF"] = "refs/pull/" + strconv.Itoa(*pr) + "/merge"
	}
	for _, path := range files {
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		st, _ := os.Stat(path)
		in.JUnit = append(in.JUnit, bundle.File{OriginalPath: path, Body: body, ModTime: st.ModTime()})
	}
	if *codeownersPath != "" {
		if in.Codeowners, err = os.ReadFile(*codeownersPath); err != nil {
			return err
		}
	}
	sum, failed, guard, err := readReports(in.JUnit)
	if err != nil {
		return err
	}
	c := client()
	repoJSON := map[string]string{"host": ref.Host, "owner": ref.Owner, "name": ref.Name}

	var created struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	if err := c.post(e.ctx, "/metrics/createBundleUpload", map[string]any{
		"repo": repoJSON, "orgUrlSlug": *org, "clientVersion": clientVersion, "remoteUrls": []string{},
	}, &created); err != nil {
		return err
	}
	in.Meta.BundleUploadID = created.ID
	var buf bytes.Buffer
	if err := bundle.Write(&buf, in); err != nil {
		return err
	}
	if err := c.put(e.ctx, created.URL, buf.Bytes()); err != nil {
		return err
	}

	var quarantine struct {
		IsDisabled bool     `json:"isDisabled"`
		TestIDs    []string `json:"testIds"`
	}
	if len(failed) > 0 {
		ids := make([]map[string]string, len(failed))
		for i, fl := range failed {
			ids[i] = map[string]string{"name": fl.Name, "parentName": fl.Parent, "className": fl.Classname, "file": fl.File, "id": fl.ID, "variant": *variant}
		}
		if err := c.post(e.ctx, "/metrics/getQuarantineConfig", map[string]any{
			"repo": repoJSON, "orgUrlSlug": *org, "remoteUrls": []string{}, "testIdentifiers": ids,
		}, &quarantine); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "uploaded %d file(s) as upload %s (%d bytes): %d runs, %d passed, %d failed, %d skipped; %d failed test(s), %d quarantined\n",
		len(files), created.ID, buf.Len(), sum.Runs, sum.Passed, sum.Failed, sum.Skipped, len(failed), len(quarantine.TestIDs))
	if cases, failedCases := guard.Counts(); (testhealth.Settings{InfraGuard: true}).Guarded(cases, failedCases) {
		fmt.Fprintf(e.stdout, "%d of %d test cases failed (a test that passed on a retry in the reports did not): more than %d%%, so the infrastructure guard (on unless the repository turned it off) sets this upload aside: its failures count in the rates but flag no test flaky or broken\n",
			failedCases, cases, int(testhealth.InfraGuardShare*100))
	}
	quarantined := map[string]bool{}
	for _, id := range quarantine.TestIDs {
		quarantined[strings.ToLower(id)] = true
	}
	for i, fl := range failed {
		if i == maxFailuresShown {
			fmt.Fprintf(e.stdout, "  … and %d more failed test(s)\n", len(failed)-i)
			break
		}
		id := testhealth.TestID(testhealth.Identity{
			Org: *org, Repo: ref.String(), File: fl.File, Classname: fl.Classname, Parent: fl.Parent,
			Name: fl.Name, ExplicitID: fl.ID, Variant: *variant,
		})
		line := fmt.Sprintf("  failed %s %s", id, fl.Name)
		if quarantined[id] {
			line += " (quarantined: its failure does not fail the build)"
		}
		fmt.Fprintln(e.stdout, line)
		// The service ingests a bundle after the PUT; deployed, that is
		// asynchronous, so the test may not be readable yet.
		var details struct {
			Test struct {
				Status struct {
					Value  string `json:"value"`
					Reason string `json:"reason"`
				} `json:"status"`
				HTMLURL string `json:"html_url"`
			} `json:"test"`
		}
		if err := c.post(e.ctx, "/flaky-tests/get-test-details", map[string]any{
			"repo": repoJSON, "org_url_slug": *org, "test_id": id,
		}, &details); err == nil {
			fmt.Fprintf(e.stdout, "         %s: %s\n         %s\n", details.Test.Status.Value, details.Test.Status.Reason, details.Test.HTMLURL)
		}
	}
	return nil
}

// maxFailuresShown bounds the failures upload lists (and reads back).
const maxFailuresShown = 20

// failedTest is the identity of a test that failed in the reports.
type failedTest struct{ Name, Parent, Classname, File, ID string }

// readReports counts the runs of the reports with the service's own
// parser, lists the identities of the tests that failed, each once, and
// counts the test cases as the infrastructure guard does.
func readReports(files []bundle.File) (junit.Summary, []failedTest, *testhealth.GuardCount, error) {
	var total junit.Summary
	var out []failedTest
	seen := map[failedTest]bool{}
	guard := testhealth.NewGuardCount(maxGuardCases)
	for _, file := range files {
		sum, err := junit.Parse(bytes.NewReader(file.Body), junit.Limits{}, func(r junit.Run) error {
			t := failedTest{r.Name, r.Parent, r.Classname, r.File, r.ID}
			failed := r.Status == junit.Failed || r.Status == junit.Errored
			guard.Add(strings.Join([]string{t.Name, t.Parent, t.Classname, t.File, t.ID}, "\x00"), r.Attempt, r.Status == junit.Passed, failed)
			if failed && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
			return nil
		})
		if err != nil {
			return total, nil, nil, fmt.Errorf("%s: %w", file.OriginalPath, err)
		}
		total.Runs, total.Passed, total.Skipped = total.Runs+sum.Runs, total.Passed+sum.Passed, total.Skipped+sum.Skipped
		total.Failed += sum.Failed + sum.Errored
	}
	return total, out, guard, nil
}

// maxGuardCases bounds the failed test cases upload remembers to tell a
// pass on retry from a failure, as the service's ingest does.
const maxGuardCases = 200_000

// apiClient calls the service.
type apiClient struct {
	base, token string
	http        *http.Client
}

// apiFlags are --url and --token, for the commands that call the API;
// the token is required. The client is ready once the flags are parsed.
func apiFlags(f *flags, e *env) func() *apiClient {
	token := f.String("token", e.getenv("MAINGUARD_TOKEN"), "API token (default $MAINGUARD_TOKEN)")
	base := f.String("url", or(e.getenv("MAINGUARD_URL"), "http://127.0.0.1:8080"), "the service's address; /v1 is added when missing (default $MAINGUARD_URL or the local server)")
	f.require("token")
	return func() *apiClient {
		b := strings.TrimRight(*base, "/")
		if !strings.HasSuffix(b, "/v1") {
			b += "/v1"
		}
		return &apiClient{base: b, token: *token, http: &http.Client{Timeout: 2 * time.Minute}}
	}
}

// do sends req; when nothing answers, it says how to start the server.
func (c *apiClient) do(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil && unreachable(err) {
		return nil, fmt.Errorf("nothing answers at %s: start the local server with `make run` (or `mainguard serve`), or give the service's address with --url or MAINGUARD_URL", c.base)
	}
	return resp, err
}

func (c *apiClient) post(ctx context.Context, path string, body, out any) error {
	data, err := c.postRaw(ctx, path, body)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// postRaw sends body as JSON and returns the answer as it came. A refusal
// is an error holding the API's one sentence on one line.
func (c *apiClient) postRaw(ctx context.Context, path string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-token", c.token)
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", path, resp.StatusCode, strings.Join(strings.Fields(string(data)), " "))
	}
	return data, nil
}

func (c *apiClient) put(ctx context.Context, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("PUT bundle: %d %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return nil
}
