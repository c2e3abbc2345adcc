package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// seedTests makes the organization acme with github.com/acme/web, its
// quarantine on, holding a flaky test and a broken one overridden to be
// always quarantined; it returns the flaky one's id.
func seedTests(t *testing.T, e map[string]string, dataDir ...string) string {
	t.Helper()
	args := func(a ...string) []string { return append(a, dataDir...) }
	if out, errOut, code := mg(t, e, args("org", "create", "--slug", "acme")...); code != 0 {
		t.Fatalf("org create: %s %s", out, errOut)
	}
	if out, errOut, code := mg(t, e, args("repo", "set", "github.com/acme/web", "--org", "acme", "--quarantine", "on", "--auto-quarantine", "off")...); code != 0 {
		t.Fatalf("repo set: %s %s", out, errOut)
	}
	ref := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	now := time.Now()
	var flaky string
	for _, c := range []struct{ name, status, override string }{
		{"test_login", testhealth.Flaky, ""},
		{"test_logout", testhealth.Broken, testhealth.AlwaysQuarantine},
	} {
		tc := testhealth.TestCase{
			Org: "acme", Repo: ref, Name: c.name, FirstSeen: now, QuarantineOverride: c.override,
			ID:     testhealth.TestID(testhealth.Identity{Org: "acme", Repo: ref.Key(), Name: c.name}),
			Status: testhealth.TestStatus{Value: c.status, Reason: "seeded", Timestamp: now},
		}
		if err := tableOf(t, e).PutTestCase(context.Background(), tc); err != nil {
			t.Fatal(err)
		}
		if c.status == testhealth.Flaky {
			flaky = tc.ID
		}
	}
	return flaky
}

// TestWrongOrganizationIsNamed: a command given an organization that does
// not exist says so, not that the repository, the test or the endpoint
// is not found, nor an empty list.
func TestWrongOrganizationIsNamed(t *testing.T) {
	t.Parallel()
	e := localEnv(t, nil)
	id := seedTests(t, e)
	for _, args := range [][]string{
		{"test", "list", "github.com/acme/web"},
		{"test", "show", "github.com/acme/web", id},
		{"test", "quarantine", "github.com/acme/web", id, "--always"},
		{"repo", "set", "github.com/acme/web", "--quarantine", "on"},
		{"token", "list"},
		{"token", "revoke", "--token", "tok_0123456789abcdef"},
		{"uploads", "list"},
		{"webhook", "add", "--url", "https://hooks.example/x"},
		{"webhook", "list"},
		{"webhook", "remove", "--endpoint", "ep_0123456789abcdef"},
		{"webhook", "rotate-secret", "--endpoint", "ep_0123456789abcdef"},
		{"webhook", "deliveries", "--endpoint", "ep_0123456789abcdef"},
		{"webhook", "replay", "--event", "msg_0123456789abcdef0123456789abcdef"},
	} {
		out, errOut, code := mg(t, e, append(args, "--org", "acmee")...)
		if code != 1 || !strings.Contains(errOut, `organization "acmee" not found`) || strings.Contains(errOut, "repository") {
			t.Errorf("%s --org acmee: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
	// The right organization still works.
	if out, errOut, code := mg(t, e, "test", "show", "github.com/acme/web", id, "--org", "acme"); code != 0 || !strings.Contains(out, "test_login") {
		t.Errorf("test show --org acme: %d %q %q", code, out, errOut)
	}
}

// TestTestListTable: `test list` prints a header over its columns, each
// cell filled (quarantined says yes or no), and --ids the ids alone.
func TestTestListTable(t *testing.T) {
	t.Parallel()
	e := localEnv(t, nil)
	id := seedTests(t, e)
	out, errOut, code := mg(t, e, "test", "list", "github.com/acme/web", "--org", "acme")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 || !regexp.MustCompile(`^ID +STATUS +QUARANTINED +NAME +REASON$`).MatchString(lines[0]) {
		t.Fatalf("test list: exit %d\n%s%s", code, out, errOut)
	}
	row := regexp.MustCompile(`^([0-9a-f-]{36}) +(flaky|broken|healthy) +(yes|no) +(test_log(?:in|out)) +\S.*$`)
	quarantined := map[string]string{}
	for _, l := range lines[1:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("row %q: a cell is empty or wrong\n%s", l, out)
		}
		quarantined[m[4]] = m[3]
	}
	if quarantined["test_login"] != "no" || quarantined["test_logout"] != "yes" {
		t.Errorf("quarantined column: %v\n%s", quarantined, out)
	}
	if out, _, _ := mg(t, e, "test", "list", "github.com/acme/web", "--org", "acme", "--status", "flaky", "--ids"); out != id+"\n" {
		t.Errorf("--ids: %q, want %s", out, id)
	}
}

// TestTestShowLinksTheDeployment: `test show` prints the page of the
// deployment whose table it reads: PUBLIC_APP_URL, or the local server's
// own address (which serve writes beside its DynamoDB's); never a
// default of ours, and, when nothing says, the page's path with how to
// get a full link.
func TestTestShowLinksTheDeployment(t *testing.T) {
	t.Parallel()
	_, table := storetest.NewTable(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, endpointFile), []byte(storetest.Endpoint()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, appURLFile), []byte("http://127.0.0.1:18080\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	local := map[string]string{"TABLE_NAME": table, "MAINGUARD_DATA_DIR": dir}
	direct := map[string]string{"TABLE_NAME": table, "DYNAMODB_ENDPOINT": storetest.Endpoint()}
	id := seedTests(t, direct)
	path := "/acme/flaky-tests/test/" + id + "?repo=acme%2Fweb"
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"the local server's", local, "  page         http://127.0.0.1:18080" + path + "\n"},
		{"PUBLIC_APP_URL over the local server's", map[string]string{"TABLE_NAME": table, "MAINGUARD_DATA_DIR": dir, "PUBLIC_APP_URL": "https://mg.acme.example"},
			"  page         https://mg.acme.example" + path + "\n"},
		{"PUBLIC_APP_URL", map[string]string{"TABLE_NAME": table, "DYNAMODB_ENDPOINT": storetest.Endpoint(), "PUBLIC_APP_URL": "https://mg.acme.example/"},
			"  page         https://mg.acme.example" + path + "\n"},
		{"unknown", direct, "  page         " + path + " on the deployment's web app (set PUBLIC_APP_URL to its address for a full link)\n"},
	} {
		out, errOut, code := mg(t, c.env, "test", "show", "github.com/acme/web", id, "--org", "acme")
		if code != 0 || !strings.Contains(out, c.want) || strings.Contains(out, "mainguard.dev") {
			t.Errorf("%s: exit %d, want %q in\n%s%s", c.name, code, c.want, out, errOut)
		}
	}
}
