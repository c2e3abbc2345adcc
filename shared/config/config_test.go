package config

import (
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c, err := FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.TableName != "mainguard" || c.WebhookInternalNetworks || c.RateLimit != 100 || c.RateBurst != 200 || c.AuthCacheTTL != 30*time.Second || c.EnumCase != "upper" || c.Region != "" {
		t.Errorf("defaults: %+v", c)
	}
	c, _ = FromEnv(func(k string) string { return map[string]string{"DYNAMODB_ENDPOINT": "http://127.0.0.1:8000"}[k] })
	if c.Region != "us-east-1" {
		t.Errorf("a local endpoint needs a region: %+v", c)
	}
}

func TestProblemsAreNamed(t *testing.T) {
	_, err := FromEnv(func(k string) string {
		return map[string]string{"ENUM_CASE": "camel", "RATE_LIMIT_RPS": "fast", "PUBLIC_APP_URL": "ftp://x", "LOG_LEVEL": "loud", "WEBHOOK_INTERNAL_NETWORKS": "yes"}[k]
	})
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"ENUM_CASE", "RATE_LIMIT_RPS", "PUBLIC_APP_URL", "LOG_LEVEL", "WEBHOOK_INTERNAL_NETWORKS"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}

// TestGitHubWebURL: links to pull requests and commits go where the
// configured GitHub shows them.
func TestGitHubWebURL(t *testing.T) {
	for api, want := range map[string]string{
		"":                                 "https://github.com",
		"https://api.github.com":           "https://github.com",
		"https://api.github.com/":          "https://github.com",
		"https://ghe.acme.example/api/v3":  "https://ghe.acme.example",
		"https://ghe.acme.example/api/v3/": "https://ghe.acme.example",
		"https://api.acme.ghe.com":         "https://acme.ghe.com",
		"https://API.Acme.GHE.com/":        "https://Acme.GHE.com",
		"http://127.0.0.1:8081":            "http://127.0.0.1:8081",
	} {
		if got := GitHubWebURLOf(api); got != want {
			t.Errorf("GitHubWebURLOf(%q) = %q, want %q", api, got, want)
		}
		c, err := FromEnv(func(k string) string { return map[string]string{"GITHUB_API_URL": api}[k] })
		if err != nil || c.GitHubWebURL != want {
			t.Errorf("GITHUB_API_URL=%q: GitHubWebURL %q, %v", api, c.GitHubWebURL, err)
		}
	}
}

func TestWebhookInternalNetworks(t *testing.T) {
	for v, want := range map[string]bool{"": false, "refuse": false, "allow": true} {
		c, err := FromEnv(func(k string) string { return map[string]string{"WEBHOOK_INTERNAL_NETWORKS": v}[k] })
		if err != nil || c.WebhookInternalNetworks != want {
			t.Errorf("WEBHOOK_INTERNAL_NETWORKS=%q: %v %v, want %v", v, c.WebhookInternalNetworks, err, want)
		}
	}
}

// TestEnterpriseHost: the host whose repositories the deployment accepts
// beside github.com's, named by GITHUB_API_URL; none for github.com's API.
func TestEnterpriseHost(t *testing.T) {
	for api, want := range map[string]string{
		"":                                "",
		"https://api.github.com":          "",
		"https://API.GitHub.com/":         "",
		"https://GHE.acme.example/api/v3": "ghe.acme.example",
		"http://127.0.0.1:8081":           "127.0.0.1",
		"https://api.acme.ghe.com":        "acme.ghe.com",
		"https://API.Acme.GHE.com/":       "acme.ghe.com",
	} {
		if got := EnterpriseHost(api); got != want {
			t.Errorf("EnterpriseHost(%q) = %q, want %q", api, got, want)
		}
	}
}
