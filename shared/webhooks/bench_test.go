package webhooks_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// fastReceiver answers 204 without verifying: the benchmarks measure the
// sending side.
func fastReceiver(b *testing.B) *httptest.Server {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv
}

var benchBody = []byte(`{"type":"pull_request.merged","action":"merged","status":"MERGED","pr_number":7,"repository":{"host":"github.com","owner":"acme","name":"web"}}`)

// BenchmarkSignedPost is the baseline: one signed POST per event, nothing
// stored.
func BenchmarkSignedPost(b *testing.B) {
	srv := fastReceiver(b)
	s := &webhooks.Sender{Client: webhooks.NewClient(local)}
	secret := []string{webhooks.NewSecret()}
	b.ResetTimer()
	for i := range b.N {
		if res := s.Send(bg, srv.URL, secret, fmt.Sprintf("evt_%d", i), benchBody); !res.Delivered() {
			b.Fatal(res.Err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDeliver drains b.N outbox events to one endpoint through the
// Deliverer on DynamoDB Local: per event a due query share, a state query,
// a claim, the POST, a transactional record and the finish.
func BenchmarkDeliver(b *testing.B) {
	srv := fastReceiver(b)
	f := newFixture(b)
	ep := store.WebhookEndpoint{ID: "ep_bench", URL: srv.URL, Secret: webhooks.NewSecret()}
	if _, err := f.s.AddWebhookEndpoint(bg, "acme", ep); err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		f.event(b, fmt.Sprintf("evt_%06d", i), "pull_request.merged")
	}
	d := f.deliverer(0)
	b.ResetTimer()
	rep, err := d.Run(bg, "acme")
	b.StopTimer()
	if err != nil || rep.Delivered != b.N || rep.Finished != b.N {
		b.Fatalf("report %+v, err %v; want %d delivered", rep, err, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
