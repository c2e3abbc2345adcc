package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
)

// secretPrefix marks an endpoint secret, as Svix writes them.
const secretPrefix = "whsec_"

// NewSecret returns a fresh endpoint secret: "whsec_" and the base64 of 24
// random bytes.
func NewSecret() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return secretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// Signature returns the webhook-signature header value for a message: one
// "v1,{base64 HMAC-SHA256 of id.timestamp.body}" per secret, space
// separated, so a receiver holding any one of them (during a rotation)
// accepts it. Invalid when a secret is not whsec_ and base64.
func Signature(secrets []string, id string, ts time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, secretPrefix))
		if err != nil || !strings.HasPrefix(s, secretPrefix) || len(key) == 0 {
			return "", errs.E(errs.Invalid, "endpoint secret must be whsec_ followed by base64")
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write(strconv.AppendInt(nil, ts.Unix(), 10))
		mac.Write([]byte{'.'})
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// SetHeaders sets the signing headers of a delivery on h, under both the
// standard-webhooks names and the svix- names (contract 4), and the JSON
// content type.
func SetHeaders(h http.Header, secrets []string, id string, ts time.Time, body []byte) error {
	sig, err := Signature(secrets, id, ts, body)
	if err != nil {
		return err
	}
	unix := strconv.FormatInt(ts.Unix(), 10)
	h.Set("Content-Type", "application/json")
	for _, p := range []string{"webhook-", "svix-"} {
		h.Set(p+"id", id)
		h.Set(p+"timestamp", unix)
		h.Set(p+"signature", sig)
	}
	return nil
}

// Tolerance is how far a delivery's timestamp may be from the receiver's
// clock, as Svix's libraries allow (5 minutes), against replays.
const Tolerance = 5 * time.Minute

// Verify checks a delivery as a receiver holding secret would: the
// webhook-* (or svix-*) headers present, the timestamp within Tolerance of
// now, and one of the v1 signatures the HMAC of id.timestamp.body. It is
// what `mainguard webhook listen` runs; the tests hold it to Svix's own
// library.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	get := func(name string) string {
		if v := h.Get("webhook-" + name); v != "" {
			return v
		}
		return h.Get("svix-" + name)
	}
	id, unix, sigs := get("id"), get("timestamp"), get("signature")
	if id == "" || unix == "" || sigs == "" {
		return errs.E(errs.Unauthorized, "missing webhook-id, webhook-timestamp or webhook-signature")
	}
	sec, err := strconv.ParseInt(unix, 10, 64)
	if err != nil {
		return errs.E(errs.Unauthorized, "webhook-timestamp is not a unix time")
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > Tolerance || d < -Tolerance {
		return errs.E(errs.Unauthorized, "webhook-timestamp is %s from now, more than %s", d.Round(time.Second), Tolerance)
	}
	want, err := Signature([]string{secret}, id, ts, body)
	if err != nil {
		return err
	}
	for sig := range strings.FieldsSeq(sigs) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errs.E(errs.Unauthorized, "no signature matches the secret")
}
