// Package config owns the service's settings: one struct read once from the
// environment at start, validated, with a clear message when wrong.
package config

import (
	"fmt"
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

	// GitHub, for the merge queue (contract 3.8). Locally a token
	// (GITHUB_TOKEN); deployed a GitHub App: GITHUB_APP_ID with its PEM
	// private key in GITHUB_APP_PRIVATE_KEY, or in the Secrets Manager
	// secret GITHUB_APP_PRIVATE_KEY_SECRET_ARN names.
	GitHubToken            string
	GitHubAppID            int64
	GitHubAppPrivateKey    string
	GitHubAppKeySecretARN  string
	GitHubAPIURL           string // GITHUB_API_URL: GitHub Enterprise or a test server; empty means api.github.com
	GitHubWebhookSecret    string // GITHUB_WEBHOOK_SECRET: verifies POST /github/webhook
	MergeQueueTickPageSize int    // MERGE_QUEUE_PAGE_SIZE: active queues one tick advances (default 25)

	// The GitHub App's OAuth client, for "Sign in with GitHub" in the web
	// app: GITHUB_APP_CLIENT_ID and its secret GITHUB_APP_CLIENT_SECRET
	// (both, with GITHUB_APP_ID); none, and people sign in with tokens.
	GitHubAppClientID     string
	GitHubAppClientSecret string
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
	c.GitHubAppKeySecretARN = getenv("GITHUB_APP_PRIVATE_KEY_SECRET_ARN")
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
	if c.GitHubAppID > 0 && c.GitHubAppPrivateKey == "" && c.GitHubAppKeySecretARN == "" {
		problems = append(problems, "GITHUB_APP_ID needs GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_SECRET_ARN")
	}
	if (c.GitHubAppClientID == "") != (c.GitHubAppClientSecret == "") {
		problems = append(problems, "GITHUB_APP_CLIENT_ID and GITHUB_APP_CLIENT_SECRET go together")
	} else if c.GitHubAppClientID != "" && c.GitHubAppID == 0 {
		problems = append(problems, "GITHUB_APP_CLIENT_ID is the OAuth client of a GitHub App: it needs GITHUB_APP_ID")
	}
	if c.GitHubAPIURL != "" && !strings.HasPrefix(c.GitHubAPIURL, "http://") && !strings.HasPrefix(c.GitHubAPIURL, "https://") {
		problems = append(problems, fmt.Sprintf("GITHUB_API_URL must be an http(s) address, got %q", c.GitHubAPIURL))
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
	if c.Region == "" && (c.DynamoEndpoint != "" || c.S3Endpoint != "") {
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

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
