package main

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/mainguard/mainguard/shared/repository"
)

// queueTarget is the queue a command works on: --repo and --branch when
// given, else the git checkout's origin remote and its default branch,
// origin/HEAD (which `git clone` sets). The API has no call that names a
// repository's default branch, so the checkout is the one place to learn
// it; a --repo that is not the checkout's therefore needs --branch.
// Anything it cannot tell is a usage error.
func queueTarget(e *env, repoArg, branch string) (repository.Ref, string, error) {
	var ref repository.Ref
	if repoArg != "" {
		r, err := parseRepo(repoArg)
		if err != nil {
			return ref, "", err
		}
		if branch != "" {
			return r, branch, nil
		}
		ref = r
	}
	origin, err := gitOrigin(e)
	switch {
	case err != nil && repoArg == "":
		return ref, "", usageError(fmt.Sprintf("cannot tell the repository: %v; give --repo HOST/OWNER/NAME", err))
	case err != nil:
		return ref, "", usageError(fmt.Sprintf("cannot tell %s's default branch (%v); give --branch", ref, err))
	case repoArg == "":
		ref = origin
	case ref.Key() != origin.Key():
		return ref, "", usageError(fmt.Sprintf("cannot tell %s's default branch: the checkout here is of %s; give --branch", ref, origin))
	}
	if branch == "" {
		head, err := git(e, "symbolic-ref", "--short", "refs/remotes/origin/HEAD")
		if err != nil {
			return ref, "", usageError(fmt.Sprintf("cannot tell %s's default branch: origin/HEAD is not set in this checkout (`git remote set-head origin --auto` sets it); give --branch", ref))
		}
		branch = strings.TrimPrefix(head, "origin/")
	}
	return ref, branch, nil
}

// gitOrigin is the repository of the checkout's origin remote.
func gitOrigin(e *env) (repository.Ref, error) {
	addr, err := git(e, "remote", "get-url", "origin")
	if err != nil {
		return repository.Ref{}, err
	}
	ref, err := repository.ParseRemote(addr)
	if err != nil {
		return repository.Ref{}, fmt.Errorf("origin %w", err)
	}
	return ref, nil
}

// git runs git in the command's folder and answers its output, trimmed;
// its error is git's own first line.
func git(e *env, args ...string) (string, error) {
	cmd := exec.CommandContext(e.ctx, "git", args...)
	cmd.Dir = e.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		return "", errors.New("git is not installed")
	}
	if err != nil {
		msg := strings.TrimSpace(firstLine(stderr.String()))
		for _, p := range []string{"fatal: ", "error: "} {
			msg = strings.TrimPrefix(msg, p)
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", errors.New(msg)
	}
	return strings.TrimSpace(string(out)), nil
}
