package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/secrets/secretsim"
)

// githubDocs is testdata/github-app-docs.json: GitHub's documented manifest
// parameters, permission names and what each event and endpoint needs.
type githubDocs struct {
	Parameters map[string]struct {
		Type     string `json:"type"`
		Required bool   `json:"required"`
		MaxItems int    `json:"max_items"`
	} `json:"parameters"`
	HookAttributes map[string]struct {
		Type     string `json:"type"`
		Required bool   `json:"required"`
	} `json:"hook_attributes"`
	NameMaxLength       int                 `json:"name_max_length"`
	Permissions         map[string][]string `json:"permissions"`
	EventPermissions    map[string]string   `json:"event_permissions"`
	EndpointPermissions []struct {
		Endpoint, Permission, Level string
	} `json:"endpoint_permissions"`
}

func readGitHubDocs(t *testing.T) githubDocs {
	t.Helper()
	b, err := os.ReadFile("testdata/github-app-docs.json")
	if err != nil {
		t.Fatal(err)
	}
	var d githubDocs
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// jsonKind is a decoded JSON value's type in the documentation's words.
func jsonKind(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		for _, e := range x {
			if _, ok := e.(string); !ok {
				return "array"
			}
		}
		return "array of strings"
	}
	return fmt.Sprintf("%T", v)
}

// TestAppManifestMatchesGitHubsDocs checks the printed manifest field by
// field against GitHub's documented parameters and permission names, and
// that its permissions are exactly what the events it subscribes to and
// the endpoints the client calls need.
func TestAppManifestMatchesGitHubsDocs(t *testing.T) {
	t.Parallel()
	docs := readGitHubDocs(t)
	out, errOut, code := mg(t, map[string]string{}, "github", "app-manifest", "--url", "https://mg.example.com/", "--org", "acme", "--json")
	if code != 0 {
		t.Fatalf("app-manifest: %d %s", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("the manifest is not JSON: %v\n%s", err, out)
	}
	for name, p := range docs.Parameters {
		v, ok := m[name]
		if p.Required && !ok {
			t.Errorf("required parameter %s is missing", name)
		}
		if ok && jsonKind(v) != p.Type && !(p.Type == "array" && jsonKind(v) == "array of strings") {
			t.Errorf("%s is a %s, GitHub documents a %s", name, jsonKind(v), p.Type)
		}
		if arr, ok := v.([]any); ok && p.MaxItems > 0 && len(arr) > p.MaxItems {
			t.Errorf("%s has %d items, at most %d", name, len(arr), p.MaxItems)
		}
	}
	for name := range m {
		if _, ok := docs.Parameters[name]; !ok {
			t.Errorf("parameter %s is not one GitHub documents", name)
		}
	}
	hook, _ := m["hook_attributes"].(map[string]any)
	for name, p := range docs.HookAttributes {
		if v, ok := hook[name]; (p.Required && !ok) || (ok && jsonKind(v) != p.Type) {
			t.Errorf("hook_attributes.%s = %#v, documented a %s (required %v)", name, v, p.Type, p.Required)
		}
	}
	for name := range hook {
		if _, ok := docs.HookAttributes[name]; !ok {
			t.Errorf("hook_attributes.%s is not documented", name)
		}
	}
	if hook["url"] != "https://mg.example.com/v1/github/webhook" || hook["active"] != true {
		t.Errorf("the webhook: %v", hook)
	}
	if m["url"] != "https://mg.example.com/" || m["public"] != false || m["redirect_url"] != "http://"+defaultSetupAddr+"/callback" {
		t.Errorf("url, public, redirect_url: %v %v %v", m["url"], m["public"], m["redirect_url"])
	}
	if name, _ := m["name"].(string); name == "" || len(name) > docs.NameMaxLength {
		t.Errorf("name %q: GitHub takes 1 to %d characters", name, docs.NameMaxLength)
	}

	perms := map[string]string{}
	for k, v := range m["default_permissions"].(map[string]any) {
		perms[k] = v.(string)
		if levels, ok := docs.Permissions[k]; !ok {
			t.Errorf("permission %s is not one GitHub documents", k)
		} else if !slices.Contains(levels, perms[k]) {
			t.Errorf("permission %s: %s, GitHub documents %v", k, perms[k], levels)
		}
	}
	var events []string
	for _, e := range m["default_events"].([]any) {
		events = append(events, e.(string))
	}
	if !slices.Equal(events, github.HandledEvents) {
		t.Errorf("default_events %v, the webhook intake handles %v", events, github.HandledEvents)
	}
	needed := map[string]bool{"metadata": true} // every App has it
	grants := func(perm, level string) bool {
		return perms[perm] == "write" || (level == "read" && perms[perm] == "read")
	}
	for _, e := range events {
		need, ok := docs.EventPermissions[e]
		if !ok {
			t.Errorf("event %s: what it needs is not in the docs' copy", e)
			continue
		}
		needed[need] = true
		if !grants(need, "read") {
			t.Errorf("event %s needs %s, which the manifest does not grant", e, need)
		}
	}
	for _, ep := range docs.EndpointPermissions {
		needed[ep.Permission] = true
		if !grants(ep.Permission, ep.Level) {
			t.Errorf("%s needs %s %s; the manifest grants %q", ep.Endpoint, ep.Permission, ep.Level, perms[ep.Permission])
		}
	}
	for p, level := range perms {
		if !needed[p] {
			t.Errorf("permission %s (%s) is needed by no event or call: no more than what the queue needs", p, level)
		}
		if level == "write" {
			writes := false
			for _, ep := range docs.EndpointPermissions {
				writes = writes || (ep.Permission == p && ep.Level == "write")
			}
			if !writes {
				t.Errorf("permission %s is write, but nothing the client calls writes with it", p)
			}
		}
	}

	// The text form names the address that creates the App.
	out, _, _ = mg(t, map[string]string{}, "github", "app-manifest", "--url", "https://mg.example.com", "--org", "acme")
	if !strings.Contains(out, "https://github.com/organizations/acme/settings/apps/new?state=") {
		t.Errorf("no creation address:\n%s", out)
	}
	if _, errOut, code := mg(t, map[string]string{}, "github", "app-manifest", "--url", "mg.example.com"); code != 2 || !strings.Contains(errOut, "http(s) URL") {
		t.Errorf("a deployment address without a scheme: %d %s", code, errOut)
	}
}

// TestAppSetupEndToEnd is the README's step: app-setup serves the page that
// posts the manifest to GitHub (the GitHub test server, as strict about
// manifests as GitHub), follows GitHub's redirect back, exchanges the code
// and stores the App and its webhook secret in Secrets Manager (the
// stand-in), where a function's GitHub client then authenticates with it.
func TestAppSetupEndToEnd(t *testing.T) {
	t.Parallel()
	gh, err := githubsim.New(t.TempDir(), githubsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gh.Close() })
	sm := secretsim.New("eu-west-1")
	smURL := sm.Start(t)
	appARN := sm.CreateSecret("mg/github-app", "", "{}")
	hookARN := sm.CreateSecret("mg/github-webhook", "", "generated-at-deploy")
	sm.AddIdentity(secretsim.Identity{AccessKey: "AKIDADMIN", SecretKey: "admin"})
	for _, op := range []string{"DescribeSecret", "PutSecretValue"} {
		sm.Allow("AKIDADMIN", "secretsmanager:"+op, appARN)
		sm.Allow("AKIDADMIN", "secretsmanager:"+op, hookARN)
	}
	e := map[string]string{"SECRETSMANAGER_ENDPOINT": smURL, "AWS_REGION": "eu-west-1",
		"AWS_ACCESS_KEY_ID": "AKIDADMIN", "AWS_SECRET_ACCESS_KEY": "admin"}

	out := &testkit.SyncBuffer{}
	errOut := &testkit.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"github", "app-setup", "--url", "https://mg.example.com", "--org", "acme",
			"--stack", "mg", "--listen", "127.0.0.1:0", "--github-url", gh.URL(), "--github-api-url", gh.URL()}, out, errOut, getenvOf(e))
	}()
	page := waitFor(t, out, done, regexp.MustCompile(`Open (http://\S+)/ in a browser`))

	// The person's browser: the page, its form posted to GitHub, and
	// GitHub's redirect back.
	action, back := testkit.CreateGitHubApp(t, page+"/")
	if !strings.HasPrefix(action, gh.URL()+"/organizations/acme/settings/apps/new?state=") || !strings.HasPrefix(back, page+"/callback?") {
		t.Errorf("the form posts to %s, GitHub sends back to %s", action, back)
	}
	if code := <-done; code != 0 {
		t.Fatalf("app-setup: %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out.String(), "/installations/new") {
		t.Errorf("no installation link:\n%s", out)
	}

	// What was stored is the App GitHub made, usable as a function reads it.
	stored, _ := sm.Value("mg/github-app")
	creds, err := github.ParseAppSecret([]byte(stored), 0)
	if err != nil {
		t.Fatalf("stored App: %v\n%s", err, stored)
	}
	app := gh.ManifestApp(creds.AppID)
	if app == nil || !app.Key.Equal(creds.PrivateKey) {
		t.Fatalf("the stored App %d is not the one GitHub created", creds.AppID)
	}
	if hook, _ := sm.Value("mg/github-webhook"); hook != app.WebhookSecret {
		t.Errorf("stored webhook secret %q, GitHub's %q", hook, app.WebhookSecret)
	}
	if app.HookURL != "https://mg.example.com/v1/github/webhook" || app.Permissions["contents"] != "write" || !slices.Equal(app.Events, github.HandledEvents) {
		t.Errorf("registered App: hook %s, permissions %v, events %v", app.HookURL, app.Permissions, app.Events)
	}
	installed, err := githubsim.New(t.TempDir(), githubsim.Options{App: app.App(7)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { installed.Close() })
	head, err := installed.CreateRepo("acme/web", "main")
	if err != nil {
		t.Fatal(err)
	}
	source := func(context.Context, bool) (github.AppCredentials, error) {
		return github.ParseAppSecret([]byte(stored), 0)
	}
	c, err := github.New(github.Config{BaseURL: installed.URL(), AppSource: source})
	if err != nil {
		t.Fatal(err)
	}
	if sha, err := c.BranchHead(context.Background(), github.Repo{Owner: "acme", Name: "web"}, "main"); err != nil || sha != head {
		t.Errorf("the stored App against GitHub: %s %v", sha, err)
	}

	// A code works once.
	code := regexp.MustCompile(`code=([0-9a-f]+)`).FindStringSubmatch(back)[1]
	if _, errOut, exit := mg(t, e, "github", "app-setup", "--url", "https://mg.example.com", "--stack", "mg", "--code", code, "--github-api-url", gh.URL()); exit != 1 || !strings.Contains(errOut, "works once") {
		t.Errorf("the same code again: %d %s", exit, errOut)
	}
	// No stack secret: nothing is created on GitHub.
	if _, errOut, exit := mg(t, e, "github", "app-setup", "--url", "https://mg.example.com", "--stack", "other", "--code", "x", "--github-api-url", gh.URL()); exit != 1 || !strings.Contains(errOut, "deploy the stack first") {
		t.Errorf("a stack without secrets: %d %s", exit, errOut)
	}
}

// TestGitHubRefusesABadManifest: the GitHub test server refuses what
// GitHub's form refuses, so the manifest test above means something.
func TestGitHubRefusesABadManifest(t *testing.T) {
	t.Parallel()
	gh, err := githubsim.New(t.TempDir(), githubsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gh.Close() })
	for name, c := range map[string]struct{ manifest, want string }{
		"no url":               {`{"name":"x"}`, "Url can't be blank"},
		"unknown parameter":    {`{"url":"https://x.example","hooks":{}}`, "unknown manifest parameter hooks"},
		"event without rights": {`{"url":"https://x.example","default_events":["issue_comment"],"default_permissions":{"pull_requests":"write"}}`, "issue_comment needs the issues permission"},
		"unknown permission":   {`{"url":"https://x.example","default_permissions":{"pull_request":"write"}}`, "unknown permission pull_request"},
		"name too long":        {`{"url":"https://x.example","name":"` + strings.Repeat("n", 35) + `"}`, "maximum is 34"},
	} {
		resp, err := http.PostForm(gh.URL()+"/settings/apps/new", url.Values{"manifest": {c.manifest}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 422 || !strings.Contains(html.UnescapeString(string(b)), c.want) {
			t.Errorf("%s: %d %s", name, resp.StatusCode, b)
		}
	}
}

// waitFor polls what a command prints until re matches (a hang guard, not
// a speed requirement), and returns its first group.
func waitFor(t *testing.T, out *testkit.SyncBuffer, done <-chan int, re *regexp.Regexp) string {
	t.Helper()
	guard := time.After(2 * time.Minute)
	for {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("the command ended with %d before printing %s:\n%s", code, re, out)
		case <-guard:
			t.Fatalf("nothing matching %s was printed:\n%s", re, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
