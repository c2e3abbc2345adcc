package testhealth

import "testing"

// The vectors of contract 2.7, taken from the public uploader's tests.
func TestTestIDVectors(t *testing.T) {
	example := Identity{Org: "example_org", Repo: "example_repo", File: "src/lib.rs", Classname: "ExampleClass", Parent: "parent/fact/path", Name: "example_name"}
	withVariant := example
	withVariant.Variant = "unix"
	explicit := withVariant
	explicit.ExplicitID = "trunk:12345"
	cases := []struct {
		name string
		in   Identity
		want string
	}{
		{"vitest", Identity{
			Org: "trunk-staging-org", Repo: "github.com/trunk-io/trunk",
			Classname: "modules/settings/repoName/__tests__/ticketing-integration.vitest.tsx",
			Parent:    "modules/settings/repoName/__tests__/ticketing-integration.vitest.tsx",
			Name:      "Ticketing Integration > should allow you to select a ticketing system",
		}, "3f507aef-e834-523b-a8ad-edaba6b137be"},
		{"no variant", example, "06cb6db5-f807-5198-b072-af67a0636f8a"},
		{"variant", withVariant, "1bf61475-b542-5faf-aa85-e66a691257a3"},
		{"explicit trunk id with variant", explicit, "4392f63c-8dc9-5cec-bbdc-e7b90c2e5a6b"},
	}
	for _, c := range cases {
		if got := TestID(c.in); got != c.want {
			t.Errorf("%s: TestID = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestTestIDExplicitV5IsKept(t *testing.T) {
	const id = "06cb6db5-f807-5198-b072-af67a0636f8a"
	in := Identity{Org: "o", Repo: "github.com/a/b", Name: "n", ExplicitID: id}
	if got := TestID(in); got != id {
		t.Errorf("explicit v5 id: got %s", got)
	}
	in.Variant = "linux"
	if got := TestID(in); got == id || got != v5(id, "linux").String() {
		t.Errorf("explicit v5 id with variant: got %s", got)
	}
	// A non-v5 explicit id does not replace the computed one.
	in = Identity{Org: "o", Repo: "github.com/a/b", Name: "n", ExplicitID: "not-a-uuid"}
	if got := TestID(in); got != TestID(Identity{Org: "o", Repo: "github.com/a/b", Name: "n"}) {
		t.Errorf("non-v5 explicit id changed the id: %s", got)
	}
}
