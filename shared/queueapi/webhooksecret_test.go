package queueapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/queueapi"
	"github.com/mainguard/mainguard/shared/secrets"
	"github.com/mainguard/mainguard/shared/secrets/secretsim"
)

// managerReader reads one secret, the webhook's, through a secrets.Manager.
type managerReader struct {
	m  *secrets.Manager
	id string
}

func (r managerReader) HasSecret(name string) bool { return name == config.SecretGitHubWebhook }
func (r managerReader) Secret(ctx context.Context, name string) ([]byte, error) {
	return r.m.Get(ctx, name, r.id)
}
func (r managerReader) RenewSecret(ctx context.Context, name string) ([]byte, bool, error) {
	return r.m.Renew(ctx, name, r.id)
}

// TestWebhookSecretRotation: after the webhook secret is rotated, a
// delivery signed with the new one verifies once the copy may read the
// secret again (secrets.DefaultMinAge), not before; a wrong signature costs
// at most one read per that time; an unreadable secret is 503, not 401.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	sim := secretsim.New("")
	url := sim.Start(t)
	arn := sim.CreateSecret("stack/github-webhook", "", "old-secret")
	sim.AddIdentity(secretsim.Identity{AccessKey: "AKIDHOOK", SecretKey: "s"})
	sim.Allow("AKIDHOOK", "secretsmanager:GetSecretValue", arn)
	now := time.Now()
	m := &secrets.Manager{Now: func() time.Time { return now }, Client: func() (secrets.API, error) {
		return secretsmanager.New(secretsmanager.Options{Region: "us-east-1", BaseEndpoint: aws.String(url),
			Credentials: credentials.NewStaticCredentialsProvider("AKIDHOOK", "s", "")}), nil
	}}
	db, table := storetest.NewTable(t) // each delivery id is counted once
	h := (&queueapi.Handlers{Secrets: managerReader{m, arn}, Now: time.Now, Store: store.New(db, table, time.Now)}).GitHubWebhook()
	body := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
	deliver := func(secret string) int {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		req := httptest.NewRequest(http.MethodPost, "/v1/github/webhook", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "ping")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("d-%d", time.Now().UnixNano()))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	if code := deliver("old-secret"); code != 200 {
		t.Fatalf("signed with the secret: %d", code)
	}
	sim.Rotate("stack/github-webhook", "new-secret")
	for range 5 {
		if code := deliver("new-secret"); code != 401 {
			t.Fatalf("before the copy may read again: %d, want 401", code)
		}
	}
	if n := sim.Calls("AKIDHOOK", "GetSecretValue"); n != 1 {
		t.Errorf("%d reads for 5 failed signatures within MinAge, want 1 (the first)", n)
	}
	now = now.Add(secrets.DefaultMinAge)
	if code := deliver("new-secret"); code != 200 {
		t.Errorf("signed with the rotated secret: %d, want 200", code)
	}
	if code := deliver("forged"); code != 401 {
		t.Errorf("forged: %d", code)
	}

	// An unreadable secret (read again after the TTL) keeps the copy's
	// value; one never read is 503.
	sim2 := secretsim.New("")
	url2 := sim2.Start(t)
	m2 := &secrets.Manager{Client: func() (secrets.API, error) {
		return secretsmanager.New(secretsmanager.Options{Region: "us-east-1", BaseEndpoint: aws.String(url2),
			Credentials: credentials.NewStaticCredentialsProvider("AKIDNOBODY", "s", "")}), nil
	}}
	h = (&queueapi.Handlers{Secrets: managerReader{m2, "stack/github-webhook"}, Now: time.Now}).GitHubWebhook()
	if code := deliver("old-secret"); code != http.StatusServiceUnavailable {
		t.Errorf("an unreadable secret: %d, want 503", code)
	}
}
