package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/mainguard/mainguard/shared/repository"
)

// queueCmdFlags are the flags every queue command shares: the API (--url,
// --token), the queue (--repo, --branch) and the output (--json).
type queueCmdFlags struct {
	f            *flags
	client       func() *apiClient
	repo, branch *string
	json         *bool
}

func newQueueFlags(f *flags, e *env) *queueCmdFlags {
	return &queueCmdFlags{
		f:      f,
		client: apiFlags(f, e),
		repo:   f.String("repo", "", "the repository, HOST/OWNER/NAME (default: the origin remote of the git checkout here)"),
		branch: f.String("branch", "", "the queue's target branch (default: the checkout's origin/HEAD, its remote's default branch)"),
		json:   f.Bool("json", false, "print the API's JSON answer instead of a table"),
	}
}

// queue is one merge queue, reached through the API.
type queue struct {
	e      *env
	api    *apiClient
	repo   repository.Ref
	branch string
	json   bool
}

// parse reads the command line (want positional arguments, as
// flags.parse counts them) and names the queue from the flags, or from the
// git checkout where they leave it out.
func (q *queueCmdFlags) parse(e *env, args []string, want int) (*queue, []string, error) {
	pos, err := q.f.parse(e, args, want)
	if err != nil {
		return nil, nil, err
	}
	ref, branch, err := queueTarget(e, *q.repo, *q.branch)
	if err != nil {
		return nil, nil, err
	}
	return &queue{e: e, api: q.client(), repo: ref, branch: branch, json: *q.json}, pos, nil
}

// String names the queue for people: github.com/acme/web main.
func (q *queue) String() string { return q.repo.String() + " " + q.branch }

// call posts a merge-queue request for this queue: the common fields
// (contract 3.1) and fields; it answers the API's JSON as it came.
func (q *queue) call(path string, fields map[string]any) ([]byte, error) {
	body := map[string]any{"repo": q.repo, "targetBranch": q.branch}
	maps.Copy(body, fields)
	return q.api.postRaw(q.e.ctx, path, body)
}

// get calls path and decodes its answer into out.
func (q *queue) get(path string, fields map[string]any, out any) error {
	data, err := q.call(path, fields)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// answer calls path: with --json it prints the answer and reports it
// printed; else it decodes the answer into out (nil: nothing to read) for
// the command to print.
func (q *queue) answer(path string, fields map[string]any, out any) (printed bool, err error) {
	data, err := q.call(path, fields)
	switch {
	case err != nil:
		return false, err
	case q.json:
		return true, q.printJSON(data)
	case out == nil:
		return false, nil
	}
	return false, json.Unmarshal(data, out)
}

// printJSON writes an API answer indented, otherwise as it came.
func (q *queue) printJSON(data []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, data, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := q.e.stdout.Write(b.Bytes())
	return err
}

// printAs writes v as JSON, for answers the command assembled from the
// API's own types (several pages, or a record without its PRs).
func (q *queue) printAs(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return q.printJSON(b)
}

// prArg reads a pull request number.
func prArg(cmd, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, usageError(fmt.Sprintf("%s: %q is not a pull request number", cmd, s))
	}
	return n, nil
}

// prNumber is the pr object of the pull-request endpoints.
func prNumber(n int) map[string]any { return map[string]any{"number": n} }

// line writes one line of human output.
func (q *queue) line(format string, a ...any) { fmt.Fprintf(q.e.stdout, format+"\n", a...) }
