package blobs

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mainguard/mainguard/shared/errs"
)

// S3 keeps bundles in a bucket. It needs three things of S3, a pre-signed
// PUT address for the uploader, a GET of an object and a copy of an object
// onto itself (Touch), and does the first two with
// addresses signed by the SDK's Signature Version 4 signer, exactly as the
// SDK's S3 presign client signs them (a test holds the two equal). It does
// not use the SDK's S3 client: linking that package made up a third of
// the ingest and upload functions' cold start.
type S3 struct {
	Bucket      string
	Region      string
	Credentials aws.CredentialsProvider
	// Endpoint, when set, is an S3-compatible server addressed by path
	// (http://host:port/bucket/key); otherwise AWS's virtual-hosted
	// address https://bucket.s3.region.amazonaws.com/key.
	Endpoint string
	HTTP     *http.Client     // default: http.DefaultClient
	Now      func() time.Time // signing time; default time.Now
}

var _ Store = S3{}

// NewS3 is the bucket's store with the region and credentials of awsCfg;
// a non-empty endpoint is an S3-compatible server, addressed by path.
func NewS3(awsCfg aws.Config, bucket, endpoint string) S3 {
	return S3{Bucket: bucket, Region: awsCfg.Region, Credentials: awsCfg.Credentials, Endpoint: strings.TrimSuffix(endpoint, "/")}
}

// openTTL is how long the address Open signs for itself is valid: only
// the request's start must fall inside it.
const openTTL = time.Minute

// openAttempts bounds the tries of a GET that failed for a reason a retry
// can mend (a 5xx, throttling, a broken connection), as the SDK's standard
// retryer would.
const openAttempts = 3

// Open streams a stored bundle; NotFound when there is none.
func (b S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	var last error
	for attempt := range openAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, errs.Wrap(errs.Unavailable, ctx.Err(), "the bundle store is unavailable")
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		body, retry, err := b.get(ctx, key)
		if err == nil || !retry {
			return body, err
		}
		last = err
	}
	return nil, last
}

// get is one GET of key; retry says whether another try may succeed.
func (b S3) get(ctx context.Context, key string) (body io.ReadCloser, retry bool, err error) {
	addr, err := b.presign(ctx, http.MethodGet, key, openTTL, nil)
	if err != nil {
		return nil, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return nil, false, errs.Wrap(errs.Internal, err, "cannot address the bundle")
	}
	resp, err := b.client().Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, errs.Wrap(errs.Unavailable, err, "the bundle store is unavailable")
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, false, nil
	}
	// S3's error body is a small XML document; its code is enough to say
	// what went wrong.
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	err = fmt.Errorf("s3 GET %s: %s: %s", key, resp.Status, s3ErrorCode(msg))
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, false, errs.Wrap(errs.NotFound, err, "bundle %s not found", key)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return nil, true, errs.Wrap(errs.Unavailable, err, "the bundle store is unavailable")
	default:
		return nil, false, errs.Wrap(errs.Unavailable, err, "the bundle store is unavailable")
	}
}

// s3ErrorCode is the <Code> of an S3 error body, or the body's start.
func s3ErrorCode(body []byte) string {
	s := string(body)
	if _, rest, ok := strings.Cut(s, "<Code>"); ok {
		if code, _, ok := strings.Cut(rest, "</Code>"); ok {
			return code
		}
	}
	return strings.TrimSpace(s[:min(len(s), 200)])
}

// Touch copies key onto itself with fresh metadata, which S3 reports as a
// new object-created event: the way to have the ingest function run again
// for a bundle whose ingest never finished. NotFound when there is no such
// object (its address expired unused).
func (b S3) Touch(ctx context.Context, key string) error {
	header := http.Header{
		"X-Amz-Copy-Source":        {"/" + escapePath(b.Bucket) + "/" + escapePath(key)},
		"X-Amz-Metadata-Directive": {"REPLACE"},
		"X-Amz-Meta-Touched":       {strconv.FormatInt(time.Now().UnixNano(), 10)},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, b.objectURL(key)+"?x-id=CopyObject", nil)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "cannot address the bundle")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	// Signed in the Authorization header, as the SDK's S3 client sends a
	// CopyObject: a pre-signed address would carry the copy source in its
	// query, where S3 does not read it.
	creds, err := b.credentials(ctx)
	if err != nil {
		return err
	}
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, "UNSIGNED-PAYLOAD", "s3", b.Region, b.now(),
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }); err != nil {
		return errs.Wrap(errs.Internal, err, "cannot sign the bundle request")
	}
	resp, err := b.client().Do(req)
	if err != nil {
		return errs.Wrap(errs.Unavailable, err, "the bundle store is unavailable")
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	// A copy can fail after its 200 has begun: the error is then in the body.
	if resp.StatusCode == http.StatusOK && !strings.Contains(string(msg), "<Error>") {
		return nil
	}
	err = fmt.Errorf("s3 copy %s: %s: %s", key, resp.Status, s3ErrorCode(msg))
	if resp.StatusCode == http.StatusNotFound || strings.Contains(string(msg), "NoSuchKey") {
		return errs.Wrap(errs.NotFound, err, "bundle %s not found", key)
	}
	return errs.Wrap(errs.Unavailable, err, "the bundle store is unavailable")
}

// PresignPut returns a pre-signed PUT address for key, valid for ttl. The
// uploader must send Content-Type: application/octet-stream, which is
// signed, as the SDK's presigned PutObject signs it.
func (b S3) PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error) {
	return b.presign(ctx, http.MethodPut, key, ttl, http.Header{"Content-Type": {"application/octet-stream"}})
}

// presign signs method on key for ttl with the query the SDK's S3 presign
// client sends (x-id names the operation; the payload is unsigned).
func (b S3) presign(ctx context.Context, method, key string, ttl time.Duration, header http.Header) (string, error) {
	creds, err := b.credentials(ctx)
	if err != nil {
		return "", err
	}
	op := map[string]string{http.MethodGet: "GetObject", http.MethodPut: "PutObject"}[method]
	q := url.Values{"X-Amz-Expires": {strconv.Itoa(int(ttl / time.Second))}, "x-id": {op}}
	req, err := http.NewRequestWithContext(ctx, method, b.objectURL(key)+"?"+q.Encode(), nil)
	if err != nil {
		return "", errs.Wrap(errs.Internal, err, "cannot address the bundle")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	addr, _, err := v4.NewSigner().PresignHTTP(ctx, creds, req, "UNSIGNED-PAYLOAD", "s3", b.Region, b.now(),
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		return "", errs.Wrap(errs.Internal, err, "cannot sign the bundle address")
	}
	return addr, nil
}

// credentials are what requests to the bucket are signed with.
func (b S3) credentials(ctx context.Context) (aws.Credentials, error) {
	if b.Credentials == nil {
		return aws.Credentials{}, errs.E(errs.Internal, "cannot sign for the bundle store: no AWS credentials")
	}
	creds, err := b.Credentials.Retrieve(ctx)
	if err != nil {
		return aws.Credentials{}, errs.Wrap(errs.Unavailable, err, "cannot sign for the bundle store: the credentials are unavailable")
	}
	return creds, nil
}

// now is the signing time.
func (b S3) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

func (b S3) client() *http.Client {
	if b.HTTP != nil {
		return b.HTTP
	}
	return http.DefaultClient
}

// objectURL is key's address: path style on a configured endpoint,
// virtual-hosted on AWS.
func (b S3) objectURL(key string) string {
	if b.Endpoint != "" {
		return b.Endpoint + "/" + escapePath(b.Bucket) + "/" + escapePath(key)
	}
	return "https://" + b.Bucket + ".s3." + b.Region + ".amazonaws.com/" + escapePath(key)
}

// escapePath percent-encodes every byte of an S3 key but the unreserved
// ones and "/", as S3's canonical URI does (url.PathEscape would leave
// "+", ":", "@" and others, which the signature would then not cover as
// S3 computes it).
func escapePath(key string) string {
	const hex = "0123456789ABCDEF"
	var sb strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			sb.WriteByte(c)
			continue
		}
		sb.WriteByte('%')
		sb.WriteByte(hex[c>>4])
		sb.WriteByte(hex[c&15])
	}
	return sb.String()
}
