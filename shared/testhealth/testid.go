package testhealth

import (
	"strings"

	"github.com/google/uuid"
)

// Identity is what names a test case, as the public uploader reads it.
type Identity struct {
	Org        string // organization slug
	Repo       string // host/owner/name
	File       string
	Classname  string
	Parent     string
	Name       string
	ExplicitID string // a testcase id attribute, if any
	Variant    string
}

// v5 is the UUIDv5 in the URL namespace of parts joined with '#', the
// uploader's construction (analytics-cli context/src/meta/id.rs).
func v5(parts ...string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(strings.Join(parts, "#")))
}

// TestID computes the stable id of a test case exactly as the public
// uploader does, so ids agree across tools (contract 2.7).
func TestID(id Identity) string {
	if ex := id.ExplicitID; ex != "" {
		if strings.HasPrefix(ex, "trunk:") {
			if id.Variant == "" {
				return v5(id.Org, id.Repo, ex).String()
			}
			return v5(id.Org, id.Repo, ex, id.Variant).String()
		}
		if u, err := uuid.Parse(ex); err == nil && u.Version() == 5 {
			if id.Variant == "" {
				return u.String()
			}
			return v5(u.String(), id.Variant).String()
		}
	}
	parts := []string{id.Org, id.Repo, id.File, id.Classname, id.Parent, id.Name, "JUNIT_TESTCASE"}
	if id.Variant == "" {
		return v5(parts...).String()
	}
	base := v5(append(parts, id.Variant)...)
	return v5(base.String(), id.Variant).String()
}
