package blobs_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/errs"
)

// TestPresignIsTheSDKs holds blobs.S3's addresses to the SDK's own S3
// presign client: for the same credentials, region, bucket, key, expiry
// and signing time, both must produce the same address, signature and
// all. The SDK's S3 package is linked into this test only.
func TestPresignIsTheSDKs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name, region, endpoint, token, key string
	}{
		{"aws", "eu-west-1", "", "TOKEN", "bundles/acme/3f8e0a9c-1d2b-4c5d-8e9f-0a1b2c3d4e5f.tar.zst"},
		{"aws us-east-1 without session token", "us-east-1", "", "", "bundles/acme/u1.tar.zst"},
		{"path style", "us-east-1", "http://127.0.0.1:9000", "TOKEN", "bundles/acme/u1.tar.zst"},
		{"escaped key", "eu-central-1", "", "TOKEN", "bundles/a b/x+y:z@w=v&$,;~!'()*.tar.zst"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := aws.Config{Region: c.region, Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "SECRET", c.token)}
			sdk := s3.NewPresignClient(s3.NewFromConfig(cfg, func(o *s3.Options) {
				if c.endpoint != "" {
					o.BaseEndpoint, o.UsePathStyle = aws.String(c.endpoint), true
				}
			}))
			ours := blobs.NewS3(cfg, "mg-bundles", c.endpoint)

			put, err := sdk.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mg-bundles"), Key: &c.key, ContentType: aws.String("application/octet-stream")}, s3.WithPresignExpires(15*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			ours.Now = signedAt(t, put.URL)
			got, err := ours.PresignPut(ctx, c.key, 15*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			sameAddress(t, "PUT", got, put.URL)

			get, err := sdk.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("mg-bundles"), Key: &c.key}, s3.WithPresignExpires(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			ours.Now = signedAt(t, get.URL)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// What Open sent, put back on the SDK's host to compare.
				sent, _ := url.Parse(get.URL)
				sent.Path, sent.RawPath, sent.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
				sameAddress(t, "GET", sent.String(), get.URL)
				_, _ = io.WriteString(w, "bundle")
			}))
			defer srv.Close()
			ours.HTTP = redirectTo(srv.URL)
			rc, err := ours.Open(ctx, c.key)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(rc)
			rc.Close()
			if string(body) != "bundle" {
				t.Errorf("Open read %q", body)
			}
		})
	}
}

// signedAt is the signing time of a presigned address, for signing ours
// at the same second.
func signedAt(t *testing.T, addr string) func() time.Time {
	t.Helper()
	u, err := url.Parse(addr)
	if err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse("20060102T150405Z", u.Query().Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("no X-Amz-Date in %s: %v", addr, err)
	}
	return func() time.Time { return at }
}

// sameAddress compares two addresses up to the order of their query.
func sameAddress(t *testing.T, what, got, want string) {
	t.Helper()
	g, err1 := url.Parse(got)
	w, err2 := url.Parse(want)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: unparsable: %v %v", what, err1, err2)
	}
	if g.Scheme != w.Scheme || g.Host != w.Host || g.EscapedPath() != w.EscapedPath() || g.Query().Encode() != w.Query().Encode() {
		t.Errorf("%s address differs from the SDK's:\n got %s\nwant %s", what, got, want)
	}
}

// redirectTo is a client that sends every request to srv instead, keeping
// its path and query.
func redirectTo(srv string) *http.Client {
	target, _ := url.Parse(srv)
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestS3OpenAgainstAnS3Server reads back what was PUT to a pre-signed
// address of an S3-compatible server, and answers NotFound for a missing
// key and Unavailable when the server errs.
func TestS3OpenAgainstAnS3Server(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, key := storedBundle(t)
	holdsBundle(t, b, key)
	if _, err := b.Open(ctx, blobs.Key("acme", "missing")); !errs.Is(err, errs.NotFound) {
		t.Errorf("missing key: %v, want NotFound", err)
	}

	calls := 0
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "<Error><Code>SlowDown</Code></Error>")
	}))
	defer failing.Close()
	b.Endpoint = failing.URL
	_, err := b.Open(ctx, key)
	if !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "SlowDown") || calls != 3 {
		t.Errorf("failing server: %v after %d calls, want Unavailable with SlowDown after 3", err, calls)
	}
}

// TestS3TouchCopiesOntoItself: touching a stored bundle leaves it as it
// was (S3 then announces it again); touching a missing one is NotFound.
func TestS3TouchCopiesOntoItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, key := storedBundle(t)
	if err := b.Touch(ctx, key); err != nil {
		t.Fatal(err)
	}
	holdsBundle(t, b, key) // the touch left it as it was
	if err := b.Touch(ctx, blobs.Key("acme", "missing")); !errs.Is(err, errs.NotFound) {
		t.Errorf("touching a missing bundle: %v, want NotFound", err)
	}
}

// storedBundle is a bucket on an S3-compatible server holding "the bundle"
// at its key, PUT to a pre-signed address as the uploader does.
func storedBundle(t *testing.T) (blobs.S3, string) {
	t.Helper()
	b := blobs.NewS3(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}, "mg-bundles", testkit.S3(t, "mg-bundles")+"/")
	key := blobs.Key("acme", "u1")
	addr, err := b.PresignPut(context.Background(), key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, addr, strings.NewReader("the bundle"))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %v %v", resp, err)
	}
	resp.Body.Close()
	return b, key
}

// holdsBundle checks that key reads back as "the bundle" (storedBundle).
func holdsBundle(t *testing.T, b blobs.S3, key string) {
	t.Helper()
	rc, err := b.Open(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "the bundle" {
		t.Errorf("read back %q", got)
	}
}
