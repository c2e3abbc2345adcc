package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

func newKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// appFixture serves acme/app from a sim that knows one App (id 42,
// installation 7) whose public key is pub.
func appFixture(t *testing.T, pub *rsa.PublicKey) (*githubsim.Server, *testkit.Clock, string) {
	t.Helper()
	clk := newClock()
	sim, err := githubsim.New(t.TempDir(), githubsim.Options{
		Now: clk.Now,
		App: &githubsim.App{ID: 42, PublicKey: pub, InstallationID: 7, TokenTTL: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	base, err := sim.CreateRepo(fullName, "main")
	if err != nil {
		t.Fatal(err)
	}
	return sim, clk, base
}

func TestAppAuthExchangesAndCachesInstallationTokens(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	sim, clk, base := appFixture(t, &key.PublicKey)
	c, err := github.New(github.Config{BaseURL: sim.URL(), App: &github.AppCredentials{AppID: 42, PrivateKey: key}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	head := func() {
		t.Helper()
		if sha, err := c.BranchHead(ctx, repo, "main"); err != nil || sha != base {
			t.Fatalf("BranchHead: %s, %v", sha, err)
		}
	}
	counts := func() (int, int) {
		return sim.RequestCount("GET", "/repos/acme/app/installation"), sim.RequestCount("POST", "/app/installations/7/access_tokens")
	}

	for range 3 {
		head()
	}
	if inst, tok := counts(); inst != 1 || tok != 1 {
		t.Errorf("after 3 calls: %d installation lookups, %d token exchanges; want 1, 1", inst, tok)
	}
	// 54 minutes in, the token has 6 minutes left: still used.
	clk.Advance(54 * time.Minute)
	head()
	if _, tok := counts(); tok != 1 {
		t.Errorf("token renewed %d times with 6 minutes left", tok-1)
	}
	// 56 minutes in, within the 5-minute margin: renewed, installation not looked up again.
	clk.Advance(2 * time.Minute)
	head()
	if inst, tok := counts(); inst != 1 || tok != 2 {
		t.Errorf("near expiry: %d installation lookups, %d token exchanges; want 1, 2", inst, tok)
	}
}

func TestAppAuthWithWrongKeyIsRefused(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	sim, clk, _ := appFixture(t, &key.PublicKey)
	c, err := github.New(github.Config{BaseURL: sim.URL(), App: &github.AppCredentials{AppID: 42, PrivateKey: newKey(t)}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.BranchHead(context.Background(), repo, "main")
	if err == nil {
		t.Fatal("a JWT signed by another key was accepted")
	}
	if retry, _ := github.Retryable(err); retry {
		t.Errorf("bad credentials are retryable: %v", err)
	}
	if n := sim.RequestCount("POST", "/app/"); n != 0 {
		t.Errorf("%d token exchanges after the installation lookup failed", n)
	}
}

func TestParsePrivateKey(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"pkcs1": {Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)},
		"pkcs8": {Type: "PRIVATE KEY", Bytes: pkcs8},
	} {
		got, err := github.ParsePrivateKey(pem.EncodeToMemory(block))
		if err != nil || !got.Equal(key) {
			t.Errorf("%s: got %v, %v", name, got != nil, err)
		}
	}
	if _, err := github.ParsePrivateKey([]byte("not a key")); err == nil {
		t.Error("garbage parsed as a key")
	}
}
