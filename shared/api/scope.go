package api

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
)

// Scope names what a token may do. Every route declares the one it needs
// (Routes): a token may call it when it holds that scope or
// admin.
type Scope string

// The scopes.
const (
	// ScopeUpload is the uploader's: the quarantine configuration, bundle
	// uploads and the labels of an upload's failures, nothing else, so
	// that a token kept in CI can do nothing but report results.
	ScopeUpload Scope = "upload"
	// ScopeRead reads: test health, queues, pull requests, metrics.
	ScopeRead Scope = "read"
	// ScopeQueue runs merge queues: create, change, pause and delete them,
	// submit, cancel and restart pull requests, set impacted targets.
	ScopeQueue Scope = "queue"
	// ScopeAdmin is every right, and the writes no other scope names
	// (linking a ticket, a quarantine override in the web app).
	ScopeAdmin Scope = "admin"
)

// Scopes lists the scopes in the order help and errors name them.
var Scopes = []Scope{ScopeUpload, ScopeRead, ScopeQueue, ScopeAdmin}

// ParseScopes reads scope names, each value one name or several
// comma-separated (--scope read,queue or --scope read --scope queue),
// into a sorted list without repeats.
func ParseScopes(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if !slices.Contains(Scopes, Scope(name)) {
				return nil, errs.E(errs.Invalid, "%s is not a scope: give upload, read, queue or admin", Quote(name))
			}
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Principal is who a request acts for: an organization, and what its
// token may do.
type Principal struct {
	Org string
	// Scopes are the token's; nil for a token made before scopes existed,
	// which keeps every right.
	Scopes []string
}

// Allows reports whether the principal holds scope s (admin holds every
// one; "" is needed by public endpoints, which everyone may call).
func (p Principal) Allows(s Scope) bool {
	if s == "" || p.Scopes == nil {
		return true
	}
	return slices.Contains(p.Scopes, string(s)) || slices.Contains(p.Scopes, string(ScopeAdmin))
}

// Require is nil when the principal holds scope s, else the 403 that says
// what is missing for what: "… needs the queue scope …".
func (p Principal) Require(s Scope, what string) error {
	if p.Allows(s) {
		return nil
	}
	return errs.E(errs.Forbidden, "%s needs the %s scope, which this token lacks (its scopes: %s); a token with it is made by mainguard token create --scope %s",
		what, s, strings.Join(p.Scopes, ", "), s)
}

// ScopesString spells a token's scopes for people: "read,queue", and
// "all (made before scopes)" for a token without any.
func ScopesString(scopes []string) string {
	if scopes == nil {
		return "all (made before scopes)"
	}
	return strings.Join(scopes, ",")
}

// describe names an endpoint in an error: "POST /v1/submitPullRequest".
func (ep Endpoint) describe() string {
	m := ep.Method
	if m == "" {
		m = "this request"
	}
	return fmt.Sprintf("%s /v1%s", m, ep.Path)
}
