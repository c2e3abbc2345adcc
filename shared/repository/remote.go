package repository

import (
	"fmt"
	"net/url"
	"strings"
)

// ParseRemote reads a git remote's address in the forms git takes for a
// hosted repository: scp-like (git@github.com:acme/web.git) and URLs
// (https://github.com/acme/web, with or without .git; ssh://git@host/…).
// Credentials in a URL (a CI's https://token@host/…) are dropped, never
// kept in the Ref.
func ParseRemote(addr string) (Ref, error) {
	notHosted := fmt.Errorf("%q is not the address of a hosted repository", addr)
	var host, path string
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || u.Hostname() == "" {
			return Ref{}, notHosted // file:///srv/git/web.git
		}
		host, path = u.Hostname(), u.Path
	} else if before, after, ok := strings.Cut(addr, ":"); ok && !strings.Contains(before, "/") {
		host, path = before[strings.LastIndex(before, "@")+1:], after
	} else {
		return Ref{}, notHosted // a local path
	}
	ref, err := Parse(host + "/" + strings.TrimSuffix(strings.Trim(path, "/"), ".git"))
	if err != nil {
		return Ref{}, notHosted
	}
	return ref, nil
}
