package repository

import (
	"testing"

	"github.com/mainguard/mainguard/shared/errs"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Ref{
		"github.com/acme/web":           {Host: "github.com", Owner: "acme", Name: "web"},
		"gitlab.example.com/a/b/c/proj": {Host: "gitlab.example.com", Owner: "a/b/c", Name: "proj"},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "github.com", "github.com/acme", "/acme/web", "github.com//web", "github.com/acme/"} {
		if _, err := Parse(bad); !errs.Is(err, errs.Invalid) {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
}

func TestKeyFoldsCaseOnlyWhereTheHostDoes(t *testing.T) {
	for r, want := range map[Ref]string{
		{Host: "GitHub.com", Owner: "Acme", Name: "Web"}:         "github.com/acme/web",
		{Host: "GitLab.example.com", Owner: "Acme", Name: "Web"}: "gitlab.example.com/Acme/Web",
	} {
		if got := r.Key(); got != want {
			t.Errorf("%v.Key() = %q, want %q", r, got, want)
		}
	}
}
