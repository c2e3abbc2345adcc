package api_test

import (
	"slices"
	"testing"

	"github.com/mainguard/mainguard/shared/api"
)

// TestEveryRouteNamesItsScope: a route that takes a token says which scope
// the token needs, one of api.Scopes, so a new endpoint cannot be
// reachable by every token by omission; a public one names none. The
// uploader's endpoints need the upload scope.
func TestEveryRouteNamesItsScope(t *testing.T) {
	var upload []string
	for _, r := range api.Routes {
		switch {
		case r.Public && r.Scope != "":
			t.Errorf("%s is public (no token), yet names the scope %q", r.Name, r.Scope)
		case !r.Public && !slices.Contains(api.Scopes, r.Scope):
			t.Errorf("%s takes a token but names no scope (%q): give it Scope: api.ScopeRead, ScopeQueue, ScopeUpload or ScopeAdmin", r.Name, r.Scope)
		case r.Scope == api.ScopeUpload:
			upload = append(upload, r.Name)
		}
	}
	for _, name := range []string{"get-quarantine-config", "create-bundle-upload"} {
		if !slices.Contains(upload, name) {
			t.Errorf("%s is the uploader's: it needs the upload scope", name)
		}
	}
}
