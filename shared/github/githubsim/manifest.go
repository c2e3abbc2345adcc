package githubsim

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The manifest flow (GitHub's "Registering a GitHub App from a manifest"):
//
//	POST /settings/apps/new?state=S                   (web: form field manifest)
//	POST /organizations/{org}/settings/apps/new?state=S
//	POST /app-manifests/{code}/conversions            (REST, no authentication)
//
// The first two check the manifest as GitHub does, register the App with a
// fresh key and webhook secret, and redirect to its redirect_url with a
// code (and the state); the third exchanges the code, once and within an
// hour, for the App and its credentials. The App registered is not the one
// the server authenticates (Options.App): ManifestApp gives it, for a
// server of its own.

// manifestCodeTTL is how long GitHub takes a code: an hour.
const manifestCodeTTL = time.Hour

// RegisteredApp is an App created through the manifest flow.
type RegisteredApp struct {
	ID            int64
	Slug, Name    string
	Owner         string
	Manifest      map[string]any // as posted
	Key           *rsa.PrivateKey
	WebhookSecret string
	ClientID      string
	ClientSecret  string
	Permissions   map[string]string
	Events        []string
	HookURL       string
}

// App is the App as Options.App describes one, to serve it.
func (a *RegisteredApp) App(installationID int64) *App {
	return &App{ID: a.ID, PublicKey: &a.Key.PublicKey, InstallationID: installationID}
}

type manifestCode struct {
	app     *RegisteredApp
	expires time.Time
}

// manifests is the server's registry of manifest Apps.
type manifests struct {
	mu    sync.Mutex
	apps  []*RegisteredApp
	codes map[string]manifestCode
	next  int64
}

// ManifestApp is the App registered under id, nil when none is.
func (s *Server) ManifestApp(id int64) *RegisteredApp {
	s.manifests.mu.Lock()
	defer s.manifests.mu.Unlock()
	for _, a := range s.manifests.apps {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// serveManifest answers the manifest flow's three requests; false for any
// other request.
func (s *Server) serveManifest(w http.ResponseWriter, r *http.Request) bool {
	seg := segments(r)
	switch {
	case r.Method == http.MethodPost && len(seg) == 3 && seg[0] == "settings" && seg[1] == "apps" && seg[2] == "new":
		s.newManifestApp(w, r, "mainguard-sim")
	case r.Method == http.MethodPost && len(seg) == 5 && seg[0] == "organizations" && seg[2] == "settings" && seg[3] == "apps" && seg[4] == "new":
		s.newManifestApp(w, r, seg[1])
	case r.Method == http.MethodPost && len(seg) == 3 && seg[0] == "app-manifests" && seg[2] == "conversions":
		s.convertManifest(w, seg[1])
	default:
		return false
	}
	return true
}

// newManifestApp is the person's click on "Create GitHub App" with the
// posted manifest: GitHub's form shows what is wrong with it instead.
func (s *Server) newManifestApp(w http.ResponseWriter, r *http.Request, owner string) {
	if err := r.ParseForm(); err != nil {
		refuseManifest(w, "the form could not be read")
		return
	}
	raw := r.PostForm.Get("manifest")
	if raw == "" {
		refuseManifest(w, "no manifest was posted")
		return
	}
	m, problems := checkManifest(raw)
	if len(problems) > 0 {
		refuseManifest(w, problems...)
		return
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	s.manifests.mu.Lock()
	name, _ := m["name"].(string)
	if name == "" {
		name = "app-" + randomHex(4)
	}
	for _, a := range s.manifests.apps {
		if strings.EqualFold(a.Name, name) {
			s.manifests.mu.Unlock()
			refuseManifest(w, "Name is already in use")
			return
		}
	}
	s.manifests.next++
	app := &RegisteredApp{
		ID: 900000 + s.manifests.next, Name: name, Slug: slug(name), Owner: owner, Manifest: m, Key: key,
		WebhookSecret: randomHex(20), ClientID: "Iv1." + randomHex(8), ClientSecret: randomHex(20),
		Permissions: map[string]string{"metadata": "read"},
	}
	if perms, ok := m["default_permissions"].(map[string]any); ok {
		for k, v := range perms {
			app.Permissions[k] = v.(string)
		}
	}
	if evs, ok := m["default_events"].([]any); ok {
		for _, e := range evs {
			app.Events = append(app.Events, e.(string))
		}
	}
	if hook, ok := m["hook_attributes"].(map[string]any); ok {
		app.HookURL, _ = hook["url"].(string)
	}
	code := randomHex(20)
	if s.manifests.codes == nil {
		s.manifests.codes = map[string]manifestCode{}
	}
	s.manifests.apps = append(s.manifests.apps, app)
	s.manifests.codes[code] = manifestCode{app: app, expires: s.now().Add(manifestCodeTTL)}
	s.manifests.mu.Unlock()

	redirect, _ := m["redirect_url"].(string)
	if redirect == "" {
		// Without a redirect_url GitHub shows the new App's settings page.
		fmt.Fprintf(w, "<p>Your GitHub App %s was created.</p>", html.EscapeString(name))
		return
	}
	u, _ := url.Parse(redirect)
	q := u.Query()
	q.Set("code", code)
	if st := r.URL.Query().Get("state"); st != "" {
		q.Set("state", st)
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// convertManifest is POST /app-manifests/{code}/conversions.
func (s *Server) convertManifest(w http.ResponseWriter, code string) {
	s.manifests.mu.Lock()
	c, ok := s.manifests.codes[code]
	delete(s.manifests.codes, code) // a code works once
	s.manifests.mu.Unlock()
	if !ok || s.now().After(c.expires) {
		writeJSON(w, 404, errorJSON("Not Found", "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest"))
		return
	}
	a := c.app
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(a.Key)})
	now := s.now().UTC().Format(time.RFC3339)
	desc, _ := a.Manifest["description"].(string)
	home, _ := a.Manifest["url"].(string)
	writeJSON(w, 201, obj{
		"id": a.ID, "slug": a.Slug, "node_id": "A_" + strconv.FormatInt(a.ID, 36), "name": a.Name,
		"owner":       obj{"login": a.Owner, "type": "Organization"},
		"description": desc, "external_url": home,
		"html_url":   "https://github.com/apps/" + a.Slug,
		"created_at": now, "updated_at": now,
		"permissions": a.Permissions, "events": a.Events,
		"client_id": a.ClientID, "client_secret": a.ClientSecret,
		"webhook_secret": a.WebhookSecret, "pem": string(keyPEM),
	})
}

// manifestParams are the parameters GitHub's manifest takes, with their
// JSON types.
var manifestParams = map[string]string{
	"name": "string", "url": "string", "hook_attributes": "object", "redirect_url": "string",
	"callback_urls": "array", "setup_url": "string", "description": "string", "public": "boolean",
	"default_events": "array", "default_permissions": "object",
	"request_oauth_on_install": "boolean", "setup_on_update": "boolean",
}

// eventPermission is the permission GitHub requires to subscribe to an
// event (at least read); events not listed are refused.
var eventPermission = map[string]string{
	"check_run": "checks", "check_suite": "checks", "commit_comment": "contents", "create": "contents",
	"delete": "contents", "push": "contents", "release": "contents", "issues": "issues",
	"issue_comment": "issues", "label": "issues", "milestone": "issues", "pull_request": "pull_requests",
	"pull_request_review": "pull_requests", "pull_request_review_comment": "pull_requests",
	"status": "statuses", "deployment": "deployments", "deployment_status": "deployments",
	"workflow_run": "actions", "workflow_job": "actions", "branch_protection_rule": "administration",
	"repository": "metadata", "public": "metadata", "star": "metadata", "watch": "metadata",
}

// permissionNames are GitHub's repository and organization App
// permissions (the REST API's app-permissions).
var permissionNames = []string{
	"actions", "administration", "checks", "contents", "deployments", "environments", "issues", "metadata",
	"packages", "pages", "pull_requests", "repository_hooks", "repository_projects", "secret_scanning_alerts",
	"secrets", "security_events", "single_file", "statuses", "vulnerability_alerts", "workflows", "members",
	"organization_administration", "organization_hooks", "organization_plan", "organization_projects",
	"organization_packages", "organization_secrets", "organization_self_hosted_runners",
	"organization_user_blocking", "team_discussions", "discussions", "merge_queues", "attestations",
	"repository_custom_properties", "codespaces", "dependabot_secrets",
}

// checkManifest parses a manifest and lists what GitHub would refuse.
func checkManifest(raw string) (map[string]any, []string) {
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, []string{"the manifest is not valid JSON"}
	}
	var problems []string
	for k, v := range m {
		want, ok := manifestParams[k]
		if !ok {
			problems = append(problems, "unknown manifest parameter "+k)
			continue
		}
		if jsonType(v) != want {
			problems = append(problems, fmt.Sprintf("%s must be a %s", k, want))
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	absolute := func(k, s string) {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			problems = append(problems, k+" must be a full http(s) URL")
		}
	}
	home, _ := m["url"].(string)
	if home == "" {
		problems = append(problems, "Url can't be blank")
	} else {
		absolute("url", home)
	}
	if name, _ := m["name"].(string); len(name) > 34 {
		problems = append(problems, "Name is too long (maximum is 34 characters)")
	}
	if hook, ok := m["hook_attributes"].(map[string]any); ok {
		hu, _ := hook["url"].(string)
		if hu == "" {
			problems = append(problems, "Hook url can't be blank")
		} else {
			absolute("hook_attributes.url", hu)
		}
	}
	for _, k := range []string{"redirect_url", "setup_url"} {
		if v, _ := m[k].(string); v != "" {
			absolute(k, v)
		}
	}
	perms := map[string]string{}
	if p, ok := m["default_permissions"].(map[string]any); ok {
		for k, v := range p {
			level, _ := v.(string)
			if !slices.Contains(permissionNames, k) {
				problems = append(problems, "unknown permission "+k)
			}
			if level != "read" && level != "write" && level != "admin" {
				problems = append(problems, fmt.Sprintf("permission %s must be read or write, got %v", k, v))
			}
			perms[k] = level
		}
	}
	if evs, ok := m["default_events"].([]any); ok {
		for _, e := range evs {
			name, _ := e.(string)
			need, known := eventPermission[name]
			switch {
			case !known:
				problems = append(problems, fmt.Sprintf("unknown event %v", e))
			case need != "metadata" && perms[need] == "":
				problems = append(problems, fmt.Sprintf("Default events unsupported: %s needs the %s permission", name, need))
			}
		}
	}
	slices.Sort(problems)
	return m, problems
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case float64:
		return "number"
	}
	return "null"
}

func refuseManifest(w http.ResponseWriter, problems ...string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnprocessableEntity)
	fmt.Fprint(w, "<h1>Invalid GitHub App configuration</h1><ul>")
	for _, p := range problems {
		fmt.Fprintf(w, "<li>%s</li>", html.EscapeString(p))
	}
	fmt.Fprint(w, "</ul>")
}

func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	return strings.Trim(b.String(), "-")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
