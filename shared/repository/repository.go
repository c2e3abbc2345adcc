// Package repository names a repository the way every part of the service
// does: {host, owner, name}, with the case rules of the contract's section 0
// (the host is case-insensitive everywhere; owner and name are too on
// github.com, and may not be on other hosts). Test health, the merge queue,
// the store and the HTTP surface all share this one type.
package repository

import (
	"fmt"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
)

// TestBranchPrefix starts the name of every test branch the merge queue
// builds ("trunk-merge/pr-{N}/{run id}"): CI runs on these, and test health
// keeps the failed tests of their uploads as evidence for the queue. It is
// here, among the names every part shares, so that test health knows it
// without importing the queue.
const TestBranchPrefix = "trunk-merge/"

// Ref names a repository as clients do: {host, owner, name}.
type Ref struct {
	Host  string `json:"host" dynamodbav:"host"`
	Owner string `json:"owner" dynamodbav:"owner"`
	Name  string `json:"name" dynamodbav:"name"`
}

// Key is the canonical form used in keys. The host is case-insensitive
// everywhere; on github.com owner and name are too (GitHub treats them so),
// while other hosts (GitLab, self-hosted) may be case-sensitive.
func (r Ref) Key() string {
	host := strings.ToLower(r.Host)
	owner, name := r.Owner, r.Name
	if host == "github.com" {
		owner, name = strings.ToLower(owner), strings.ToLower(name)
	}
	return host + "/" + owner + "/" + name
}

// String is host/owner/name as spelled.
func (r Ref) String() string { return r.Host + "/" + r.Owner + "/" + r.Name }

// HTMLURL is the repository's web address.
func (r Ref) HTMLURL() string { return fmt.Sprintf("https://%s/%s/%s", r.Host, r.Owner, r.Name) }

// Parse reads "host/owner/name": a host name (no scheme, no port), and
// an owner that may hold slashes (GitLab groups) except on github.com,
// where it is one segment; no segment is empty or holds spaces.
func Parse(s string) (Ref, error) {
	bad := errs.E(errs.Invalid, "repository must be HOST/OWNER/NAME, got %q", s)
	parts := strings.Split(s, "/")
	if len(parts) < 3 || strings.ContainsAny(s, " \t\n:?#@") {
		return Ref{}, bad
	}
	for _, p := range parts {
		if p == "" {
			return Ref{}, bad
		}
	}
	host := parts[0]
	if strings.EqualFold(host, "github.com") && len(parts) != 3 {
		return Ref{}, bad
	}
	return Ref{Host: host, Owner: strings.Join(parts[1:len(parts)-1], "/"), Name: parts[len(parts)-1]}, nil
}
