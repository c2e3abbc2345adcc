package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// upload is `mainguard upload FILES...`: it bundles JUnit files as the
// public uploader does and sends them through the same three calls
// (results.go), then prints what the upload held and, for each failed
// test, its id, its label ("was this failure mine?") and its page. What
// is tested comes from the CI's environment, then git, then the flags.
//
// With --test-process-exit-code N (the public uploader's flag, for CI that
// runs the tests in a step of its own) it exits as `mainguard test` does:
// N, or 0 when N is not 0 and every failed test is quarantined; whatever
// goes wrong is one warning and exit N. Without it, it exits 0 once the
// upload is done, and a report that is no JUnit is an error.
func upload(e *env, args []string) error {
	f := newFlags(cmdOf("upload"))
	client := apiFlags(f, e)
	org := f.orgFlag(e)
	run := newRunFlags(f)
	exitWith := f.Int("test-process-exit-code", 0, "the exit code of the tests' command: exit with it, or 0 when it failed and every failed test is quarantined")
	files, err := f.parse(e, args, -1)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageError("upload needs at least one JUnit file")
	}
	if !f.isSet("test-process-exit-code") {
		return uploadOnly(e, client(), *org, run, files)
	}
	code := *exitWith
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	warn := func(what string, err error) error {
		fmt.Fprintf(e.stderr, "mainguard: warning: %s: %v; exit %d, the tests' own code\n", what, err, code)
		return exitError(code)
	}
	var reports []report
	var doubt string
	for _, p := range files {
		r, err := readReport(p, p)
		if err != nil {
			fmt.Fprintf(e.stderr, "mainguard: skipped %s: %s\n", printable(p), printable(err.Error()))
			doubt = "a report was skipped"
			continue
		}
		reports = append(reports, r)
	}
	if len(reports) == 0 {
		return warn("nothing uploaded", errors.New("no JUnit report to upload"))
	}
	return uploadAndExit(ctx, e, client(), *org, run, reports, doubt, code, warn)
}

// uploadOnly uploads the files and prints the failures: any failure is
// the command's.
func uploadOnly(e *env, c *apiClient, org string, run runFlags, files []string) error {
	info := run.detect(e)
	ref, err := tested(info)
	if err != nil {
		return usageError("upload " + err.Error())
	}
	var reports []report
	for _, p := range files {
		r, err := readReport(p, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		reports = append(reports, r)
	}
	var owners []byte
	if *run.codeowners != "" {
		if owners, err = os.ReadFile(*run.codeowners); err != nil {
			return err
		}
	}
	c.tries = 3
	sum, failed := totals(reports)
	ids := failedIDs(org, ref, *run.variant, failed)
	s, err := send(e.ctx, c, org, ref, info, *run.variant, owners, reports, failed, e.now())
	if err != nil {
		return err
	}
	// Deployed, the bundle is ingested after the PUT: the labels are what
	// test health knew then.
	labs, page, _ := labels(e.ctx, c, org, ref, s.uploadID, ids[:min(len(ids), maxFailuresShown)])
	printResults(e.stdout, reports, sum, s, ids, failed, labs, page)
	return nil
}

// apiClient calls the service.
type apiClient struct {
	base, token string
	http        *http.Client
	// tries is how often a call is made when the service does not answer
	// or answers 5xx or 429 (1 when zero); waits double from a second.
	tries int
}

// apiError is the service's refusal: its status and its one sentence.
type apiError struct {
	path   string
	status int
	msg    string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s: %d %s", e.path, e.status, e.msg) }

// retryable reports whether a call that failed with err may succeed if
// made again: no answer (a timeout, a refused connection), 5xx or 429.
func retryable(err error) bool {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status >= 500 || ae.status == http.StatusTooManyRequests
	}
	return err != nil && !errors.Is(err, context.Canceled)
}

// retrying calls try up to c.tries times while it fails retryably, waiting
// 1 s, then 2 s, between tries, never past ctx's deadline.
func (c *apiClient) retrying(ctx context.Context, try func() error) error {
	wait := time.Second
	for n := 1; ; n++ {
		err := try()
		if err == nil || n >= max(c.tries, 1) || !retryable(err) {
			return err
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// apiFlags are --url and --token, for the commands that call the API;
// the token is required. The client is ready once the flags are parsed.
func apiFlags(f *flags, e *env) func() *apiClient {
	c := apiClientFlags(f, e)
	f.require("token")
	return c
}

// apiClientFlags are --url and --token, the token not required (`test`
// runs the tests without one, and says so after).
func apiClientFlags(f *flags, e *env) func() *apiClient {
	token := f.String("token", e.getenv("MAINGUARD_TOKEN"), "API token (default $MAINGUARD_TOKEN)")
	base := f.String("url", or(e.getenv("MAINGUARD_URL"), "http://127.0.0.1:8080"), "the service's address; /v1 is added when missing (default $MAINGUARD_URL or the local server)")
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
// is an *apiError holding the API's one sentence on one line.
func (c *apiClient) postRaw(ctx context.Context, path string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var data []byte
	err = c.retrying(ctx, func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-token", c.token)
		resp, err := c.do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, err = io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return &apiError{path, resp.StatusCode, strings.Join(strings.Fields(string(data)), " ")}
		}
		return nil
	})
	return data, err
}

// put sends a bundle to its signed address (again, when retrying: the
// service ingests an upload once, whatever how often it lands).
func (c *apiClient) put(ctx context.Context, url string, body []byte) error {
	return c.retrying(ctx, func() error {
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
			return &apiError{"PUT bundle", resp.StatusCode, strings.TrimSpace(string(data))}
		}
		return nil
	})
}
