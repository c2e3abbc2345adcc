package queueapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit/service"
)

// TestAnotherOrganizationCannotRunAQueueOnARepository is the review's
// probe. acme owns acme/web; squat is another organization of the same
// deployment. squat held a queue on it with a pull request in testing
// (made while it owned the repository, as any organization could before
// ownership existed); once the repository is acme's:
//   - every merge-queue endpoint answers squat 404, the same sentence as for
//     a repository that exists nowhere: create, update (its required
//     statuses off), submit, read and the rest;
//   - squat's queue is not advanced: CI passing on its test branch merges
//     nothing through it;
//   - a comment command on the pull request gets one answer, acme's queue's.
func TestAnotherOrganizationCannotRunAQueueOnARepository(t *testing.T) {
	t.Parallel()
	e := &env{tb: t, Service: service.New(t, service.Options{Start: t0, Repos: []string{repoFull}, Orgs: []string{"acme", "squat"},
		Env: map[string]string{"GITHUB_WEBHOOK_SECRET": webhookSecret}})}
	ctx := context.Background()
	post := func(org, path string, body map[string]any) (int, string) {
		b, _ := json.Marshal(body)
		return e.Post(org, path, b)
	}
	on := func(owner, name string, extra map[string]any) map[string]any {
		m := map[string]any{"repo": map[string]string{"host": "github.com", "owner": owner, "name": name}, "targetBranch": "main"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	// Before: squat's queue on acme/web, PR n in testing.
	if _, err := e.App.Store.ClaimRepo(ctx, "squat", "acme", "web", true); err != nil {
		t.Fatal(err)
	}
	if code, body := post("squat", "createQueue", on("acme", "web", nil)); code != http.StatusOK {
		t.Fatalf("squat's createQueue while it owned the repository: %d %s", code, body)
	}
	n := e.openPR("squatted")
	if code, body := post("squat", "submitPullRequest", on("acme", "web", map[string]any{"pr": map[string]any{"number": n}})); code != http.StatusOK {
		t.Fatalf("squat's submit: %d %s", code, body)
	}
	if _, err := e.App.Store.ClaimRepo(ctx, "acme", "acme", "web", true); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(31 * time.Second) // past every copy's memory of the owner

	const want = "no repository github.com/acme/web in this organization"
	for _, c := range []struct {
		path  string
		extra map[string]any
	}{
		{"createQueue", map[string]any{"targetBranch": "release"}},
		{"updateQueue", map[string]any{"requiredStatuses": []string{}}},
		{"submitPullRequest", map[string]any{"pr": map[string]any{"number": n + 1}}},
		{"getQueue", nil},
		{"getSubmittedPullRequest", map[string]any{"pr": map[string]any{"number": n}}},
		{"listPullRequests", nil},
		{"cancelPullRequest", map[string]any{"pr": map[string]any{"number": n}}},
		{"restartTestsOnPullRequest", map[string]any{"pr": map[string]any{"number": n}}},
		{"setImpactedTargets", map[string]any{"pr": map[string]any{"number": n, "sha": strings.Repeat("ab", 20)}, "impactedTargets": "ALL"}},
		{"deleteQueue", nil},
	} {
		code, body := post("squat", c.path, on("acme", "web", c.extra))
		if code != http.StatusNotFound || body != want {
			t.Errorf("squat %s on acme/web: %d %q, want 404 %q", c.path, code, body, want)
		}
		absent, absentBody := post("squat", c.path, on("nobody", "nowhere", c.extra))
		if absent != code || strings.ReplaceAll(absentBody, "nobody/nowhere", "acme/web") != body {
			t.Errorf("squat %s: acme's repository answers %d %q, one that exists nowhere %d %q", c.path, code, body, absent, absentBody)
		}
	}

	// acme's own queue on the branch; CI passes on squat's test branch.
	e.ok("createQueue", q(nil), nil)
	for range 3 {
		e.ci()
		e.tick()
	}
	prs, err := e.Sim.PullRequests(repoFull)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prs {
		if p.Number == n && (p.Merged || p.State != "open") {
			t.Errorf("PR %d merged through squat's queue: %+v", n, p)
		}
	}

	// One comment, one answer: acme's queue, which never had the PR.
	e.hooks()
	before := len(e.replies(n))
	e.comment(n, "maint", "/mainguard status")
	if r := e.replies(n)[before:]; len(r) != 1 || !strings.Contains(r[0], "was never submitted to the merge queue") {
		t.Errorf("a status command on acme/web: replies %q, want acme's one", r)
	}
}
