package secrets_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/secrets"
	"github.com/mainguard/mainguard/shared/secrets/secretsim"
)

// setup is a stand-in with one secret, readable by the key AKIDFN, and a
// Manager on it with a clock the test moves.
func setup(t *testing.T) (*secretsim.Server, *secrets.Manager, string, *time.Time) {
	t.Helper()
	sim := secretsim.New("")
	url := sim.Start(t)
	arn := sim.CreateSecret("stack/page-token", "", "v1")
	sim.AddIdentity(secretsim.Identity{AccessKey: "AKIDFN", SecretKey: "s"})
	sim.Allow("AKIDFN", "secretsmanager:GetSecretValue", arn)
	now := time.Now()
	m := &secrets.Manager{
		Now: func() time.Time { return now },
		Client: func() (secrets.API, error) {
			return secretsmanager.New(secretsmanager.Options{Region: "us-east-1", BaseEndpoint: aws.String(url),
				Credentials: credentials.NewStaticCredentialsProvider("AKIDFN", "s", "")}), nil
		},
	}
	return sim, m, arn, &now
}

func TestManagerCachesAndFollowsRotation(t *testing.T) {
	t.Parallel()
	sim, m, arn, now := setup(t)
	ctx := context.Background()
	get := func(want string) {
		t.Helper()
		v, err := m.Get(ctx, "page-token", arn)
		if err != nil || string(v) != want {
			t.Fatalf("Get: %q %v, want %q", v, err, want)
		}
	}
	calls := func(want int) {
		t.Helper()
		if n := sim.Calls("AKIDFN", "GetSecretValue"); n != want {
			t.Fatalf("%d GetSecretValue calls, want %d", n, want)
		}
	}
	get("v1")
	get("v1")
	calls(1)

	sim.Rotate("stack/page-token", "v2")
	*now = now.Add(secrets.DefaultTTL - time.Second)
	get("v1") // still within the TTL
	calls(1)
	*now = now.Add(2 * time.Second)
	get("v2") // the TTL passed: read again
	calls(2)

	// A failed verification renews at most once per MinAge.
	sim.Rotate("stack/page-token", "v3")
	if v, changed, err := m.Renew(ctx, "page-token", arn); err != nil || changed || string(v) != "v2" {
		t.Fatalf("Renew of a fresh value: %q %v %v", v, changed, err)
	}
	calls(2)
	*now = now.Add(secrets.DefaultMinAge)
	if v, changed, err := m.Renew(ctx, "page-token", arn); err != nil || !changed || string(v) != "v3" {
		t.Fatalf("Renew after MinAge: %q %v %v", v, changed, err)
	}
	*now = now.Add(secrets.DefaultMinAge)
	if _, changed, _ := m.Renew(ctx, "page-token", arn); changed {
		t.Error("Renew with no new version reported a change")
	}
	calls(4)

	// Secrets Manager failing after the TTL keeps the value the copy has.
	sim.DeleteSecret("stack/page-token")
	*now = now.Add(secrets.DefaultTTL)
	get("v3")
}

func TestUnreadableSecretIsUnavailable(t *testing.T) {
	t.Parallel()
	sim, m, _, now := setup(t)
	other := sim.CreateSecret("stack/github-app", "", "{}")
	ctx := context.Background()
	_, err := m.Get(ctx, "github-app", other)
	if errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("an unreadable secret: %v, want unavailable", err)
	}
	msg := errs.MessageOf(err)
	if !strings.Contains(msg, "github-app secret cannot be read (Secrets Manager answered AccessDeniedException)") || strings.Contains(msg, "arn:") {
		t.Errorf("sentence %q", msg)
	}
	// The failure is remembered for DefaultRetry: no request storm.
	before := sim.Requests()
	if _, err := m.Get(ctx, "github-app", other); err == nil || sim.Requests() != before {
		t.Errorf("a second read within the retry time asked again (%d requests, were %d): %v", sim.Requests(), before, err)
	}
	*now = now.Add(secrets.DefaultRetry)
	sim.Allow("AKIDFN", "secretsmanager:GetSecretValue", other)
	if v, err := m.Get(ctx, "github-app", other); err != nil || string(v) != "{}" {
		t.Errorf("once granted: %q %v", v, err)
	}

	_, err = m.Get(ctx, "web-session", "stack/missing")
	if !strings.Contains(errs.MessageOf(err), "AccessDeniedException") {
		t.Errorf("a missing secret the key has no grant for: %v", err)
	}
}
