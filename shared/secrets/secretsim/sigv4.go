package secretsim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sigv4Algorithm is the only signing algorithm Secrets Manager takes.
const sigv4Algorithm = "AWS4-HMAC-SHA256"

// maxSkew is how far a request's X-Amz-Date may be from the server's clock
// (AWS: "Signature expired" beyond 15 minutes).
const maxSkew = 15 * time.Minute

// authorization is a parsed SigV4 Authorization header.
type authorization struct {
	accessKey, date, region, service string
	signedHeaders                    []string
	signature                        string
}

// parseAuthorization reads the header; problem is AWS's sentence for a
// malformed one ("" when it is well formed).
func parseAuthorization(h string) (a authorization, problem string) {
	rest, ok := strings.CutPrefix(h, sigv4Algorithm+" ")
	if !ok {
		return authorization{}, "Authorization header requires the " + sigv4Algorithm + " algorithm"
	}
	var credential, signed string
	for part := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			credential = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			a.signature = v
		}
	}
	if credential == "" || signed == "" || a.signature == "" {
		return authorization{}, "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters"
	}
	scope := strings.Split(credential, "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return authorization{}, fmt.Sprintf("Credential should be scoped to a valid region, service and aws4_request terminator, got %q", credential)
	}
	a.accessKey, a.date, a.region, a.service = scope[0], scope[1], scope[2], scope[3]
	a.signedHeaders = strings.Split(signed, ";")
	return a, ""
}

func (a authorization) scope() string {
	return a.date + "/" + a.region + "/" + a.service + "/aws4_request"
}

// canonicalRequest is SigV4's canonical form of r with the given signed
// headers and payload hash.
func canonicalRequest(r *http.Request, signed []string, payloadHash string) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	b.WriteString(canonicalURI(r.URL) + "\n")
	b.WriteString(canonicalQuery(r.URL.Query()) + "\n")
	for _, name := range signed {
		b.WriteString(name + ":" + canonicalHeaderValue(r, name) + "\n")
	}
	b.WriteString("\n" + strings.Join(signed, ";") + "\n")
	b.WriteString(payloadHash)
	return b.String()
}

// canonicalURI encodes each path segment once more, as every service but
// S3 wants.
func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = uriEncode(s, false)
	}
	return strings.Join(segs, "/")
}

func canonicalQuery(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, uriEncode(k, true)+"="+uriEncode(v, true))
		}
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

// uriEncode is SigV4's UriEncode: unreserved characters kept, everything
// else %XX in upper case; '/' kept when encodeSlash is false.
func uriEncode(s string, encodeSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// canonicalHeaderValue is a header's values, trimmed, inner runs of spaces
// made one, joined with commas. Go keeps Host and Content-Length out of
// r.Header.
func canonicalHeaderValue(r *http.Request, name string) string {
	var vs []string
	switch name {
	case "host":
		vs = []string{r.Host}
	case "content-length":
		vs = []string{strconv.FormatInt(r.ContentLength, 10)}
	default:
		vs = r.Header.Values(name)
	}
	for i, v := range vs {
		vs[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vs, ",")
}

// stringToSign is SigV4's string to sign for a canonical request.
func stringToSign(amzDate, scope, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return sigv4Algorithm + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
}

// signature is the hex HMAC of the string to sign under the key derived
// from the secret access key and the scope.
func signature(secret string, a authorization, toSign string) string {
	key := hmacSHA256([]byte("AWS4"+secret), a.date)
	key = hmacSHA256(key, a.region)
	key = hmacSHA256(key, a.service)
	key = hmacSHA256(key, "aws4_request")
	return hex.EncodeToString(hmacSHA256(key, toSign))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
