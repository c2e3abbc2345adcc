package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
	"github.com/mainguard/mainguard/shared/testhealth/junit"
)

// clientVersion is what mainguard upload tells the service it is.
const clientVersion = "mainguard-upload 1"

// upload is `mainguard upload`: it bundles JUnit files as the public
// uploader does (same meta.json fields) and sends them through the same
// three calls: createBundleUpload, the PUT of the bundle to the address it
// answers, and getQuarantineConfig for the failed tests.
func upload(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string, now func() time.Time) error {
	fs := flag.NewFlagSet("upload", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	token := fs.String("token", getenv("MAINGUARD_TOKEN"), "API token (default $MAINGUARD_TOKEN)")
	org := fs.String("org", "", "organization slug")
	repoArg := fs.String("repo", "", "HOST/OWNER/NAME")
	sha := fs.String("sha", "", "commit tested")
	branch := fs.String("branch", "", "branch tested")
	pr := fs.Int("pr", 0, "pull request number, if the run is for one")
	variant := fs.String("variant", "", "variant, e.g. an OS")
	codeownersPath := fs.String("codeowners", "", "CODEOWNERS file to send")
	base := fs.String("url", or(getenv("MAINGUARD_URL"), "http://127.0.0.1:8080/v1"), "API base address, ending in /v1")
	var files []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return usageError("upload: " + err.Error())
		}
		rest = fs.Args()
		if len(rest) > 0 {
			files = append(files, rest[0])
			rest = rest[1:]
		}
	}
	switch {
	case *token == "":
		return usageError("upload needs --token (or $MAINGUARD_TOKEN)")
	case *org == "" || *repoArg == "" || *sha == "" || *branch == "":
		return usageError("upload needs --org, --repo, --sha and --branch")
	case len(files) == 0:
		return usageError("upload needs at least one JUnit file")
	}
	ref, err := store.ParseRepo(*repoArg)
	if err != nil {
		return usageError(err.Error())
	}
	in := bundle.WriteInput{Meta: bundle.Meta{
		Org: *org, CLIVersion: clientVersion, Variant: *variant, UploadTime: now(),
		Repo: bundle.Repo{Host: ref.Host, Owner: ref.Owner, Name: ref.Name, HeadSHA: *sha, HeadBranch: *branch,
			URL: "https://" + ref.Host + "/" + ref.Owner + "/" + ref.Name},
		Envs: map[string]string{},
	}}
	if *pr > 0 {
		// As GitHub Actions says it; the service reads the number back.
		in.Meta.Envs["GITHUB_REF"] = "refs/pull/" + strconv.Itoa(*pr) + "/merge"
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		st, _ := os.Stat(f)
		in.JUnit = append(in.JUnit, bundle.File{OriginalPath: f, Body: body, ModTime: st.ModTime()})
	}
	if *codeownersPath != "" {
		if in.Codeowners, err = os.ReadFile(*codeownersPath); err != nil {
			return err
		}
	}
	c := &apiClient{base: strings.TrimRight(*base, "/"), token: *token, http: &http.Client{Timeout: 2 * time.Minute}}
	repoJSON := map[string]string{"host": ref.Host, "owner": ref.Owner, "name": ref.Name}

	var created struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	if err := c.post(ctx, "/metrics/createBundleUpload", map[string]any{
		"repo": repoJSON, "orgUrlSlug": *org, "clientVersion": clientVersion, "remoteUrls": []string{},
	}, &created); err != nil {
		return err
	}
	in.Meta.BundleUploadID = created.ID
	var buf bytes.Buffer
	if err := bundle.Write(&buf, in); err != nil {
		return err
	}
	if err := c.put(ctx, created.URL, buf.Bytes()); err != nil {
		return err
	}

	failed, err := failedIdentities(in.JUnit)
	if err != nil {
		return err
	}
	var quarantine struct {
		IsDisabled bool     `json:"isDisabled"`
		TestIDs    []string `json:"testIds"`
	}
	if len(failed) > 0 {
		for i := range failed {
			failed[i]["variant"] = *variant
		}
		if err := c.post(ctx, "/metrics/getQuarantineConfig", map[string]any{
			"repo": repoJSON, "orgUrlSlug": *org, "remoteUrls": []string{}, "testIdentifiers": failed,
		}, &quarantine); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "uploaded %d file(s) as upload %s (%d bytes); %d failed test(s), %d quarantined\n",
		len(files), created.ID, buf.Len(), len(failed), len(quarantine.TestIDs))
	return nil
}

// failedIdentities lists the identities of the failed test cases of the
// reports, for getQuarantineConfig.
func failedIdentities(files []bundle.File) ([]map[string]string, error) {
	var out []map[string]string
	seen := map[string]bool{}
	for _, f := range files {
		_, err := parseRuns(f.Body, func(name, parent, classname, file, id string, failed bool) {
			k := strings.Join([]string{name, parent, classname, file, id}, "\x00")
			if failed && !seen[k] {
				seen[k] = true
				out = append(out, map[string]string{"name": name, "parentName": parent, "className": classname, "file": file, "id": id})
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.OriginalPath, err)
		}
	}
	return out, nil
}

// apiClient calls the service.
type apiClient struct {
	base, token string
	http        *http.Client
}

func (c *apiClient) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-token", c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return json.Unmarshal(data, out)
}

func (c *apiClient) put(ctx context.Context, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := c.http.Do(req)
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

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// parseRuns reads a report with the service's own parser and reports each
// run's identity and whether it failed.
func parseRuns(body []byte, fn func(name, parent, classname, file, id string, failed bool)) (junit.Summary, error) {
	return junit.Parse(bytes.NewReader(body), junit.Limits{}, func(r junit.Run) error {
		fn(r.Name, r.Parent, r.Classname, r.File, r.ID, r.Status == junit.Failed || r.Status == junit.Errored)
		return nil
	})
}
