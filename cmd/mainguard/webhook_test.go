package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/webhooks"
)

var (
	endpointRE = regexp.MustCompile(`ep_[0-9a-f]{16}`)
	secretRE   = regexp.MustCompile(`whsec_[A-Za-z0-9+/]{32}`)
)

// hook is a receiver that verifies each delivery with the official Svix
// library against the secret it is told, and answers 200 when it verifies.
type hook struct {
	srv *httptest.Server

	arrived chan string // webhook-id of each delivery, as it arrives

	mu       sync.Mutex
	secret   string
	ids      []string // webhook-id of each delivery
	verified []bool
	bodies   []string
}

func newHook(t *testing.T) *hook {
	t.Helper()
	h := &hook{arrived: make(chan string, 100)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		wh, err := svix.NewWebhook(h.secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		h.ids = append(h.ids, r.Header.Get("webhook-id"))
		h.verified = append(h.verified, err == nil)
		h.bodies = append(h.bodies, string(body))
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
		}
		select {
		case h.arrived <- r.Header.Get("webhook-id"):
		default:
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) trust(secret string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.secret = secret
}

// payloads are the bodies of the deliveries that verified.
func (h *hook) payloads() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for i, b := range h.bodies {
		if h.verified[i] {
			out = append(out, b)
		}
	}
	return out
}

func (h *hook) got() ([]string, []bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids...), append([]bool(nil), h.verified...)
}

// deliverNow runs one delivery pass over acme's outbox, as the scheduled
// function does.
func deliverNow(t *testing.T, e map[string]string) {
	t.Helper()
	s := tableOf(t, e)
	d := &webhooks.Deliverer{Store: s, Sender: &webhooks.Sender{Client: webhooks.NewClient(webhooks.Guard{AllowLoopback: true})}}
	if _, err := d.Run(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
}

// enqueue writes an event to acme's outbox, as a change would.
func enqueue(t *testing.T, e map[string]string, id string) {
	t.Helper()
	enqueueFor(t, e, "acme", id)
}

func enqueueFor(t *testing.T, e map[string]string, org, id string) {
	t.Helper()
	s := tableOf(t, e)
	ev := store.Event{ID: id, Type: "test_case.ticket_linked", Payload: `{"type":"test_case.ticket_linked"}`, CreatedAt: time.Now()}
	if err := s.EnqueueEvent(context.Background(), org, ev); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookCommandLine(t *testing.T) {
	t.Parallel()
	e := localEnv(t, nil)
	if _, _, code := mg(t, e, "org", "create", "--slug", "acme"); code != 0 {
		t.Fatal("org create failed")
	}
	cases := []struct {
		name    string
		args    []string
		code    int
		errText string
	}{
		{"no subcommand", []string{"webhook"}, 2, "webhook needs a command"},
		{"unknown subcommand", []string{"webhook", "frob"}, 2, `unknown command "webhook frob"`},
		{"add without url", []string{"webhook", "add", "--org", "acme"}, 2, "needs --url"},
		{"metadata address", []string{"webhook", "add", "--org", "acme", "--url", "http://169.254.169.254/latest"}, 1, "not a public address (cloud metadata)"},
		{"decimal metadata address", []string{"webhook", "add", "--org", "acme", "--url", "http://2852039166/"}, 1, "non-standard form"},
		{"not http", []string{"webhook", "add", "--org", "acme", "--url", "file:///etc/passwd"}, 1, "http or https"},
		{"unknown event type", []string{"webhook", "add", "--org", "acme", "--url", "http://127.0.0.1:1/", "--events", "test_case.status_changed,test_case.deleted"}, 2, `unknown event type "test_case.deleted"`},
		{"unknown organization", []string{"webhook", "add", "--org", "ghost", "--url", "http://127.0.0.1:1/"}, 1, `organization "ghost" not found`},
		{"remove without endpoint", []string{"webhook", "remove", "--org", "acme"}, 2, "needs --endpoint"},
		{"remove unknown endpoint", []string{"webhook", "remove", "--org", "acme", "--endpoint", "ep_0000000000000000"}, 1, "no webhook endpoint ep_0000000000000000"},
		{"rotate unknown endpoint", []string{"webhook", "rotate-secret", "--org", "acme", "--endpoint", "ep_0000000000000000"}, 1, "no webhook endpoint"},
		{"deliveries of unknown endpoint", []string{"webhook", "deliveries", "--org", "acme", "--endpoint", "ep_0000000000000000"}, 1, "no webhook endpoint"},
		{"deliveries limit", []string{"webhook", "deliveries", "--org", "acme", "--endpoint", "ep_1", "--limit", "0"}, 2, "--limit"},
		{"replay without event", []string{"webhook", "replay", "--org", "acme"}, 2, "needs --event"},
		{"replay unknown event", []string{"webhook", "replay", "--org", "acme", "--event", "msg_nope"}, 1, "no event msg_nope"},
		{"stray argument", []string{"webhook", "list", "extra"}, 2, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := mg(t, e, c.args...)
			if code != c.code || !strings.Contains(errOut, c.errText) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, c.code, c.errText)
			}
			if secretRE.MatchString(out) {
				t.Errorf("a refused command printed a secret: %q", out)
			}
		})
	}
	// Nothing refused was stored.
	if out, _, code := mg(t, e, "webhook", "list", "--org", "acme"); code != 0 || out != "" {
		t.Errorf("endpoints after refusals: %d %q", code, out)
	}
}

// TestWebhookAddRefusesAddresses: `webhook add` refuses one address of
// every refused class, in IPv4 and IPv6 forms, and stores none of them; the
// local server's own receivers on loopback are taken, and the private
// switch opens private networks but not metadata addresses. (Deployed, the
// same guard without loopback: shared/webhooks' tests.)
func TestWebhookAddRefusesAddresses(t *testing.T) {
	t.Parallel()
	e := localEnv(t, nil)
	if _, _, code := mg(t, e, "org", "create", "--slug", "acme"); code != 0 {
		t.Fatal("org create failed")
	}
	refused := map[string]string{ // url → the class the refusal names
		"http://0.0.0.0:8080/":                     "unspecified",
		"http://[::]/":                             "unspecified",
		"http://10.0.0.1/":                         "private",
		"http://192.168.1.10/":                     "private",
		"http://[::ffff:10.0.0.1]/":                "private",
		"http://[fd12:3456::1]/":                   "private",
		"http://100.64.0.1/":                       "shared",
		"http://198.18.0.1/":                       "benchmark",
		"http://169.254.1.1/":                      "link-local",
		"http://[fe80::1]/":                        "link-local",
		"http://169.254.169.254/latest/meta-data/": "cloud metadata",
		"http://[fd00:ec2::254]/":                  "cloud metadata",
		"http://[::ffff:a9fe:a9fe]/":               "cloud metadata",
		"http://[64:ff9b::a9fe:a9fe]/":             "cloud metadata",
		"http://168.63.129.16/":                    "cloud metadata",
		"http://100.100.100.200/":                  "cloud metadata",
		"http://192.0.0.192/":                      "cloud metadata",
		"http://metadata.google.internal/":         "cloud metadata service",
		"http://0xa9fea9fe/":                       "non-standard form",
		"http://0251.0376.0251.0376/":              "non-standard form",
		"http://2852039166/":                       "non-standard form",
	}
	for url, class := range refused {
		_, errOut, code := mg(t, e, "webhook", "add", "--org", "acme", "--url", url)
		if code != 1 || !strings.Contains(errOut, class) {
			t.Errorf("webhook add %s: exit %d, %q; want 1 naming %q", url, code, errOut, class)
		}
	}
	if out, _, code := mg(t, e, "webhook", "list", "--org", "acme"); code != 0 || out != "" {
		t.Errorf("endpoints after refusals: %d %q", code, out)
	}
	for _, url := range []string{"http://127.0.0.1:9/hook", "http://[::1]:9/hook"} {
		if _, errOut, code := mg(t, e, "webhook", "add", "--org", "acme", "--url", url); code != 0 {
			t.Errorf("local server, %s: exit %d %q", url, code, errOut)
		}
	}
	sw := map[string]string{"WEBHOOK_INTERNAL_NETWORKS": "allow"}
	for k, v := range e {
		sw[k] = v
	}
	for url, ok := range map[string]bool{"http://10.0.0.1/": true, "http://[fd12:3456::1]/": true, "http://100.64.0.1/": true,
		"http://100.100.100.200/": false, "http://169.254.169.254/": false, "http://[fe80::1]/": false} {
		if _, errOut, code := mg(t, sw, "webhook", "add", "--org", "acme", "--url", url); (code == 0) != ok {
			t.Errorf("WEBHOOK_INTERNAL_NETWORKS=allow, %s: exit %d %q, want accepted=%v", url, code, errOut, ok)
		}
	}
}

func TestWebhookLifecycle(t *testing.T) {
	t.Parallel()
	e := localEnv(t, nil)
	if _, _, code := mg(t, e, "org", "create", "--slug", "acme"); code != 0 {
		t.Fatal("org create failed")
	}
	rc := newHook(t)

	// add: the secret is printed once, and works with Svix.
	out, errOut, code := mg(t, e, "webhook", "add", "--org", "acme", "--url", rc.srv.URL+"/hook", "--events", "test_case.ticket_linked, test_case.status_changed")
	id, secret := endpointRE.FindString(out), secretRE.FindString(out)
	if code != 0 || id == "" || secret == "" {
		t.Fatalf("webhook add: %d %q %q", code, out, errOut)
	}
	if !strings.Contains(out, "events test_case.ticket_linked,test_case.status_changed") {
		t.Errorf("webhook add does not echo the filter: %q", out)
	}
	rc.trust(secret)

	// list: the endpoint without its secret.
	out, _, code = mg(t, e, "webhook", "list", "--org", "acme")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, rc.srv.URL+"/hook") || strings.Contains(out, "whsec_") {
		t.Errorf("webhook list: %d %q", code, out)
	}
	if out, _, _ := mg(t, e, "webhook", "deliveries", "--org", "acme", "--endpoint", id); !strings.Contains(out, "no deliveries") {
		t.Errorf("deliveries before any: %q", out)
	}

	// An event is delivered, signed with the printed secret.
	enqueue(t, e, "msg_0001")
	deliverNow(t, e)
	ids, ok := rc.got()
	if len(ids) != 1 || ids[0] != "msg_0001" || !ok[0] {
		t.Fatalf("deliveries %v verified %v", ids, ok)
	}

	// rotate-secret: a new secret, printed once; the receiver that still
	// holds the old one verifies too during the grace period, and one that
	// switched to the new one verifies.
	out, _, code = mg(t, e, "webhook", "rotate-secret", "--org", "acme", "--endpoint", id)
	newSecret := secretRE.FindString(out)
	if code != 0 || newSecret == "" || newSecret == secret || !strings.Contains(out, "previous secret too until") {
		t.Fatalf("rotate-secret: %d %q", code, out)
	}
	if out, _, _ := mg(t, e, "webhook", "list", "--org", "acme"); !strings.Contains(out, "previous secret signs until") {
		t.Errorf("list after rotation: %q", out)
	}
	enqueue(t, e, "msg_0002")
	deliverNow(t, e)
	rc.trust(newSecret)
	enqueue(t, e, "msg_0003")
	deliverNow(t, e)
	if ids, ok := rc.got(); len(ids) != 3 || !ok[1] || !ok[2] {
		t.Fatalf("after rotation: deliveries %v verified %v", ids, ok)
	}

	// replay: the same event again, same webhook-id; not while pending.
	out, _, code = mg(t, e, "webhook", "replay", "--org", "acme", "--event", "msg_0001")
	if code != 0 || !strings.Contains(out, "replay 1") {
		t.Fatalf("replay: %d %q", code, out)
	}
	if _, errOut, code := mg(t, e, "webhook", "replay", "--org", "acme", "--event", "msg_0001"); code != 1 || !strings.Contains(errOut, "still being delivered") {
		t.Errorf("replay while pending: %d %q", code, errOut)
	}
	deliverNow(t, e)
	if ids, _ := rc.got(); len(ids) != 4 || ids[3] != "msg_0001" {
		t.Fatalf("after replay: deliveries %v", ids)
	}

	// deliveries: every attempt, most recent first, with its event, type,
	// attempt, status and latency.
	out, _, code = mg(t, e, "webhook", "deliveries", "--org", "acme", "--endpoint", id)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 {
		t.Fatalf("deliveries: %d %q", code, out)
	}
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\tmsg_000\d\ttest_case\.ticket_linked\tattempt 1( \(replay 1\))?\tHTTP 200\t\S+$`)
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("deliveries line %q", l)
		}
	}
	if !strings.Contains(out, "msg_0001\ttest_case.ticket_linked\tattempt 1 (replay 1)\tHTTP 200") {
		t.Errorf("the replay is not in the log: %q", out)
	}
	if out, _, _ := mg(t, e, "webhook", "deliveries", "--org", "acme", "--endpoint", id, "--limit", "2"); strings.Count(out, "\n") != 2 {
		t.Errorf("deliveries --limit 2: %q", out)
	}

	// remove: gone from the list, and receives nothing more.
	if out, _, code := mg(t, e, "webhook", "remove", "--org", "acme", "--endpoint", id); code != 0 || !strings.Contains(out, "removed") {
		t.Errorf("remove: %d %q", code, out)
	}
	if out, _, _ := mg(t, e, "webhook", "list", "--org", "acme"); out != "" {
		t.Errorf("list after remove: %q", out)
	}
	enqueue(t, e, "msg_0004")
	deliverNow(t, e)
	if ids, _ := rc.got(); len(ids) != 4 {
		t.Errorf("a removed endpoint received %v", ids)
	}
}

// TestServeTickerDeliversWebhooks is the local server delivering an event
// that nothing else sends: its ticker runs the scheduled function, which
// drains every organization's outbox.
func TestServeTickerDeliversWebhooks(t *testing.T) {
	t.Parallel()
	e := localEnv(t, map[string]string{"MAINGUARD_BOOTSTRAP_TOKEN": "mg_ci_token"})
	_, served := startServe(t, e, "--tick", "50ms")
	rc := newHook(t)
	out, _, code := mg(t, e, "webhook", "add", "--org", "local", "--url", rc.srv.URL)
	if code != 0 {
		t.Fatalf("webhook add: %d %q", code, out)
	}
	rc.trust(secretRE.FindString(out))
	enqueueFor(t, e, "local", "msg_served")
	var id string
	testkit.Await(t, "the ticker to deliver", func() bool {
		select {
		case id = <-rc.arrived:
			return true
		default:
			return false
		}
	}, served.exited, served.String)
	if _, ok := rc.got(); id != "msg_served" || !ok[0] {
		t.Errorf("delivered %q, verified %v", id, ok)
	}
}
