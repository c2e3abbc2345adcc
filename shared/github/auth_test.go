package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
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

// TestEscapedKeyAndAppSecret: a key pasted with \n escapes (as sam deploy
// --parameter-overrides or a hand-written JSON string deliver it) is the
// same key, in the App's secret as JSON or as a bare PEM with the id apart.
func TestEscapedKeyAndAppSecret(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	escaped := strings.ReplaceAll(pemText, "\n", `\n`)
	crlf := strings.ReplaceAll(pemText, "\n", `\r\n`)
	for name, text := range map[string]string{"escaped": escaped, "escaped crlf": crlf, "plain": pemText} {
		if got, err := github.ParsePrivateKey([]byte(text)); err != nil || !got.Equal(key) {
			t.Errorf("%s key: %v", name, err)
		}
	}
	js, _ := json.Marshal(github.AppSecret{AppID: 42, PrivateKey: escaped, ClientID: "Iv1.x"})
	if c, err := github.ParseAppSecret(js, 0); err != nil || c.AppID != 42 || !c.PrivateKey.Equal(key) {
		t.Errorf("JSON secret: %+v %v", c, err)
	}
	if c, err := github.ParseAppSecret([]byte(pemText), 7); err != nil || c.AppID != 7 {
		t.Errorf("bare PEM with the id apart: %+v %v", c, err)
	}
	for name, bad := range map[string]string{"empty JSON": `{}`, "no key": `{"app_id":1}`, "bare PEM without an id": pemText, "not JSON": `{"app_id":`} {
		id := int64(0)
		if _, err := github.ParseAppSecret([]byte(bad), id); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// TestAppSourceRenewsAfterARefusedJWT: when GitHub refuses the JWT (the
// App's key was rotated), the next call asks the source for fresh
// credentials, and succeeds with them.
func TestAppSourceRenewsAfterARefusedJWT(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	sim, clk, base := appFixture(t, &key.PublicKey)
	current := newKey(t) // the copy still holds a key GitHub no longer takes
	var renewals int
	source := func(_ context.Context, renew bool) (github.AppCredentials, error) {
		if renew {
			renewals++
			current = key
		}
		return github.AppCredentials{AppID: 42, PrivateKey: current}, nil
	}
	c, err := github.New(github.Config{BaseURL: sim.URL(), AppSource: source, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.BranchHead(ctx, repo, "main"); err == nil {
		t.Fatal("a JWT of the old key was accepted")
	}
	if sha, err := c.BranchHead(ctx, repo, "main"); err != nil || sha != base || renewals != 1 {
		t.Errorf("after the refusal: %s %v, %d renewals", sha, err, renewals)
	}
}
