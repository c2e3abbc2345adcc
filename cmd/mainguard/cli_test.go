package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// TestEveryCommandHasHelp: --help (and -h, and `help COMMAND`) prints the
// command's usage with each of its flags, and exits 0, for every command.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			args := append(strings.Fields(c.name), "--help")
			out, errOut, code := mg(t, nil, args...)
			if code != 0 || !strings.HasPrefix(out, "usage: mainguard "+c.name) || errOut != "" {
				t.Fatalf("--help: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if !strings.Contains(out, c.summary) {
				t.Errorf("--help does not say what the command does: %q", out)
			}
			// Every flag the command defines is listed.
			f := newFlags(c)
			for _, m := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(out, -1) {
				f.Bool(m[1], false, "")
			}
			short, _, _ := mg(t, nil, append(strings.Fields(c.name), "-h")...)
			viaHelp, _, code := mg(t, nil, append([]string{"help"}, strings.Fields(c.name)...)...)
			if short != out || viaHelp != out || code != 0 {
				t.Errorf("-h and `help %s` differ from --help", c.name)
			}
		})
	}
	out, _, code := mg(t, nil, "--help")
	for _, c := range commands {
		if !strings.Contains(out, c.name) {
			t.Errorf("the usage does not list %q", c.name)
		}
	}
	if code != 0 {
		t.Errorf("--help exit %d", code)
	}
	if out, _, code := mg(t, nil, "token", "--help"); code != 0 || !strings.Contains(out, "token revoke") {
		t.Errorf("token --help: %d %q", code, out)
	}
}

// TestHelpListsFlags: the flags a command takes are in its help.
func TestHelpListsFlags(t *testing.T) {
	t.Parallel()
	for cmd, flags := range map[string][]string{
		"upload":       {"-token", "-org", "-repo", "-sha", "-branch", "-pr", "-variant", "-codeowners", "-url"},
		"repo set":     {"-org", "-jira-base-url", "-quarantine", "-branches", "-streak", "-aws", "-data-dir"},
		"serve":        {"-addr", "-in-memory", "-data-dir", "-tick", "-github-sim"},
		"test list":    {"-status", "-quarantined", "-ids"},
		"webhook add":  {"-org", "-url", "-events"},
		"org set":      {"-org", "-enum-case", "-github-installation", "-remove-github-installation", "-force"},
		"repo claim":   {"-org", "-force", "-release"},
		"token create": {"-org", "-scope", "-quiet"},
	} {
		out, _, _ := mg(t, nil, append(strings.Fields(cmd), "--help")...)
		for _, f := range flags {
			if !strings.Contains(out, "  "+f+" ") && !strings.Contains(out, "  "+f+"\n") {
				t.Errorf("%s --help does not list %s:\n%s", cmd, f, out)
			}
		}
	}
}

// TestFlagDefaultsOnce: every flag of every command says its default at
// most once, in words where it comes from the environment, whose values
// (a token, a secret) the help never prints.
func TestFlagDefaultsOnce(t *testing.T) {
	t.Parallel()
	e := map[string]string{"MAINGUARD_ORG": "org-from-env", "MAINGUARD_DATA_DIR": "/srv/mg-data", "MAINGUARD_TOKEN": "mg_sEcReT",
		"MAINGUARD_URL": "https://mg.example", "MAINGUARD_WEBHOOK_SECRET": "whsec_sEcReT"}
	flags := 0
	for _, c := range commands {
		out, _, code := mg(t, e, append(strings.Fields(c.name), "--help")...)
		if code != 0 {
			t.Fatalf("%s --help: %d", c.name, code)
		}
		for _, v := range e {
			if strings.Contains(out, v) {
				t.Errorf("%s --help prints the environment's %q:\n%s", c.name, v, out)
			}
		}
		// A flag's help runs from its "  -name" line to the next one.
		for _, help := range regexp.MustCompile(`(?m)^  -`).Split(out, -1)[1:] {
			flags++
			if n := strings.Count(help, "(default"); n > 1 {
				t.Errorf("%s: -%s", c.name, help)
			}
		}
	}
	if flags < 100 {
		t.Fatalf("%d flags read from the help: the split is wrong", flags)
	}
}

// TestCommandLineMistakes: each mistake is exit 2 with a sentence that
// names it, before anything is opened.
func TestCommandLineMistakes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"org", "create", "--slug", "x", "--always"}, "flag provided but not defined: -always"},
		{[]string{"org", "create"}, "org create needs --slug"},
		{[]string{"token", "create"}, "token create needs --org"},
		{[]string{"token", "revoke", "--org", "acme"}, "token revoke needs --token"},
		{[]string{"upload", "--org", "acme", "a.xml"}, "upload needs --token (or $MAINGUARD_TOKEN)"},
		{[]string{"queue", "status", "--repo", "github.com/acme/web", "--branch", "main"}, "queue status needs --token (or $MAINGUARD_TOKEN) (see"},
		{[]string{"token", "list"}, "token list needs --org (or $MAINGUARD_ORG) (see"},
		// As the API refuses a short pr.sha, in its words.
		{[]string{"upload", "--token", "mg_x", "--org", "acme", "--repo", "github.com/acme/web", "--sha", "1f0c9d2", "--branch", "main", "a.xml"},
			`--sha must be a commit sha: 40 or 64 hex digits, got "1f0c9d2"`},
		{[]string{"repo", "set", "https://github.com/acme/web", "--org", "acme"}, `"https://github.com/acme/web" is not a repository: give HOST/OWNER/NAME`},
		{[]string{"repo", "set", "acme/web", "--org", "acme"}, "give HOST/OWNER/NAME, e.g. github.com/acme/web"},
		{[]string{"repo", "set", "github.com/acme/web/extra", "--org", "acme"}, "is not a repository"},
		{[]string{"repo", "set", "--org", "acme"}, "repo set takes HOST/OWNER/NAME, got 0"},
		{[]string{"test", "show", "github.com/acme/web", "--org", "acme"}, "test show takes HOST/OWNER/NAME TEST_ID"},
		{[]string{"test", "list", "github.com/acme/web", "--org", "acme", "--status", "sad"}, "--status must be flaky or broken"},
		{[]string{"test", "frob"}, `unknown command "test frob"`},
		{[]string{"frob"}, `unknown command "frob"`},
		{[]string{"webhook", "listen"}, "webhook listen needs --secret"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, errOut, code := mg(t, map[string]string{}, c.args...)
			if code != 2 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, c.want)
			}
		})
	}
}

// TestNoSilentOrganization: --org is never assumed; MAINGUARD_ORG is the
// one explicit default.
func TestNoSilentOrganization(t *testing.T) {
	t.Parallel()
	e := localEnv(t, nil)
	if _, errOut, code := mg(t, e, "token", "list"); code != 2 || !strings.Contains(errOut, "needs --org") {
		t.Errorf("token list without --org: %d %q", code, errOut)
	}
	if _, _, code := mg(t, e, "org", "create", "--slug", "acme"); code != 0 {
		t.Fatal("org create")
	}
	e["MAINGUARD_ORG"] = "acme"
	if out, errOut, code := mg(t, e, "token", "list"); code != 0 || !strings.Contains(out, "active") {
		t.Errorf("token list with MAINGUARD_ORG: %d %q %q", code, out, errOut)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, _, code := mg(t, nil, args...)
		if code != 0 || !strings.HasPrefix(out, "mainguard ") || !strings.Contains(out, "go1.") {
			t.Errorf("%v: %d %q", args, code, out)
		}
	}
}

// TestAdminFindsTheLocalServer: with DYNAMODB_ENDPOINT unset, the
// administration commands use the table of the local server whose data
// folder they are given, and say so; with no server, they refuse to guess
// and say what to do; they go to AWS only when asked.
func TestAdminFindsTheLocalServer(t *testing.T) {
	t.Parallel()
	_, table := storetest.NewTable(t)
	dir := t.TempDir()
	e := map[string]string{"TABLE_NAME": table}
	_, errOut, code := mg(t, e, "org", "create", "--slug", "acme", "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, "Start one with `make run`") || !strings.Contains(errOut, "--aws") {
		t.Errorf("no server: %d %q", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, endpointFile), []byte(storetest.Endpoint()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := mg(t, e, "org", "create", "--slug", "acme", "--data-dir", dir)
	if code != 0 || !tokenRE.MatchString(out) {
		t.Fatalf("org create through the endpoint file: %d %q %q", code, out, errOut)
	}
	if want := "mainguard: using the local server's table " + table + " at " + storetest.Endpoint(); !strings.Contains(errOut, want) {
		t.Errorf("stderr %q does not say %q", errOut, want)
	}
	// MAINGUARD_DATA_DIR names the folder too.
	e["MAINGUARD_DATA_DIR"] = dir
	if out, _, code := mg(t, e, "token", "list", "--org", "acme"); code != 0 || !strings.Contains(out, "active") {
		t.Errorf("token list through MAINGUARD_DATA_DIR: %d %q", code, out)
	}
	// A server that is gone: the endpoint file names an address where
	// nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	if err := os.WriteFile(filepath.Join(dir, endpointFile), []byte(dead+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = mg(t, e, "token", "list", "--org", "acme")
	if code != 1 || !strings.Contains(errOut, "nothing answers at the local server's table") || !strings.Contains(errOut, "start the local server with `make run`") {
		t.Errorf("server gone: %d %q", code, errOut)
	}
	// --aws (or AWS_PROFILE) chooses AWS, and says which table in which
	// region; the table is not opened here, so nothing leaves the machine.
	for _, c := range []struct {
		aws     bool
		profile string
		want    string
	}{
		{true, "", "mainguard: using table " + table + " in AWS region eu-west-1 (--aws)"},
		{false, "ops", "mainguard: using table " + table + " in AWS region eu-west-1 (AWS_PROFILE=ops)"},
	} {
		var errb bytes.Buffer
		ce := map[string]string{"TABLE_NAME": table, "AWS_REGION": "eu-west-1", "AWS_PROFILE": c.profile}
		tg := &target{aws: &c.aws, dataDir: &dir}
		cfg, err := tg.config(&env{ctx: context.Background(), stderr: &errb, getenv: getenvOf(ce)})
		if err != nil || cfg.DynamoEndpoint != "" || strings.TrimSpace(errb.String()) != c.want {
			t.Errorf("AWS: endpoint %q, err %v, stderr %q; want %q", cfg.DynamoEndpoint, err, errb.String(), c.want)
		}
	}
}

// TestSecondServeRefused: a second server on a data folder in use is
// refused with the first one's process, before it writes anything; an
// address in use is refused before anything starts.
func TestSecondServeRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unlock, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ep := filepath.Join(dir, endpointFile)
	if err := os.WriteFile(ep, []byte("http://first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := mg(t, map[string]string{}, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--github-sim", "off")
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("another mainguard serve (process %d) is using the data folder %s", os.Getpid(), dir)) {
		t.Errorf("second serve: %d %q", code, errOut)
	}
	if b, _ := os.ReadFile(ep); string(b) != "http://first\n" {
		t.Errorf("the first server's endpoint file was changed: %q", b)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	other := t.TempDir()
	_, errOut, code = mg(t, map[string]string{}, "serve", "--addr", ln.Addr().String(), "--data-dir", other, "--github-sim", "off")
	if code != 1 || !strings.Contains(errOut, "cannot serve on "+ln.Addr().String()) {
		t.Errorf("busy address: %d %q", code, errOut)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("a refused serve wrote into its data folder: %v", entries)
	}
}

// TestWebhookListen receives a delivery signed as the service signs them,
// and refuses one signed with another secret.
func TestWebhookListen(t *testing.T) {
	t.Parallel()
	secret := webhooks.NewSecret()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	out := &testkit.SyncBuffer{}
	// exited is closed, never drained: every wait below sees the end.
	exited := make(chan struct{})
	var code int
	go func() {
		defer close(exited)
		code = run(context.Background(), []string{"webhook", "listen", "--addr", addr, "--secret", secret, "--count", "1"}, out, out, getenvOf(nil))
		fmt.Fprintf(out, "[listen returned %d]\n", code)
	}()
	send := func(secrets []string) int {
		t.Helper()
		body := []byte(`{"type":"test_case.ticket_linked"}`)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", bytes.NewReader(body))
		if err := webhooks.SetHeaders(req.Header, secrets, "msg_1", time.Now(), body); err != nil {
			t.Fatal(err)
		}
		// The listener may not be listening yet: try until it is (or ends).
		status := 0
		testkit.Await(t, "listen to answer", func() bool {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				req, _ = http.NewRequest(http.MethodPost, "http://"+addr+"/", bytes.NewReader(body))
				_ = webhooks.SetHeaders(req.Header, secrets, "msg_1", time.Now(), body)
				return false
			}
			resp.Body.Close()
			status = resp.StatusCode
			return true
		}, exited, out.String)
		return status
	}
	if code := send([]string{webhooks.NewSecret()}); code != http.StatusUnauthorized {
		t.Errorf("another secret: %d", code)
	}
	if code := send([]string{secret}); code != http.StatusNoContent {
		t.Errorf("signed: %d", code)
	}
	testkit.AwaitExit(t, "listen --count 1 after its delivery", exited, time.Minute, nil, out.String)
	select {
	case <-exited:
		if code != 0 {
			t.Errorf("listen exit %d: %s", code, out)
		}
	default:
	}
	got := out.String()
	if !strings.Contains(got, "refused a delivery: no signature matches the secret") || !strings.Contains(got, "test_case.ticket_linked msg_1 verified") {
		t.Errorf("listen printed %q", got)
	}
}
