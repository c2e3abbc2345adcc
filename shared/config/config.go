// Package config owns the service's settings: one struct read once from the
// environment at start, validated, with a clear message when wrong.
package config

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is everything a function or the local server needs to know.
type Config struct {
	TableName      string        // TABLE_NAME: the single table (default "mainguard")
	DynamoEndpoint string        // DYNAMODB_ENDPOINT: DynamoDB Local; empty means AWS
	Region         string        // AWS_REGION (default us-east-1 with DYNAMODB_ENDPOINT)
	PublicAppURL   string        // PUBLIC_APP_URL: base of links to the web app
	EnumCase       string        // ENUM_CASE: "upper" (default) or "lower" merge-queue enums
	RateLimit      float64       // RATE_LIMIT_RPS per organization, 0 disables (default 100)
	RateBurst      int           // RATE_LIMIT_BURST (default 200)
	AuthCacheTTL   time.Duration // AUTH_CACHE_SECONDS: how long a warm copy trusts a token (default 30)
	LogLevel       string        // LOG_LEVEL: debug, info (default), warn, error
	// BillDynamo (DDB_BILL=true) bills every DynamoDB call by AWS's rules
	// (package billing) and logs the request units of each request and
	// ingest as ddb_billed: for measuring against DynamoDB Local, whose
	// own figure (ddb_capacity) undercounts. It reads each written item
	// before and after the write, so it is not for production.
	BillDynamo bool
	// BundleBucket (BUNDLE_BUCKET) is the S3 bucket of upload bundles when
	// deployed; empty means the local server's folder BundleDir.
	BundleBucket string
	S3Endpoint   string // S3_ENDPOINT: an S3-compatible server (tests); empty means AWS
	BundleDir    string // BUNDLE_DIR: the local server's bundle folder (default .data/bundles)
	// PublicAPIURL (PUBLIC_API_URL) is the API's own base address, ending
	// in /v1, for the local server's signed upload addresses.
	PublicAPIURL string
	// WebhookInternalNetworks (WEBHOOK_INTERNAL_NETWORKS=allow; default
	// refuse) lets outbound webhooks reach private networks (10/8,
	// 172.16/12, 192.168/16, 100.64/10, 198.18/15, fc00::/7): for a
	// deployment whose receivers live on its own network. Loopback, link-
	// local and cloud metadata addresses stay refused (webhooks.Guard).
	WebhookInternalNetworks bool

	// GitHub, for the merge queue (contract 3.8). Deployed, a GitHub App
	// whose id and key are the Secrets Manager secret SecretGitHubApp, and
	// the webhook secret SecretGitHubWebhook (SecretIDs). Locally (mainguard
	// serve, never a function's environment) a token (GITHUB_TOKEN), or an
	// App's GITHUB_APP_ID and PEM key GITHUB_APP_PRIVATE_KEY, and
	// GITHUB_WEBHOOK_SECRET.
	GitHubToken         string
	GitHubAppID         int64
	GitHubAppPrivateKey string
	GitHubAPIURL        string // GITHUB_API_URL: GitHub Enterprise or a test server; empty means api.github.com
	// GitHubWebURL is the web address of that GitHub, where people see its
	// pull requests and commits: https://github.com, or the one of
	// GITHUB_API_URL (GitHubWebURLOf).
	GitHubWebURL           string
	GitHubWebhookSecret    string // GITHUB_WEBHOOK_SECRET: verifies POST /github/webhook
	MergeQueueTickPageSize int    // MERGE_QUEUE_PAGE_SIZE: active queues one tick advances (default 25)

	// The GitHub App's OAuth client, for "Sign in with GitHub" in the web
	// app: GITHUB_APP_CLIENT_ID (not secret). Its secret is the App
	// secret's client_secret (github.AppSecret, which app-setup stores
	// from GitHub's manifest conversion); the local server may take it
	// from GITHUB_APP_CLIENT_SECRET instead. No client id, and people sign
	// in with tokens.
	GitHubAppClientID     string
	GitHubAppClientSecret string

	// SecretIDs names, for each deployment secret a function reads, its
	// ARN or name in Secrets Manager (the variable SecretVar(name)): the
	// name is not secret, the value is, and only the functions that need a
	// secret are given its variable and the right to read it.
	SecretIDs map[string]string
	// SecretsEndpoint (SECRETSMANAGER_ENDPOINT) is a Secrets Manager
	// stand-in (tests); empty means AWS.
	SecretsEndpoint string
	// Secrets reads the secrets by name: set by wiring.NewBase, nil in a
	// Config FromEnv returns.
	Secrets SecretReader
}

// The deployment's secrets, by name. Deployed, each is a Secrets Manager
// secret of the stack; locally the GitHub ones come from the variables
// above and the generated keys from the table. A later integration's
// secret is one more name here and in template.yaml.
const (
	// SecretGitHubApp is the GitHub App: JSON with app_id and private_key
	// (PEM), as mainguard github app-setup stores it (github.AppSecret).
	SecretGitHubApp = "github-app"
	// SecretGitHubWebhook signs GitHub's webhook deliveries.
	SecretGitHubWebhook = "github-webhook"
	// SecretPageToken signs the page tokens of the test lists.
	SecretPageToken = "page-token"
	// SecretWebSession signs the web app's sessions.
	SecretWebSession = "web-session"
	// SecretUploadURL signs the local server's upload addresses; deployed,
	// S3 pre-signs them and no function reads it.
	SecretUploadURL = "upload-url"
)

// SecretNames are the secrets a deployed function may be given.
var SecretNames = []string{SecretGitHubApp, SecretGitHubWebhook, SecretPageToken, SecretWebSession}

// SecretVar is the variable naming a secret's ARN: github-app →
// GITHUB_APP_SECRET_ARN.
func SecretVar(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_SECRET_ARN"
}

// SecretReader reads the deployment's secrets by name.
type SecretReader interface {
	// HasSecret reports whether the secret is configured for this copy
	// (readable or not).
	HasSecret(name string) bool
	// Secret is the secret's current value; an errs.Unavailable sentence
	// when it cannot be read.
	Secret(ctx context.Context, name string) ([]byte, error)
	// RenewSecret reads the secret again after a verification with its
	// value failed; changed reports a new version worth trying.
	RenewSecret(ctx context.Context, name string) (value []byte, changed bool, err error)
}

// HasSecret reports whether the named secret is configured.
func (c Config) HasSecret(name string) bool {
	return c.Secrets != nil && c.Secrets.HasSecret(name)
}

// FromEnv reads the configuration through getenv (os.Getenv in a main).
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		TableName:      or(getenv("TABLE_NAME"), "mainguard"),
		DynamoEndpoint: getenv("DYNAMODB_ENDPOINT"),
		Region:         getenv("AWS_REGION"),
		PublicAppURL:   or(getenv("PUBLIC_APP_URL"), "https://app.mainguard.dev"),
		EnumCase:       strings.ToLower(or(getenv("ENUM_CASE"), "upper")),
		LogLevel:       strings.ToLower(or(getenv("LOG_LEVEL"), "info")),
		BillDynamo:     getenv("DDB_BILL") == "true",
		BundleBucket:   getenv("BUNDLE_BUCKET"),
		S3Endpoint:     getenv("S3_ENDPOINT"),
		BundleDir:      or(getenv("BUNDLE_DIR"), ".data/bundles"),
		PublicAPIURL:   strings.TrimRight(or(getenv("PUBLIC_API_URL"), "http://127.0.0.1:8080/v1"), "/"),
	}
	var problems []string
	c.GitHubToken = getenv("GITHUB_TOKEN")
	c.GitHubAppPrivateKey = getenv("GITHUB_APP_PRIVATE_KEY")
	c.GitHubAPIURL = getenv("GITHUB_API_URL")
	c.GitHubWebhookSecret = getenv("GITHUB_WEBHOOK_SECRET")
	c.GitHubAppClientID = getenv("GITHUB_APP_CLIENT_ID")
	c.GitHubAppClientSecret = getenv("GITHUB_APP_CLIENT_SECRET")
	if v := getenv("GITHUB_APP_ID"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			problems = append(problems, fmt.Sprintf("GITHUB_APP_ID must be a positive integer, got %q", v))
		}
		c.GitHubAppID = id
	}
	for _, name := range SecretNames {
		if id := getenv(SecretVar(name)); id != "" {
			if c.SecretIDs == nil {
				c.SecretIDs = map[string]string{}
			}
			c.SecretIDs[name] = id
		}
	}
	if c.GitHubAppID > 0 && c.GitHubAppPrivateKey == "" && c.SecretIDs[SecretGitHubApp] == "" {
		problems = append(problems, "GITHUB_APP_ID needs GITHUB_APP_PRIVATE_KEY, or the secret GITHUB_APP_SECRET_ARN names")
	}
	c.SecretsEndpoint = getenv("SECRETSMANAGER_ENDPOINT")
	if c.GitHubAppClientSecret != "" && c.GitHubAppClientID == "" {
		problems = append(problems, "GITHUB_APP_CLIENT_SECRET needs GITHUB_APP_CLIENT_ID")
	}
	if c.GitHubAppClientID != "" && c.GitHubAppID == 0 && c.SecretIDs[SecretGitHubApp] == "" {
		problems = append(problems, "GITHUB_APP_CLIENT_ID is the OAuth client of a GitHub App: it needs GITHUB_APP_ID, or the secret GITHUB_APP_SECRET_ARN names")
	}
	if c.GitHubAppClientID != "" && c.GitHubAppClientSecret == "" && c.SecretIDs[SecretGitHubApp] == "" {
		problems = append(problems, "GITHUB_APP_CLIENT_ID needs its secret: the App secret's client_secret (GITHUB_APP_SECRET_ARN) or, locally, GITHUB_APP_CLIENT_SECRET")
	}
	if c.GitHubAPIURL != "" && !strings.HasPrefix(c.GitHubAPIURL, "http://") && !strings.HasPrefix(c.GitHubAPIURL, "https://") {
		problems = append(problems, fmt.Sprintf("GITHUB_API_URL must be an http(s) address, got %q", c.GitHubAPIURL))
	}
	c.GitHubWebURL = GitHubWebURLOf(c.GitHubAPIURL)
	switch v := getenv("WEBHOOK_INTERNAL_NETWORKS"); v {
	case "", "refuse":
	case "allow":
		c.WebhookInternalNetworks = true
	default:
		problems = append(problems, fmt.Sprintf("WEBHOOK_INTERNAL_NETWORKS must be allow or refuse, got %q", v))
	}
	c.MergeQueueTickPageSize = 25
	if v := getenv("MERGE_QUEUE_PAGE_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			problems = append(problems, fmt.Sprintf("MERGE_QUEUE_PAGE_SIZE must be from 1 to 100, got %q", v))
		}
		c.MergeQueueTickPageSize = n
	}
	num := func(name, def string, bits int) float64 {
		v, err := strconv.ParseFloat(or(getenv(name), def), bits)
		if err != nil || v < 0 {
			problems = append(problems, fmt.Sprintf("%s must be a number ≥ 0, got %q", name, getenv(name)))
		}
		return v
	}
	c.RateLimit = num("RATE_LIMIT_RPS", "100", 64)
	c.RateBurst = int(num("RATE_LIMIT_BURST", "200", 64))
	c.AuthCacheTTL = time.Duration(num("AUTH_CACHE_SECONDS", "30", 64) * float64(time.Second))
	if c.Region == "" && (c.DynamoEndpoint != "" || c.S3Endpoint != "" || c.SecretsEndpoint != "") {
		c.Region = "us-east-1"
	}
	if c.EnumCase != "upper" && c.EnumCase != "lower" {
		problems = append(problems, fmt.Sprintf("ENUM_CASE must be upper or lower, got %q", c.EnumCase))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		problems = append(problems, fmt.Sprintf("LOG_LEVEL must be debug, info, warn or error, got %q", c.LogLevel))
	}
	if c.RateLimit > 0 && c.RateBurst < 1 {
		problems = append(problems, "RATE_LIMIT_BURST must be at least 1 when RATE_LIMIT_RPS is set")
	}
	if !strings.HasPrefix(c.PublicAppURL, "http://") && !strings.HasPrefix(c.PublicAppURL, "https://") {
		problems = append(problems, fmt.Sprintf("PUBLIC_APP_URL must be an http(s) address, got %q", c.PublicAppURL))
	}
	if len(problems) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(problems, "; "))
	}
	return c, nil
}

// GitHubWebURLOf is the web address of the GitHub whose REST API is at
// apiURL: https://github.com for api.github.com (or none); a GitHub
// Enterprise Server's host without its /api/v3; a GitHub Enterprise Cloud
// host without its "api." (api.acme.ghe.com serves acme.ghe.com); any
// other server (a test server) its own address, which serves both.
func GitHubWebURLOf(apiURL string) string {
	u, err := url.Parse(apiURL)
	if err != nil || u.Host == "" || strings.EqualFold(u.Hostname(), "api.github.com") {
		return "https://github.com"
	}
	host := u.Host
	if strings.TrimSuffix(u.Path, "/") == "" && strings.HasSuffix(strings.ToLower(u.Hostname()), ".ghe.com") {
		if len(host) > 4 && strings.EqualFold(host[:4], "api.") {
			host = host[4:]
		}
	}
	return u.Scheme + "://" + host
}

// EnterpriseHost is the GitHub Enterprise host GITHUB_API_URL names, ""
// for github.com's API (or none): the host of its web address, which is
// the host a repository's URL (and so a request's repo.host) names; for
// GHE.com that is acme.ghe.com, not the API's api.acme.ghe.com.
func EnterpriseHost(apiURL string) string {
	u, err := url.Parse(GitHubWebURLOf(apiURL))
	if err != nil || strings.EqualFold(u.Hostname(), "github.com") {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
