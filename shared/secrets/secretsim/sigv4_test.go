package secretsim

import (
	"net/http"
	"testing"
)

// TestSignatureOfAWSExample checks the verifier's signing against the
// "get-vanilla" case of AWS's Signature Version 4 test suite (credentials
// AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, 2015-08-30), whose
// expected signature AWS publishes: the server computes signatures as AWS
// does, independently of the SDK that signs the requests it checks.
func TestSignatureOfAWSExample(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://example.amazonaws.com/", nil)
	req.Header.Set("X-Amz-Date", "20150830T123600Z")
	a := authorization{accessKey: "AKIDEXAMPLE", date: "20150830", region: "us-east-1", service: "service", signedHeaders: []string{"host", "x-amz-date"}}
	canonical := canonicalRequest(req, a.signedHeaders, sha256Hex(nil))
	got := signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", a, stringToSign("20150830T123600Z", a.scope(), canonical))
	if want := "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"; got != want {
		t.Errorf("signature %s, want %s\ncanonical request:\n%s", got, want, canonical)
	}
}
