package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/testhealth"
)

type pageJSON struct {
	TotalRows     int    `json:"total_rows"`
	TotalPages    int    `json:"total_pages"`
	NextPageToken string `json:"next_page_token"`
	PrevPageToken string `json:"prev_page_token"`
	LastPageToken string `json:"last_page_token"`
	PageIndex     int    `json:"page_index"`
}

type unhealthyPage struct {
	Tests []struct {
		ID string `json:"id"`
	} `json:"tests"`
	Page pageJSON `json:"page"`
}

// TestListPagination walks 25 broken tests in pages of 10 forwards, back
// and to the last page, and checks that tokens are bound to their query.
func TestListPagination(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	repo := repository.Ref{Host: "github.com", Owner: "acme", Name: "api"}
	var want []string
	for i := range 25 {
		tc := sampleTest("acme", repo)
		tc.ID = fmt.Sprintf("00000000-0000-5000-8000-%012d", i)
		tc.Status = testhealth.TestStatus{Value: "broken", Reason: "broken-streak", Timestamp: t0}
		if err := h.app.Store.PutTestCase(ctx, tc); err != nil {
			t.Fatal(err)
		}
		want = append(want, tc.ID)
	}
	list := func(token string, size int) (unhealthyPage, int, string) {
		t.Helper()
		q := map[string]any{"page_size": size}
		if token != "" {
			q["page_token"] = token
		}
		resp := h.call(t, "list-unhealthy-tests", event("/flaky-tests/list-unhealthy-tests", map[string]any{
			"repo": repo, "org_url_slug": "acme", "status": "BROKEN", "page_query": q,
		}))
		var p unhealthyPage
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
				t.Fatal(err)
			}
		}
		return p, resp.StatusCode, resp.Body
	}
	ids := func(p unhealthyPage) []string {
		var out []string
		for _, tc := range p.Tests {
			out = append(out, tc.ID)
		}
		return out
	}
	p0, _, _ := list("", 10)
	if p0.Page.TotalRows != 25 || p0.Page.TotalPages != 3 || p0.Page.PageIndex != 0 || p0.Page.PrevPageToken != "" {
		t.Fatalf("first page: %+v", p0.Page)
	}
	p1, _, _ := list(p0.Page.NextPageToken, 10)
	p2, _, _ := list(p1.Page.NextPageToken, 10)
	var got []string
	for _, p := range []unhealthyPage{p0, p1, p2} {
		got = append(got, ids(p)...)
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("pages forward (-got +want):\n%s", d)
	}
	if p2.Page.PageIndex != 2 || p2.Page.NextPageToken != "" {
		t.Errorf("last page by next: %+v", p2.Page)
	}
	back, _, _ := list(p2.Page.PrevPageToken, 10)
	if d := cmp.Diff(ids(back), ids(p1)); d != "" || back.Page.PageIndex != 1 {
		t.Errorf("prev of page 2 is not page 1 (index %d):\n%s", back.Page.PageIndex, d)
	}
	last, _, _ := list(p0.Page.LastPageToken, 10)
	if d := cmp.Diff(ids(last), want[20:]); d != "" || last.Page.PageIndex != 2 {
		t.Errorf("last page (index %d):\n%s", last.Page.PageIndex, d)
	}
	// A token is bound to its list, filters and page size.
	if _, code, body := list(p0.Page.NextPageToken, 5); code != http.StatusBadRequest {
		t.Errorf("token with another page size: %d %s", code, body)
	}
	resp := h.call(t, "list-unhealthy-tests", event("/flaky-tests/list-unhealthy-tests", map[string]any{
		"repo": repo, "org_url_slug": "acme", "status": "FLAKY", "page_query": map[string]any{"page_size": 10, "page_token": p0.Page.NextPageToken},
	}))
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("token of the BROKEN list used for FLAKY: %d %s", resp.StatusCode, resp.Body)
	}
	tampered := p0.Page.NextPageToken[:len(p0.Page.NextPageToken)-2] + "AA"
	if _, code, _ := list(tampered, 10); code != http.StatusBadRequest {
		t.Errorf("tampered token: %d", code)
	}
}
