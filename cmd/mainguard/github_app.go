package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/github"
)

// defaultSetupAddr is where `github app-setup` listens for GitHub's
// redirect, and so the redirect_url `github app-manifest` prints.
const defaultSetupAddr = "127.0.0.1:8765"

// appFlags are the flags both GitHub App commands take.
type appFlags struct {
	url, org, name, githubURL, apiURL *string
}

func newAppFlags(f *flags, e *env) appFlags {
	api := e.getenv("GITHUB_API_URL")
	a := appFlags{
		url:       f.String("url", "", "the deployment's address: the AppUrl output of the stack (https://…/), or a custom domain"),
		org:       f.String("org", "", "the GitHub organization that owns the App (default: your personal account)"),
		name:      f.String("name", "", "the App's name, unique on GitHub, at most 34 characters (default mainguard and the deployment's host)"),
		githubURL: f.String("github-url", config.GitHubWebURLOf(api), "GitHub's web address (a GitHub Enterprise host: https://HOST)"),
		apiURL:    f.String("github-api-url", api, "GitHub's API root (default $GITHUB_API_URL, else api.github.com)"),
	}
	f.require("url")
	return a
}

func (a appFlags) manifest(redirect string) (github.Manifest, error) {
	m, err := github.NewManifest(*a.url, redirect, *a.name)
	if err != nil {
		return m, usageError(err.Error())
	}
	return m, nil
}

// githubAppManifest is `mainguard github app-manifest`.
func githubAppManifest(e *env, args []string) error {
	f := newFlags(cmdOf("github app-manifest"))
	a := newAppFlags(f, e)
	redirect := f.String("redirect", "http://"+defaultSetupAddr+"/callback", "where GitHub sends the browser back with the code (what `github app-setup` listens on)")
	asJSON := f.Bool("json", false, "print the manifest alone, as JSON")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	m, err := a.manifest(*redirect)
	if err != nil {
		return err
	}
	out, _ := json.MarshalIndent(m, "", "  ")
	if *asJSON {
		fmt.Fprintf(e.stdout, "%s\n", out)
		return nil
	}
	fmt.Fprintf(e.stdout, "GitHub App manifest of the deployment at %s:\n\n%s\n\n", strings.TrimRight(*a.url, "/"), out)
	fmt.Fprintf(e.stdout, "Create the App by posting it as the form field \"manifest\" to\n  %s\n", github.NewAppURL(*a.githubURL, *a.org, newState()))
	fmt.Fprintf(e.stdout, "GitHub then sends the browser to %s with a code, which `mainguard github app-setup --code CODE` exchanges\n"+
		"and stores; `mainguard github app-setup` alone does all of it from a page it serves.\n", *redirect)
	return nil
}

// githubAppSetup is `mainguard github app-setup`.
func githubAppSetup(e *env, args []string) error {
	f := newFlags(cmdOf("github app-setup"))
	a := newAppFlags(f, e)
	stack := f.String("stack", "mainguard", "the stack whose secrets STACK/github-app and STACK/github-webhook receive the App (sam deploy's stack name)")
	region := f.String("region", e.getenv("AWS_REGION"), "the stack's AWS region (default $AWS_REGION, else your profile's)")
	listen := f.String("listen", defaultSetupAddr, "the local address of the setup page and of GitHub's redirect")
	code := f.String("code", "", "a code GitHub already gave (the redirect of a manifest posted by hand): exchange and store it, serve nothing")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	sm, err := secretsClient(e, *region)
	if err != nil {
		return err
	}
	appID, hookID := *stack+"/"+config.SecretGitHubApp, *stack+"/"+config.SecretGitHubWebhook
	// Before GitHub creates anything: an App whose key has nowhere to go is
	// one to delete by hand.
	for _, id := range []string{appID, hookID} {
		if _, err := sm.DescribeSecret(e.ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(id)}); err != nil {
			return fmt.Errorf("the secret %s cannot be read (%s): deploy the stack first (sam deploy), or name it with --stack and --region", id, awsCode(err))
		}
	}
	var conv github.AppConversion
	if *code != "" {
		if conv, err = github.ConvertManifest(e.ctx, nil, *a.apiURL, *code); err != nil {
			return err
		}
	} else if conv, err = a.browserFlow(e, *listen); err != nil {
		return err
	}
	secret, _ := json.Marshal(conv.Secret())
	if _, err := sm.PutSecretValue(e.ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(appID), SecretString: aws.String(string(secret))}); err != nil {
		return fmt.Errorf("the App %s (id %d) was created, but its key could not be stored in %s (%s); "+
			"generate a new private key in the App's settings and store it with `aws secretsmanager put-secret-value`", conv.Slug, conv.ID, appID, awsCode(err))
	}
	if _, err := sm.PutSecretValue(e.ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(hookID), SecretString: aws.String(conv.WebhookSecret)}); err != nil {
		return fmt.Errorf("the App %s (id %d) is stored, but its webhook secret could not be stored in %s (%s)", conv.Slug, conv.ID, hookID, awsCode(err))
	}
	fmt.Fprintf(e.stdout, "GitHub App %s (id %d) created; its id, key and OAuth client secret are in %s, its webhook secret in %s.\n", conv.Name, conv.ID, appID, hookID)
	fmt.Fprintf(e.stdout, "For \"Sign in with GitHub\", deploy with GitHubAppClientId=%s.\n", conv.ClientID)
	fmt.Fprintf(e.stdout, "Install it on the repositories the merge queue serves: %s/installations/new\n", strings.TrimRight(conv.HTMLURL, "/"))
	return nil
}

// browserFlow serves the page that posts the manifest to GitHub and waits
// for GitHub's redirect with the code (GitHub takes it for an hour).
func (a appFlags) browserFlow(e *env, listen string) (github.AppConversion, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return github.AppConversion{}, fmt.Errorf("cannot listen on %s for GitHub's redirect: %w (choose another with --listen)", listen, err)
	}
	base := "http://" + ln.Addr().String()
	m, err := a.manifest(base + "/callback")
	if err != nil {
		ln.Close()
		return github.AppConversion{}, err
	}
	manifest, _ := json.Marshal(m)
	state := newState()
	type result struct {
		conv github.AppConversion
		err  error
	}
	done := make(chan result, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = setupPage.Execute(w, map[string]string{"Action": github.NewAppURL(*a.githubURL, *a.org, state), "Manifest": string(manifest), "Name": m.Name})
	})
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("state") != state {
			http.Error(w, "this redirect does not come from the App this setup asked GitHub for (state differs)", http.StatusBadRequest)
			return
		}
		conv, err := github.ConvertManifest(r.Context(), nil, *a.apiURL, r.URL.Query().Get("code"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
		} else {
			fmt.Fprintf(w, "The GitHub App %s is created; mainguard github app-setup stores it now. You may close this page.\n", conv.Name)
		}
		select {
		case done <- result{conv, err}:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	// Shutdown, not Close: the callback hands its result over before its
	// answer is written, and Close would cut the browser's connection
	// under it (a browser, or Go's client, then retries on a fresh
	// connection and finds nothing listening).
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	fmt.Fprintf(e.stdout, "Open %s/ in a browser signed in to GitHub%s and press \"Create GitHub App\" (listening for GitHub's redirect).\n",
		base, orgNote(*a.org))
	ctx, cancel := context.WithTimeout(e.ctx, time.Hour)
	defer cancel()
	select {
	case r := <-done:
		return r.conv, r.err
	case <-ctx.Done():
		return github.AppConversion{}, errors.New("no redirect from GitHub within the hour GitHub gives a manifest's code; run app-setup again")
	}
}

func orgNote(org string) string {
	if org == "" {
		return ""
	}
	return " as an owner of " + org
}

// setupPage posts the manifest to GitHub, as GitHub's documentation shows:
// a form with the field manifest, sent at once.
var setupPage = template.Must(template.New("setup").Parse(`<!doctype html>
<title>Create the GitHub App {{.Name}}</title>
<form id="create" action="{{.Action}}" method="post">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<p>GitHub will ask you to confirm the App's name, then send you back here.</p>
<button type="submit">Create the GitHub App on GitHub</button>
</form>
<script>document.getElementById("create").submit()</script>
`))

// secretsClient is Secrets Manager for a person's machine: the SDK's
// standard chain (profile, SSO), or the stand-in SECRETSMANAGER_ENDPOINT
// names with the credentials of the environment (tests).
func secretsClient(e *env, region string) (*secretsmanager.Client, error) {
	if endpoint := e.getenv("SECRETSMANAGER_ENDPOINT"); endpoint != "" {
		if region == "" {
			region = "us-east-1"
		}
		return secretsmanager.New(secretsmanager.Options{
			Region: region, BaseEndpoint: aws.String(endpoint),
			Credentials: credentials.NewStaticCredentialsProvider(e.getenv("AWS_ACCESS_KEY_ID"), e.getenv("AWS_SECRET_ACCESS_KEY"), e.getenv("AWS_SESSION_TOKEN")),
		}), nil
	}
	var opts []func(*awsconfig.LoadOptions) error
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(e.ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("aws configuration: %w", err)
	}
	return secretsmanager.NewFromConfig(cfg), nil
}

// awsCode is an AWS error's code, or the error when it has none.
func awsCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return err.Error()
}

func newState() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
