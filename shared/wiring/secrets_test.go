package wiring

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/secrets/secretsim"
)

// TestFunctionSecrets: a function reads the secrets its configuration
// names from Secrets Manager with its own credentials, and any other is
// unavailable to it, with a sentence, instead of stopping the copy.
func TestFunctionSecrets(t *testing.T) {
	sim := secretsim.New("eu-west-1")
	url := sim.Start(t)
	arn := sim.CreateSecret("stack/page-token", "", "page-key")
	sim.AddIdentity(secretsim.Identity{AccessKey: "AKIDLIST", SecretKey: "list-secret", SessionToken: "tok"})
	sim.Allow("AKIDLIST", "secretsmanager:GetSecretValue", arn)
	lambda := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME": "list-failing-tests", "AWS_REGION": "eu-west-1",
		"AWS_ACCESS_KEY_ID": "AKIDLIST", "AWS_SECRET_ACCESS_KEY": "list-secret", "AWS_SESSION_TOKEN": "tok",
		"PAGE_TOKEN_SECRET_ARN": arn, "SECRETSMANAGER_ENDPOINT": url,
	}
	for k, v := range lambda {
		t.Setenv(k, v)
	}
	cfg, err := config.FromEnv(func(k string) string { return lambda[k] })
	if err != nil {
		t.Fatal(err)
	}
	r := newSecretReader(cfg, nil, time.Now, false)
	ctx := context.Background()
	if v, err := r.Secret(ctx, config.SecretPageToken); err != nil || string(v) != "page-key" {
		t.Fatalf("its own secret: %q %v", v, err)
	}
	if r.HasSecret(config.SecretWebSession) || r.HasSecret(config.SecretGitHubApp) {
		t.Error("secrets it was not given count as configured")
	}
	_, err = r.Secret(ctx, config.SecretWebSession)
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(errs.MessageOf(err), "not given the deployment's web-session secret (WEB_SESSION_SECRET_ARN)") {
		t.Errorf("another secret: %v", err)
	}
}
