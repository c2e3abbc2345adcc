package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
)

// The GitHub App the service acts as is created from a manifest (GitHub's
// "Registering a GitHub App from a manifest"): a person posts the manifest
// to GitHub, GitHub creates the App and sends the browser back to the
// manifest's redirect_url with a one-time code, and the code is exchanged
// (POST /app-manifests/{code}/conversions, within an hour) for the App's
// id, private key and webhook secret.

// AppPermissions are the repository permissions the service needs, and no
// more (each with the calls that need it):
var AppPermissions = map[string]string{
	// Test branches (create, update, delete refs; POST /merges), merging
	// pull requests, comparing commits, a branch's protection summary
	// (GET …/branches/{branch}, for its required checks); push events.
	"contents": "write",
	// Draft pull requests of test branches (open, edit, close), reading and
	// listing pull requests; and, on pull requests, the queue's comment,
	// reactions and labels (GitHub takes Pull requests or Issues write for
	// those on a pull request); pull_request events.
	"pull_requests": "write",
	// The queue's commit status (Trunk Merge Queue (…)) and reading
	// combined statuses; status events.
	"statuses": "write",
	// Reading check runs; the check run mainguard/tests of each pull
	// request commit an upload reports on (create, edit, find its own);
	// check_run and check_suite events.
	"checks": "write",
	// Comment commands arrive as issue_comment events, which GitHub sends
	// only to Apps that can read Issues.
	"issues": "read",
	// Updating a branch to a commit whose changes touch .github/workflows
	// (a test branch, a merge of such a pull request) is refused to an App
	// without it.
	"workflows": "write",
	// Repository metadata and a person's permission on a repository (who
	// may command the queue); GitHub grants it to every App.
	"metadata": "read",
}

// NewManifest is the manifest of the App for the deployment at base (its
// web app's address; the API is base/v1). redirect is where GitHub sends
// the browser with the code; name the App's name (GitHub allows 34
// characters, unique on GitHub).
func NewManifest(base, redirect, name string) (Manifest, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return Manifest{}, fmt.Errorf("the deployment's address must be an http(s) URL, got %q", base)
	}
	base = strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
	if name == "" {
		name = "mainguard " + strings.Split(u.Hostname(), ".")[0]
	}
	if len(name) > 34 {
		name = name[:34]
	}
	return Manifest{
		Name:        name,
		URL:         base + "/",
		Description: "Merge queue and test health of the mainguard deployment at " + base + ".",
		HookAttributes: HookAttributes{
			URL:    base + "/v1/github/webhook",
			Active: true,
		},
		RedirectURL:        redirect,
		Public:             false,
		DefaultPermissions: AppPermissions,
		DefaultEvents:      HandledEvents,
	}, nil
}

// Manifest is GitHub's App manifest, with the parameters GitHub documents.
// No callback_urls, setup_url or OAuth: the App never acts as a user, and
// needs no setup after it is installed.
type Manifest struct {
	Name               string            `json:"name,omitempty"`
	URL                string            `json:"url"`
	HookAttributes     HookAttributes    `json:"hook_attributes"`
	RedirectURL        string            `json:"redirect_url,omitempty"`
	CallbackURLs       []string          `json:"callback_urls,omitempty"`
	SetupURL           string            `json:"setup_url,omitempty"`
	Description        string            `json:"description,omitempty"`
	Public             bool              `json:"public"`
	DefaultEvents      []string          `json:"default_events"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	RequestOAuth       bool              `json:"request_oauth_on_install,omitempty"`
	SetupOnUpdate      bool              `json:"setup_on_update,omitempty"`
}

// HookAttributes are the manifest's webhook: where GitHub delivers.
type HookAttributes struct {
	URL    string `json:"url"`
	Active bool   `json:"active"`
}

// NewAppURL is where the manifest is posted (as the form field manifest)
// to create the App: on web (https://github.com, or a GitHub Enterprise
// host), for the person's own account, or for organization org. state
// comes back with the code.
func NewAppURL(web, org, state string) string {
	web = strings.TrimRight(web, "/")
	path := "/settings/apps/new"
	if org != "" {
		path = "/organizations/" + url.PathEscape(org) + "/settings/apps/new"
	}
	return web + path + "?state=" + url.QueryEscape(state)
}

// AppConversion is what GitHub answers for a manifest's code: the App and
// its credentials (shown this once).
type AppConversion struct {
	ID            int64  `json:"id"`
	Slug          string `json:"slug"`
	Name          string `json:"name"`
	HTMLURL       string `json:"html_url"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	WebhookSecret string `json:"webhook_secret"`
	PEM           string `json:"pem"`
	Owner         struct {
		Login string `json:"login"`
	} `json:"owner"`
}

// Secret is the App as the deployment keeps it (AppSecret).
func (c AppConversion) Secret() AppSecret {
	return AppSecret{AppID: c.ID, Slug: c.Slug, ClientID: c.ClientID, ClientSecret: c.ClientSecret, PrivateKey: c.PEM}
}

// ConvertManifest exchanges a manifest's code for the App (POST
// /app-manifests/{code}/conversions on the API root apiURL; "" is
// api.github.com). The call needs no authentication.
func ConvertManifest(ctx context.Context, hc *http.Client, apiURL, code string) (AppConversion, error) {
	if apiURL == "" {
		apiURL = "https://api.github.com"
	}
	if code == "" || strings.ContainsAny(code, "/?#") {
		return AppConversion{}, errs.E(errs.Invalid, "the code %q is not a manifest code", code)
	}
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(apiURL, "/")+"/app-manifests/"+url.PathEscape(code)+"/conversions", nil)
	if err != nil {
		return AppConversion{}, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "mainguard")
	resp, err := hc.Do(req)
	if err != nil {
		return AppConversion{}, errs.Wrap(errs.Unavailable, err, "GitHub did not answer the manifest conversion")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &e)
		return AppConversion{}, fmt.Errorf("GitHub refused the manifest code (%d %s): a code works once, within an hour of the App's creation", resp.StatusCode, e.Message)
	}
	var c AppConversion
	if err := json.Unmarshal(body, &c); err != nil || c.ID <= 0 || c.PEM == "" {
		return AppConversion{}, errors.New("GitHub's answer to the manifest conversion has no App id or key")
	}
	return c, nil
}
