package app_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
)

// The tests below drive every field of api.Limits on every endpoint that
// reads it, through the whole stack on DynamoDB Local: over its limit it
// is a 400 naming the field and the limit; at its limit, all at once, the
// store takes it (never a 5xx); hostile text is refused or answered
// without being echoed raw.

const (
	limitsSecret = "limits-webhook-secret"
	fullSHA      = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
)

// byHand are the fields of api.Limits that handlers read themselves (raw
// JSON, a query, a header) rather than through api.JSON's decoding.
var byHand = map[string][]string{
	"set-impacted-targets":    {"impactedTargets"},
	"get-merge-queue-metrics": {"repo", "repoHost"},
	"github-webhook":          {"X-GitHub-Delivery"},
}

// baseBodies are valid requests, each reaching the store: every field of
// api.Limits an endpoint reads is in its body.
func baseBodies() map[string]map[string]any {
	repo := map[string]any{"host": "github.com", "owner": "Acme", "name": "web"}
	with := func(common map[string]any, extra map[string]any) map[string]any {
		m := clone(common)
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	th := func(extra map[string]any) map[string]any {
		return with(map[string]any{"repo": repo, "org_url_slug": "acme"}, extra)
	}
	up := func(extra map[string]any) map[string]any {
		return with(map[string]any{"repo": repo, "orgUrlSlug": "acme"}, extra)
	}
	mq := func(extra map[string]any) map[string]any {
		return with(map[string]any{"repo": repo, "targetBranch": "main"}, extra)
	}
	page := map[string]any{"page_size": 10, "page_token": ""}
	pr := map[string]any{"number": 7, "sha": fullSHA, "branch": "feature"}
	return map[string]map[string]any{
		"get-test-details":         th(map[string]any{"test_id": testID}),
		"link-ticket-to-test-case": {"repo": repo, "test_case_id": testID, "external_ticket_id": "KAN-1"},
		"list-quarantined-tests":   th(map[string]any{"page_query": page}),
		"list-unhealthy-tests":     th(map[string]any{"page_query": page, "status": "FLAKY"}),
		"list-failing-tests":       th(map[string]any{"page_query": page, "start_time": "2026-07-22T00:00:00Z", "end_time": "2026-07-23T00:00:00Z"}),
		"label-failures":           th(map[string]any{"upload_id": "00000000-0000-4000-8000-0000000000aa", "test_ids": []any{testID}}),
		"get-quarantine-config": up(map[string]any{"testIdentifiers": []any{map[string]any{
			"name": "example_name", "parentName": "parent/fact/path", "className": "ExampleClass", "file": "src/lib.rs", "id": "", "variant": "unix"}}}),
		"create-bundle-upload": up(map[string]any{"clientVersion": "0.6.12"}),
		"create-queue":         mq(map[string]any{"mode": "SINGLE"}),
		"get-queue":            mq(nil),
		"update-queue": mq(map[string]any{"state": "RUNNING", "mode": "SINGLE", "mergeMethod": "SQUASH", "directMergeMode": "OFF",
			"optimizationMode": "OFF", "flakyRetryPolicy": "KNOWN_FLAKY", "requiredStatuses": []any{"ci"}}),
		"delete-queue":                    mq(nil),
		"submit-pull-request":             mq(map[string]any{"pr": pr, "priority": "high"}),
		"cancel-pull-request":             mq(map[string]any{"pr": pr}),
		"restart-tests-on-pull-request":   mq(map[string]any{"pr": pr}),
		"get-submitted-pull-request":      mq(map[string]any{"pr": map[string]any{"branch": "feature"}}),
		"set-impacted-targets":            mq(map[string]any{"pr": pr, "impactedTargets": []any{"//web:app"}}),
		"get-merge-queue-testing-details": {"testRunId": "00000000-0000-4000-8000-000000000001"},
		"list-pull-requests":              mq(map[string]any{"state": "PENDING", "since": "2026-07-22T00:00:00Z", "cursor": "", "take": 10}),
		"get-queue-history":               mq(map[string]any{"since": "2026-07-22T00:00:00Z", "until": "2026-07-23T00:00:00Z"}),
		"get-merge-queue-metrics":         {"repo": "Acme/web", "repoHost": "github.com"},
		"github-webhook":                  {"X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958"},
	}
}

// endpointFields is, for every endpoint that takes input, the fields of
// api.Limits it reads.
func endpointFields(t *testing.T, h *harness) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, ep := range h.app.Endpoints() {
		if d, ok := ep.Handler.(interface{ RequestFields() []string }); ok {
			out[ep.Name] = d.RequestFields()
		}
		out[ep.Name] = append(out[ep.Name], byHand[ep.Name]...)
		if len(out[ep.Name]) == 0 {
			delete(out, ep.Name)
		}
	}
	// Every POST endpoint takes input, and every field of the table is
	// read somewhere (or it would be a limit no test drives).
	used := map[string]bool{}
	for _, ep := range h.app.Endpoints() {
		if ep.Method == http.MethodPost && out[ep.Name] == nil {
			t.Errorf("POST %s reads no field of api.Limits", ep.Path)
		}
		for _, f := range out[ep.Name] {
			used[f] = true
		}
	}
	for _, l := range api.Limits {
		if !used[l.Field] {
			t.Errorf("api.Limits lists %s, which no endpoint reads", l.Field)
		}
	}
	// And each reads every field its base request, written from the API's
	// description, holds.
	for fn, body := range baseBodies() {
		for _, f := range textFields(body, "") {
			if !slices.Contains(out[fn], f) {
				t.Errorf("%s reads %s, but its field list %v lacks it", fn, f, out[fn])
			}
		}
	}
	return out
}

// textFields are the paths of the strings and lists a JSON value holds.
func textFields(v any, path string) []string {
	switch v := v.(type) {
	case string:
		return []string{path}
	case map[string]any:
		var out []string
		for k, sub := range v {
			if path != "" {
				k = path + "." + k
			}
			out = append(out, textFields(sub, k)...)
		}
		return out
	case []any:
		out := []string{path}
		if len(v) > 0 {
			if _, ok := v[0].(map[string]any); ok {
				out = append(out, textFields(v[0], path+"[]")...)
			}
		}
		return out
	}
	return nil
}

// setField sets field (a path of api.Limits) in body to v: an element
// of a list field is its first.
func setField(body map[string]any, field string, v any) {
	head, rest, nested := strings.Cut(field, ".")
	list := strings.HasSuffix(head, "[]")
	head = strings.TrimSuffix(head, "[]")
	if !nested {
		body[head] = v
		return
	}
	if list {
		items, _ := body[head].([]any)
		if len(items) == 0 {
			items = []any{map[string]any{}}
		}
		first := clone(items[0].(map[string]any))
		setField(first, rest, v)
		body[head] = append([]any{first}, items[1:]...)
		return
	}
	sub, _ := body[head].(map[string]any)
	sub = clone(sub)
	setField(sub, rest, v)
	body[head] = sub
}

// withValue is body with field set to v, a string, or a one-item list of
// it where the field is a list of strings.
func withValue(body map[string]any, field, v string) map[string]any {
	body = clone(body)
	if l := api.LimitOf(field); l.Items > 0 && l.Max > 0 {
		setField(body, field, []any{v})
	} else {
		setField(body, field, v)
	}
	return body
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// shown is the name an error gives a field set by setField.
func shown(field string) string {
	if l := api.LimitOf(field); l.Items > 0 && l.Max > 0 {
		return field + "[0]"
	}
	return strings.ReplaceAll(field, "[]", "[0]")
}

// callWith calls fn with body: JSON for most endpoints, the query of
// getMergeQueueMetrics, the delivery header of GitHub's webhook (with a
// signed ping).
func callWith(t *testing.T, h *harness, fn string, body map[string]any) events.APIGatewayV2HTTPResponse {
	t.Helper()
	var route string
	for _, ep := range h.app.Endpoints() {
		if ep.Name == fn {
			route = ep.Path
		}
	}
	ev := event(route, body)
	switch fn {
	case "get-merge-queue-metrics":
		q := url.Values{}
		for k, v := range body {
			q.Set(k, v.(string))
		}
		ev = event(route, nil)
		ev.Body, ev.RawQueryString, ev.RequestContext.HTTP.Method = "", q.Encode(), http.MethodGet
	case "github-webhook":
		payload := []byte(`{"zen":"Keep it logically awesome."}`)
		mac := hmac.New(sha256.New, []byte(limitsSecret))
		mac.Write(payload)
		ev = event(route, nil)
		ev.Body = string(payload)
		ev.Headers["x-github-event"] = "ping"
		ev.Headers["x-hub-signature-256"] = "sha256=" + hex.EncodeToString(mac.Sum(nil))
		ev.Headers["x-github-delivery"] = body["X-GitHub-Delivery"].(string)
	}
	return h.call(t, fn, ev)
}

func newLimitsHarness(t *testing.T) *harness {
	h := newHarness(t, func(c *config.Config) { c.GitHubWebhookSecret = limitsSecret })
	h.seedQueues(t)
	return h
}

// TestEveryFieldOverItsLimit: every field of every endpoint, one byte over
// its limit (and a list one item over), is a 400 naming it and the limit.
func TestEveryFieldOverItsLimit(t *testing.T) {
	t.Parallel()
	h := newLimitsHarness(t)
	bases := baseBodies()
	cases := 0
	for fn, fields := range endpointFields(t, h) {
		for _, field := range fields {
			l := api.LimitOf(field)
			type over struct {
				value any
				says  string
			}
			var overs []over
			if l.Max > 0 {
				long := strings.Repeat("a", l.Max+1)
				var v any = long
				if l.Items > 0 {
					v = []any{long}
				}
				overs = append(overs, over{v, fmt.Sprintf("%s must be at most %d bytes, got %d", shown(field), l.Max, l.Max+1)})
			}
			if l.Items > 0 {
				items := make([]any, l.Items+1)
				for i := range items {
					items[i] = "a"
					if l.Max == 0 {
						items[i] = map[string]any{}
					}
				}
				overs = append(overs, over{items, fmt.Sprintf("%s must hold at most %d items, got %d", field, l.Items, l.Items+1)})
			}
			for _, o := range overs {
				body := clone(bases[fn])
				setField(body, field, o.value)
				resp := callWith(t, h, fn, body)
				cases++
				if resp.StatusCode != 400 || resp.Body != o.says {
					t.Errorf("%s with %s over its limit: %d %q, want 400 %q", fn, field, resp.StatusCode, resp.Body, o.says)
				}
			}
		}
	}
	t.Logf("%d endpoint × field cases over their limits", cases)
}

// atLimit are the fields that go into keys and items: the at-limit test
// sets them all at their limits at once. The others keep their base
// value, which the handler needs to reach the store (an organization
// slug, an id, an enum, a timestamp).
var atLimit = []string{
	"repo.host", "repo.owner", "repo.name", "targetBranch", "pr.branch", "pr.sha", "requiredStatuses",
	"impactedTargets", "clientVersion", "testIdentifiers", "testIdentifiers[].name", "testIdentifiers[].parentName",
	"testIdentifiers[].className", "testIdentifiers[].file", "testIdentifiers[].id", "testIdentifiers[].variant",
	"repo", "X-GitHub-Delivery",
}

// TestEveryFieldAtItsLimit: with every key-bearing field of an endpoint at
// its limit at once (a list full, its first item longest), the store takes
// the request: no endpoint answers 5xx.
func TestEveryFieldAtItsLimit(t *testing.T) {
	t.Parallel()
	h := newLimitsHarness(t)
	bases := baseBodies()
	all := endpointFields(t, h)
	// Creating first, deleting last: the others then find the queue and
	// repository of the longest keys and write beneath them.
	var order []string
	for fn := range all {
		order = append(order, fn)
	}
	slices.Sort(order)
	stage := func(fn string) int {
		switch {
		case strings.HasPrefix(fn, "create-"):
			return 0
		case strings.HasPrefix(fn, "delete-"):
			return 2
		}
		return 1
	}
	slices.SortStableFunc(order, func(a, b string) int { return stage(a) - stage(b) })
	for _, fn := range order {
		fields := all[fn]
		body := clone(bases[fn])
		for _, field := range fields {
			l := api.LimitOf(field)
			// Merge queues take github.com only: a long host stops at that.
			if !slices.Contains(atLimit, field) || field == "repo.host" && slices.Contains(fields, "targetBranch") {
				continue
			}
			if l.Items > 0 {
				items := make([]any, l.Items)
				for i := range items {
					items[i] = "a"
					if l.Max == 0 {
						items[i] = map[string]any{}
					}
				}
				if l.Max > 0 {
					items[0] = strings.Repeat("a", l.Max)
				} else if old, ok := body[field].([]any); ok && len(old) > 0 {
					items[0] = old[0]
				}
				body[field] = items
				continue
			}
			if field == "pr.sha" {
				setField(body, field, strings.Repeat("a", 64))
				continue
			}
			if fn == "get-merge-queue-metrics" && field == "repo" {
				body[field] = strings.Repeat("a", 255) + "/" + strings.Repeat("a", 255)
				continue
			}
			setField(body, field, strings.Repeat("a", l.Max))
		}
		resp := callWith(t, h, fn, body)
		if resp.StatusCode >= 500 {
			t.Errorf("%s with its fields at their limits: %d %q", fn, resp.StatusCode, resp.Body)
		}
	}
}

// hostile are values no identifier may hold, with whether a field that
// is only hashed (a test's name in getQuarantineConfig) refuses them too.
var hostile = []struct {
	name   string
	json   string // the value as a JSON string literal
	hashed bool   // refused in a hashed-only field too
}{
	{"NUL", `"a\u0000b"`, true},
	{"escape sequence", `"a\u001b[31mred"`, true},
	{"newline", `"a\nb"`, false},
	{"DEL", `"a\u007fb"`, true},
	{"C1 control", `"a\u0085b"`, true},
	{"RTL override", `"abc\u202edcba"`, false},
	{"zero-width joiner", `"a\u200db"`, false},
	{"lone surrogate", `"a\ud800b"`, false},
}

// TestHostileText: every field of every endpoint, given control
// characters, a bidirectional override, a lone surrogate or invalid UTF-8,
// is refused with a 400 naming it (text only hashed may keep what is not
// a control character); no answer is a 5xx, and every error body is
// valid UTF-8 without control or format characters.
func TestHostileText(t *testing.T) {
	t.Parallel()
	h := newLimitsHarness(t)
	bases := baseBodies()
	check := func(t *testing.T, what string, resp events.APIGatewayV2HTTPResponse) {
		t.Helper()
		if resp.StatusCode >= 500 {
			t.Errorf("%s: %d %q", what, resp.StatusCode, resp.Body)
		}
		if resp.StatusCode == 200 {
			return
		}
		if !utf8.ValidString(resp.Body) || strings.IndexFunc(resp.Body, func(r rune) bool {
			return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
		}) >= 0 {
			t.Errorf("%s: the error body shows raw input: %q", what, resp.Body)
		}
	}
	for fn, fields := range endpointFields(t, h) {
		for _, field := range fields {
			hashedOnly := strings.HasPrefix(field, "testIdentifiers[].")
			for _, hv := range hostile {
				var v string
				if err := json.Unmarshal([]byte(hv.json), &v); err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s %s with %s", fn, field, hv.name)
				resp := callWith(t, h, fn, withValue(bases[fn], field, v))
				check(t, what, resp)
				refused := !hashedOnly || hv.hashed
				if refused && (resp.StatusCode != 400 || !strings.HasPrefix(resp.Body, shown(field)+" must be ")) {
					t.Errorf("%s: %d %q, want 400 naming %s", what, resp.StatusCode, resp.Body, shown(field))
				}
			}
		}
		// A megabyte of format and control characters.
		huge := strings.Repeat("\u202e\x01", 1<<19)
		check(t, fn+" with a megabyte of controls", callWith(t, h, fn, withValue(bases[fn], fields[0], huge)))
		// Invalid UTF-8 anywhere in a JSON body.
		if fn == "get-merge-queue-metrics" || fn == "github-webhook" {
			continue
		}
		raw, _ := json.Marshal(bases[fn])
		ev := event("/x", nil)
		for _, ep := range h.app.Endpoints() {
			if ep.Name == fn {
				ev = event(ep.Path, nil)
			}
		}
		ev.Body = strings.Replace(string(raw), `"`, "\"\xff\xfe", 1)
		resp := h.call(t, fn, ev)
		check(t, fn+" with invalid UTF-8", resp)
		if resp.StatusCode != 400 || resp.Body != "request body is not valid UTF-8 at byte 3" {
			t.Errorf("%s with invalid UTF-8: %d %q", fn, resp.StatusCode, resp.Body)
		}
	}
}
