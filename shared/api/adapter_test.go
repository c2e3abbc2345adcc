package api

import "testing"

// TestBodySizeInEvent counts a body as the API Gateway event carries it.
func TestBodySizeInEvent(t *testing.T) {
	cases := []struct {
		body   string
		base64 bool
		want   int64
	}{
		{`{"a":1}`, false, 9}, // two quotes escaped
		{"a\\b\n\x01", false, 1 + 2 + 1 + 2 + 6},
		{"héllo", false, 6},   // UTF-8 passes as it is
		{"aGVsbG8=", true, 8}, // base64 as carried
	}
	for _, c := range cases {
		if got := BodySizeInEvent(c.body, c.base64); got != c.want {
			t.Errorf("BodySizeInEvent(%q, %v) = %d, want %d", c.body, c.base64, got, c.want)
		}
	}
	if MaxBody != 6225920 || MaxBinaryBody != 4669440 {
		t.Errorf("limits %d and %d, docs/api.md says 6225920 and 4669440", MaxBody, MaxBinaryBody)
	}
	for ct, text := range map[string]bool{"application/json": true, "application/json; charset=utf-8": true, "text/plain": true,
		"application/vnd.api+json": true, "application/octet-stream": false, "": false, "application/x-www-form-urlencoded": false} {
		if textMedia(ct) != text {
			t.Errorf("textMedia(%q) = %v", ct, !text)
		}
	}
}
