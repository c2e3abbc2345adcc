package githubsim_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

const fullName = "acme/app"

func fixedNow() time.Time { return time.Date(2026, 7, 23, 1, 32, 50, 0, time.UTC) }

func newSim(t *testing.T, opts githubsim.Options) *githubsim.Server {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	s, err := githubsim.New(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.CreateRepo(fullName, "main"); err != nil {
		t.Fatal(err)
	}
	return s
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

type answer struct {
	Status int `json:"status"`
	Body   any `json:"body"`
}

// call sends one request and returns its status and JSON body, with the
// server's random address replaced by http://sim so goldens are stable.
func call(t *testing.T, s *githubsim.Server, method, path, body string, header ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{Status: resp.StatusCode}
	raw = bytes.ReplaceAll(raw, []byte(s.URL()), []byte("http://sim"))
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &a.Body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %s", method, path, raw)
		}
	}
	return a
}

// golden compares got with testdata/name.json as JSON.
func golden(t *testing.T, name string, got answer) {
	t.Helper()
	testkit.GoldenJSON(t, filepath.Join("testdata", name+".json"), got)
}

// The wire shapes, checked against golden bodies written after GitHub's
// REST reference (field names, statuses, error messages). Clock and content
// are fixed, so even the shas are stable.
func TestWireShapes(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	m := must[string](t)
	head := m(s.CommitFile(fullName, "feature", "a.txt", "a\n", "Add a"))
	m(s.CommitFile(fullName, "other", "a.txt", "different\n", "Add a differently"))
	n := must[int](t)(s.OpenPR(fullName, "feature", "main", "Add a", "octocat"))
	if n != 1 {
		t.Fatalf("first pull request is #%d", n)
	}
	if err := s.SetStatus(fullName, head, "ci/test", "success", "Tests passed", "https://ci.example/1"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCheckRun(fullName, head, "build", "completed", "success", "https://ci.example/build"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRequiredStatusChecks(fullName, "main", []string{"ci/test"}); err != nil {
		t.Fatal(err)
	}
	base := m(s.BranchHead(fullName, "main"))

	golden(t, "pull_get", call(t, s, "GET", "/repos/acme/app/pulls/1", ""))
	golden(t, "pull_get_404", call(t, s, "GET", "/repos/acme/app/pulls/9", ""))
	golden(t, "ref_get", call(t, s, "GET", "/repos/acme/app/git/ref/heads/feature", ""))
	golden(t, "ref_get_404", call(t, s, "GET", "/repos/acme/app/git/ref/heads/nope", ""))
	golden(t, "ref_create", call(t, s, "POST", "/repos/acme/app/git/refs", `{"ref":"refs/heads/trunk-temp/pr-1/u","sha":"`+base+`"}`))
	golden(t, "ref_create_422_exists", call(t, s, "POST", "/repos/acme/app/git/refs", `{"ref":"refs/heads/trunk-temp/pr-1/u","sha":"`+base+`"}`))
	golden(t, "merges_201", call(t, s, "POST", "/repos/acme/app/merges", `{"base":"trunk-temp/pr-1/u","head":"`+head+`","commit_message":"Merge #1"}`))
	golden(t, "merges_204", call(t, s, "POST", "/repos/acme/app/merges", `{"base":"trunk-temp/pr-1/u","head":"`+head+`"}`))
	golden(t, "merges_409_conflict", call(t, s, "POST", "/repos/acme/app/merges", `{"base":"trunk-temp/pr-1/u","head":"other"}`))
	golden(t, "merges_404_base", call(t, s, "POST", "/repos/acme/app/merges", `{"base":"nope","head":"other"}`))
	golden(t, "ref_delete_204", call(t, s, "DELETE", "/repos/acme/app/git/refs/heads/trunk-temp/pr-1/u", ""))
	golden(t, "ref_delete_422", call(t, s, "DELETE", "/repos/acme/app/git/refs/heads/trunk-temp/pr-1/u", ""))
	golden(t, "combined_status", call(t, s, "GET", "/repos/acme/app/commits/"+head+"/status", ""))
	golden(t, "check_runs", call(t, s, "GET", "/repos/acme/app/commits/"+head+"/check-runs", ""))
	golden(t, "required_status_checks", call(t, s, "GET", "/repos/acme/app/branches/main/protection/required_status_checks", ""))
	golden(t, "required_status_checks_404", call(t, s, "GET", "/repos/acme/app/branches/feature/protection/required_status_checks", ""))
	golden(t, "status_create", call(t, s, "POST", "/repos/acme/app/statuses/"+head, `{"state":"pending","context":"Trunk Merge Queue (main)","description":"Testing"}`))
	golden(t, "pull_merge_409_head_modified", call(t, s, "PUT", "/repos/acme/app/pulls/1/merge", `{"sha":"`+base+`","merge_method":"squash"}`))
	golden(t, "pull_merge_200", call(t, s, "PUT", "/repos/acme/app/pulls/1/merge", `{"sha":"`+head+`","merge_method":"squash"}`))
	golden(t, "pull_merge_405_merged", call(t, s, "PUT", "/repos/acme/app/pulls/1/merge", `{"sha":"`+head+`","merge_method":"squash"}`))
	golden(t, "pull_get_merged", call(t, s, "GET", "/repos/acme/app/pulls/1", ""))
}

func TestRebaseConflictIsNotMergeable(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	m := must[string](t)
	m(s.CommitFile(fullName, "feature", "a.txt", "one\n", "First"))
	m(s.CommitFile(fullName, "feature", "b.txt", "two\n", "Second"))
	n := must[int](t)(s.OpenPR(fullName, "feature", "main", "Two", "octocat"))
	before := m(s.CommitFile(fullName, "main", "b.txt", "main's\n", "Main takes b"))

	got := call(t, s, "PUT", "/repos/acme/app/pulls/1/merge", `{"merge_method":"rebase"}`)
	if got.Status != 405 {
		t.Errorf("status %d, want 405", got.Status)
	}
	if after := m(s.BranchHead(fullName, "main")); after != before {
		t.Errorf("main moved to %s", after)
	}
	if pr := must[githubsim.PullRequest](t)(s.PR(fullName, n)); pr.Merged {
		t.Error("pull request marked merged")
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{Token: "tok"})
	cases := []struct {
		name   string
		header []string
		want   int
	}{
		{"no token", nil, 401},
		{"wrong token", []string{"Authorization", "Bearer nope"}, 401},
		{"bearer", []string{"Authorization", "Bearer tok"}, 200},
		{"token scheme", []string{"Authorization", "token tok"}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, s, "GET", "/repos/acme/app/git/ref/heads/main", "", tc.header...)
			if got.Status != tc.want {
				t.Errorf("status %d, want %d (%v)", got.Status, tc.want, got.Body)
			}
		})
	}
}

func TestAppJWTVerification(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, githubsim.Options{App: &githubsim.App{ID: 42, PublicKey: &key.PublicKey, InstallationID: 7}})
	jwt := func(id int64, k *rsa.PrivateKey, at time.Time) string {
		j, err := github.SignAppJWT(id, k, at)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	cases := []struct {
		name string
		jwt  string
		want int
	}{
		{"valid", jwt(42, key, fixedNow()), 200},
		{"other key", jwt(42, other, fixedNow()), 401},
		{"other app", jwt(43, key, fixedNow()), 401},
		{"expired", jwt(42, key, fixedNow().Add(-20*time.Minute)), 401},
		{"issued in the future", jwt(42, key, fixedNow().Add(5*time.Minute)), 401},
		{"not a jwt", "abc", 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, s, "GET", "/repos/acme/app/installation", "", "Authorization", "Bearer "+tc.jwt)
			if got.Status != tc.want {
				t.Errorf("status %d, want %d (%v)", got.Status, tc.want, got.Body)
			}
		})
	}
	// A valid JWT exchanges for a token the REST endpoints accept.
	tok := call(t, s, "POST", "/app/installations/7/access_tokens", "", "Authorization", "Bearer "+jwt(42, key, fixedNow()))
	body, _ := tok.Body.(map[string]any)
	if tok.Status != 201 || body["expires_at"] != "2026-07-23T02:32:50Z" {
		t.Fatalf("token exchange: %d %v", tok.Status, tok.Body)
	}
	token, _ := body["token"].(string)
	if got := call(t, s, "GET", "/repos/acme/app/git/ref/heads/main", "", "Authorization", "Bearer "+token); got.Status != 200 {
		t.Errorf("installation token refused: %d", got.Status)
	}
	if got := call(t, s, "POST", "/app/installations/8/access_tokens", "", "Authorization", "Bearer "+jwt(42, key, fixedNow())); got.Status != 404 {
		t.Errorf("unknown installation: %d, want 404", got.Status)
	}
}

func TestFaultsSkipThenCountThenClear(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	s.InjectFault(githubsim.Fault{Method: "GET", PathPrefix: "/repos/acme/app/git/ref/", Kind: githubsim.FaultServerError, Skip: 1, Times: 2})
	var got []int
	for range 5 {
		got = append(got, call(t, s, "GET", "/repos/acme/app/git/ref/heads/main", "").Status)
	}
	// Another method or path is never faulted.
	got = append(got, call(t, s, "GET", "/repos/acme/app/pulls/1", "").Status)
	if diff := cmp.Diff(got, []int{200, 500, 500, 200, 200, 404}); diff != "" {
		t.Errorf("statuses (-got +want):\n%s", diff)
	}
	if n := s.RequestCount("GET", "/repos/acme/app/git/ref/"); n != 5 {
		t.Errorf("RequestCount = %d, want 5", n)
	}
}

func TestDeliverSigns(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{NewID: func() string { return "delivery-1" }})
	var hdr http.Header
	var body []byte
	rcv := newReceiver(t, func(r *http.Request, b []byte) { hdr, body = r.Header.Clone(), b })
	status, err := s.Deliver(context.Background(), rcv, "sec", "ping", map[string]string{"zen": "Keep it logically awesome."})
	if err != nil || status != 200 {
		t.Fatalf("Deliver: %d, %v", status, err)
	}
	if !github.VerifySignature([]byte("sec"), body, hdr.Get("X-Hub-Signature-256")) {
		t.Error("signature does not verify")
	}
	if hdr.Get("X-GitHub-Event") != "ping" || hdr.Get("X-GitHub-Delivery") != "delivery-1" {
		t.Errorf("headers: %v", hdr)
	}
	want := []githubsim.Delivery{{ID: "delivery-1", Event: "ping", Status: 200}}
	if diff := cmp.Diff(s.Deliveries(), want); diff != "" {
		t.Errorf("deliveries (-got +want):\n%s", diff)
	}
}

func newReceiver(t *testing.T, fn func(*http.Request, []byte)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fn(r, b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Webhooks are delivered outside the server lock: a receiver that reads the
// server back (as the queue's webhook handler does) must not deadlock, and
// sees the state the event announces.
func TestEmittedWebhooksAllowCallbacks(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	var heads []string
	url := newReceiver(t, func(r *http.Request, b []byte) {
		if r.Header.Get("X-GitHub-Event") != "pull_request" {
			return
		}
		pr, err := s.PR(fullName, 1)
		if err != nil {
			t.Error(err)
			return
		}
		heads = append(heads, pr.HeadSHA)
	})
	s.SetWebhook(url, "sec")
	sha := must[string](t)(s.CommitFile(fullName, "feature", "a.txt", "a\n", "A"))
	must[int](t)(s.OpenPR(fullName, "feature", "main", "A", "octocat"))
	s.Flush()
	if diff := cmp.Diff(heads, []string{sha}); diff != "" {
		t.Errorf("heads seen by the receiver (-got +want):\n%s", diff)
	}
	var events []string
	for _, d := range s.Deliveries() {
		events = append(events, d.Event+"/"+d.Action)
	}
	if diff := cmp.Diff(events, []string{"push/", "pull_request/opened"}); diff != "" {
		t.Errorf("deliveries (-got +want):\n%s", diff)
	}
}
