package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
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
	return remoteRepo(addr)
}

// remoteRepo reads a remote's address in the forms git takes for a hosted
// repository: scp-like (git@github.com:acme/web.git) and URLs
// (https://github.com/acme/web, with or without .git; ssh://git@host/…).
func remoteRepo(addr string) (repository.Ref, error) {
	notHosted := fmt.Errorf("origin %q is not the address of a hosted repository", addr)
	var host, path string
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || u.Hostname() == "" {
			return repository.Ref{}, notHosted // file:///srv/git/web.git
		}
		host, path = u.Hostname(), u.Path
	} else if before, after, ok := strings.Cut(addr, ":"); ok && !strings.Contains(before, "/") {
		host, path = before[strings.LastIndex(before, "@")+1:], after
	} else {
		return repository.Ref{}, notHosted // a local path
	}
	ref, err := repository.Parse(host + "/" + strings.TrimSuffix(strings.Trim(path, "/"), ".git"))
	if err != nil {
		return repository.Ref{}, notHosted
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
