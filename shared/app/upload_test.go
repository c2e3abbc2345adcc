package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
	"github.com/mainguard/mainguard/shared/uploadapi"
)

type createdUpload struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	Key string `json:"key"`
}

func (h *harness) createUpload(t *testing.T) createdUpload {
	t.Helper()
	resp := h.call(t, "create-bundle-upload", event("/metrics/createBundleUpload", map[string]any{
		"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "web"}, "orgUrlSlug": "acme",
		"clientVersion": "0.10.2", "remoteUrls": []string{},
	}))
	var c createdUpload
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(resp.Body), &c) != nil || c.ID == "" || c.URL == "" {
		t.Fatalf("createBundleUpload: %d %s", resp.StatusCode, resp.Body)
	}
	return c
}

func bundleFor(t *testing.T, uploadID string) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := bundle.Write(&buf, bundle.WriteInput{
		Meta: bundle.Meta{Org: "acme", BundleUploadID: uploadID, UploadTime: t0,
			Repo: bundle.Repo{Host: "github.com", Owner: "acme", Name: "web", HeadSHA: "abc1234", HeadBranch: "main"}},
		JUnit: []bundle.File{{OriginalPath: "r.xml", Body: []byte(`<testsuite name="s"><testcase name="works"/><testcase name="breaks"><failure message="no"/></testcase></testsuite>`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func put(t *testing.T, u string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// TestLocalUploadAddress: the local server signs its PUT addresses; a
// wrong or expired signature is 403 and stores nothing, a good one stores
// the bundle and ingests it at once.
func TestLocalUploadAddress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var srv *httptest.Server
	h := newHarness(t, func(c *config.Config) { c.BundleDir = dir; c.PublicAPIURL = "http://placeholder/v1" })
	srv = httptest.NewServer(h.app.Mux())
	t.Cleanup(srv.Close)
	c := h.createUpload(t)
	u, err := url.Parse(c.URL)
	if err != nil || !strings.HasPrefix(u.Path, "/v1/bundles/acme/") {
		t.Fatalf("upload address %q", c.URL)
	}
	at := func(q url.Values) string { return srv.URL + u.Path + "?" + q.Encode() }
	q := u.Query()
	body := bundleFor(t, c.ID)

	bad := url.Values{"expires": q["expires"], "signature": {strings.Repeat("0", 64)}}
	if code, msg := put(t, at(bad), body); code != http.StatusForbidden || !strings.Contains(msg, "signature") {
		t.Errorf("wrong signature: %d %q", code, msg)
	}
	later := url.Values{"expires": {"9999999999"}, "signature": q["signature"]}
	if code, _ := put(t, at(later), body); code != http.StatusForbidden {
		t.Errorf("signature for another expiry: %d", code)
	}
	h.Advance(16 * time.Minute)
	if code, msg := put(t, at(q), body); code != http.StatusForbidden || !strings.Contains(msg, "expired") {
		t.Errorf("expired address: %d %q", code, msg)
	}
	up, err := h.app.Store.GetUpload(context.Background(), "acme", c.ID)
	if err != nil || up.State != store.UploadCreated {
		t.Fatalf("after refused PUTs: %+v %v", up, err)
	}
	h.Advance(-16 * time.Minute)
	if code, msg := put(t, at(q), body); code != http.StatusOK {
		t.Fatalf("good PUT: %d %q", code, msg)
	}
	up, _ = h.app.Store.GetUpload(context.Background(), "acme", c.ID)
	if up.State != store.UploadIngested || up.Runs != 2 || up.Failed != 1 {
		t.Errorf("after the PUT: %+v", up)
	}
}

// TestS3UploadAndIngestEvent is the deployed path against an S3-compatible
// server: createBundleUpload answers a pre-signed S3 address, the bundle
// is PUT there, and the object-created event runs the ingest function.
func TestS3UploadAndIngestEvent(t *testing.T) {
	t.Parallel()
	s3URL := testkit.S3(t, "mg-bundles")
	h := newHarness(t, func(c *config.Config) {
		c.BundleBucket, c.S3Endpoint, c.Region = "mg-bundles", s3URL, "us-east-1"
	})
	c := h.createUpload(t)
	if !strings.HasPrefix(c.URL, s3URL+"/mg-bundles/bundles/acme/") || !strings.Contains(c.URL, "X-Amz-Signature=") {
		t.Fatalf("not a pre-signed S3 address: %s", c.URL)
	}
	if code, msg := put(t, c.URL, bundleFor(t, c.ID)); code != http.StatusOK {
		t.Fatalf("PUT to S3: %d %s", code, msg)
	}
	ev := events.S3Event{Records: []events.S3EventRecord{{
		EventName: "ObjectCreated:Put",
		S3:        events.S3Entity{Bucket: events.S3Bucket{Name: "mg-bundles"}, Object: events.S3Object{Key: url.QueryEscape(c.Key)}},
	}}}
	for range 2 { // delivered twice: ingested once
		if err := h.app.Health.IngestS3(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	up, err := h.app.Store.GetUpload(context.Background(), "acme", c.ID)
	if err != nil || up.State != store.UploadIngested || up.Runs != 2 {
		t.Fatalf("upload after the event: %+v %v", up, err)
	}
	// An object that is no upload of ours is skipped, not retried forever.
	stray := events.S3Event{Records: []events.S3EventRecord{{S3: events.S3Entity{Object: events.S3Object{Key: "bundles/acme/00000000-0000-4000-8000-000000000000.tar.zst"}}}}}
	if err := h.app.Health.IngestS3(context.Background(), stray); err != nil {
		t.Errorf("stray object: %v", err)
	}
}

// TestOversizeLocalUploadFails: a bundle PUT over the limit (sent without
// a length, so the server reads up to the limit) is 413 and ends its upload
// FAILED with the reason: no bundle of it will ever be read.
func TestOversizeLocalUploadFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := newHarness(t, func(c *config.Config) { c.BundleDir = dir; c.PublicAPIURL = "http://placeholder/v1" })
	srv := httptest.NewServer(h.app.Mux())
	t.Cleanup(srv.Close)
	c := h.createUpload(t)
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+u.Path+"?"+u.RawQuery, &countingReader{size: uploadapi.MaxBundle + 1<<20})
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("oversize PUT: %d", resp.StatusCode)
		}
	}
	up, err := h.app.Store.GetUpload(context.Background(), "acme", c.ID)
	if err != nil || up.State != store.UploadFailed || !strings.Contains(up.Reason, "larger than") {
		t.Errorf("after an oversize PUT: %s %q %v", up.State, up.Reason, err)
	}
}
