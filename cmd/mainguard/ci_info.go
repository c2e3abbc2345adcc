package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/mainguard/mainguard/shared/ciinfo"
)

// ciInfo is `mainguard ci-info`: what `test` and `upload` would send as
// the run's repository, commit, branch, pull request, target branch, job
// and attempt, each with the variable (or git, or flag) it came from.
func ciInfo(e *env, args []string) error {
	f := newFlags(cmdOf("ci-info"))
	run := newRunFlags(f)
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	info := run.detect(e)
	tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
	ci := info.CI
	if ci == "" {
		ci = "none recognised (GitHub Actions, GitLab CI, Buildkite, CircleCI, Jenkins, Azure Pipelines, Bitbucket Pipelines)"
	}
	fmt.Fprintf(tw, "CI\t%s\t\n", printable(ci))
	repo := info.RepoURL
	if ref, err := info.Repo(); err == nil {
		repo.Value = ref.String()
	}
	for _, row := range []struct {
		name string
		v    ciinfo.Value
	}{
		{"repository", repo}, {"commit", info.SHA}, {"branch", info.Branch}, {"pull request", info.PR},
		{"target branch", info.Base}, {"job", info.JobURL}, {"attempt", info.Attempt},
	} {
		v, from := row.v.Value, "from "+row.v.From
		if v == "" {
			v, from = "-", "not known"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row.name, printable(v), from)
	}
	return tw.Flush()
}
