package testkit

import (
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3 starts an S3-compatible server (gofakes3, in memory) holding one
// empty bucket, closed when the test ends, and returns its address.
func S3(tb testing.TB, bucket string) string {
	tb.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	tb.Cleanup(srv.Close)
	return srv.URL
}
