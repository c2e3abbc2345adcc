package githubsim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// The wire shapes of the merge queue's GitHub surface (comments, labels,
// reactions, collaborator permissions, opening and closing pull requests)
// and of the webhooks they cause, against golden bodies written after
// GitHub's REST and webhook references.
func TestIssueWireShapes(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{NewID: func() string { return "d" }})
	type hook struct {
		Event   string `json:"event"`
		Payload any    `json:"payload"`
	}
	var hooks []hook
	rcv := newReceiver(t, func(r *http.Request, b []byte) {
		var p any
		if err := json.Unmarshal(bytes.ReplaceAll(b, []byte(s.URL()), []byte("http://sim")), &p); err != nil {
			t.Error(err)
		}
		if ev := r.Header.Get("X-GitHub-Event"); ev == "issue_comment" || ev == "pull_request" {
			hooks = append(hooks, hook{ev, p})
		}
	})
	must[string](t)(s.CommitFile(fullName, "feature", "a.txt", "a\n", "Add a"))
	must[string](t)(s.CommitFile(fullName, "trunk-merge/pr-1/u", "a.txt", "a\n", "Test"))
	n := must[int](t)(s.OpenPR(fullName, "feature", "main", "Add a", "octocat"))
	issue := must[int](t)(s.OpenIssue(fullName, "A bug", "octocat"))
	if err := s.SetPermission(fullName, "maintainer", "write"); err != nil {
		t.Fatal(err)
	}
	s.SetWebhook(rcv, "sec")
	id := must[int64](t)(s.AddComment(fullName, n, "maintainer", "/mainguard merge"))
	if err := s.EditComment(fullName, id, "maintainer", "/mainguard cancel"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddLabel(fullName, n, "maintainer", "mainguard-merge"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveLabel(fullName, n, "maintainer", "mainguard-merge"); err != nil {
		t.Fatal(err)
	}
	s.Flush()
	golden(t, "webhooks_surface", answer{Status: 200, Body: hooks})

	golden(t, "permission_write", call(t, s, "GET", "/repos/acme/app/collaborators/maintainer/permission", ""))
	golden(t, "permission_read", call(t, s, "GET", "/repos/acme/app/collaborators/someone/permission", ""))
	golden(t, "comment_create", call(t, s, "POST", "/repos/acme/app/issues/1/comments", `{"body":"<!-- mainguard:queue=x -->\nQueued"}`))
	golden(t, "comment_create_404", call(t, s, "POST", "/repos/acme/app/issues/9/comments", `{"body":"x"}`))
	golden(t, "comment_update", call(t, s, "PATCH", "/repos/acme/app/issues/comments/"+itoa(id+1), `{"body":"<!-- mainguard:queue=x -->\nTesting"}`))
	golden(t, "comment_update_404", call(t, s, "PATCH", "/repos/acme/app/issues/comments/999", `{"body":"x"}`))
	golden(t, "comments_list", call(t, s, "GET", "/repos/acme/app/issues/1/comments?per_page=100", ""))
	golden(t, "reaction_201", call(t, s, "POST", "/repos/acme/app/issues/comments/"+itoa(id)+"/reactions", `{"content":"+1"}`))
	golden(t, "reaction_200_exists", call(t, s, "POST", "/repos/acme/app/issues/comments/"+itoa(id)+"/reactions", `{"content":"+1"}`))
	golden(t, "labels_add", call(t, s, "POST", "/repos/acme/app/issues/1/labels", `{"labels":["mainguard: testing"]}`))
	if got := call(t, s, "POST", "/repos/acme/app/issues/1/labels", `["mainguard: testing"]`); got.Status != 200 {
		t.Errorf("labels as a bare list: %d", got.Status)
	}
	golden(t, "labels_list", call(t, s, "GET", "/repos/acme/app/issues/1/labels", ""))
	golden(t, "label_remove", call(t, s, "DELETE", "/repos/acme/app/issues/1/labels/mainguard:%20testing", ""))
	golden(t, "label_remove_404", call(t, s, "DELETE", "/repos/acme/app/issues/1/labels/mainguard:%20testing", ""))
	golden(t, "pull_create", call(t, s, "POST", "/repos/acme/app/pulls", `{"title":"[mainguard] test run","head":"trunk-merge/pr-1/u","base":"main","draft":true}`))
	golden(t, "pull_create_422_exists", call(t, s, "POST", "/repos/acme/app/pulls", `{"title":"[mainguard] test run","head":"acme:trunk-merge/pr-1/u","base":"main","draft":true}`))
	golden(t, "pulls_list_head", call(t, s, "GET", "/repos/acme/app/pulls?state=open&head=acme:trunk-merge/pr-1/u", ""))
	golden(t, "pull_close", call(t, s, "PATCH", "/repos/acme/app/pulls/3", `{"state":"closed"}`))
	if got := call(t, s, "GET", "/repos/acme/app/issues/"+itoa(int64(issue))+"/comments", ""); got.Status != 200 {
		t.Errorf("comments of an issue: %d", got.Status)
	}
	cs := must[[]githubsim.Comment](t)(s.Comments(fullName, n))
	if diff := cmp.Diff(cs[0].Reactions, []string{"+1"}); diff != "" {
		t.Errorf("reactions (-got +want):\n%s", diff)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
