package secretsim

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Account is the AWS account id of every ARN the server makes.
const Account = "123456789012"

// Server is a Secrets Manager of one region and account.
type Server struct {
	Region string
	// Now is the clock for signature expiry and version dates.
	Now func() time.Time

	mu       sync.Mutex
	secrets  []*secret
	ids      map[string]*identity // by access key id
	calls    map[string]int       // "AccessKey Operation" → successful calls
	requests int
}

type secret struct {
	name, arn, description string
	created, changed       time.Time
	versions               []*version // oldest first
}

type version struct {
	id      string
	str     *string
	bin     []byte
	stages  []string
	created time.Time
}

// Identity is a caller the server knows: its credentials and the IAM
// principal AccessDeniedException names.
type Identity struct {
	AccessKey    string
	SecretKey    string
	SessionToken string // required when set, as for a role's credentials
	Principal    string // e.g. arn:aws:sts::123456789012:assumed-role/fn-role/fn
}

type identity struct {
	Identity
	allowed map[string]map[string]bool // action → secret ARNs ("*": any)
}

// New is an empty server for region (us-east-1 when empty).
func New(region string) *Server {
	if region == "" {
		region = "us-east-1"
	}
	return &Server{Region: region, Now: time.Now, ids: map[string]*identity{}, calls: map[string]int{}}
}

// Start serves s on a local listener closed when the test ends, and
// returns its address (an endpoint for the SDK's BaseEndpoint).
func (s *Server) Start(tb testing.TB) string {
	tb.Helper()
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// AddIdentity makes id's credentials known; it may do nothing until Allow
// grants it actions.
func (s *Server) AddIdentity(id Identity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id.Principal == "" {
		id.Principal = "arn:aws:iam::" + Account + ":user/" + id.AccessKey
	}
	s.ids[id.AccessKey] = &identity{Identity: id, allowed: map[string]map[string]bool{}}
}

// Allow lets the identity of accessKey call action (e.g.
// "secretsmanager:GetSecretValue") on the secret with ARN resource, or on
// every secret with "*", as an identity-based policy would.
func (s *Server) Allow(accessKey, action, resource string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.ids[accessKey]
	if id == nil {
		panic("secretsim: Allow for an unknown access key " + accessKey)
	}
	if id.allowed[action] == nil {
		id.allowed[action] = map[string]bool{}
	}
	id.allowed[action][resource] = true
}

// CreateSecret creates a secret holding value as its AWSCURRENT version and
// returns its ARN (name plus AWS's random six-character suffix).
func (s *Server) CreateSecret(name, description, value string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	sec := &secret{name: name, description: description, created: now, changed: now,
		arn: fmt.Sprintf("arn:aws:secretsmanager:%s:%s:secret:%s-%s", s.Region, Account, name, suffix())}
	v := value
	sec.versions = append(sec.versions, &version{id: newVersionID(), str: &v, stages: []string{"AWSCURRENT"}, created: now})
	s.secrets = append(s.secrets, sec)
	return sec.arn
}

// DeleteSecret removes a secret at once (as ForceDeleteWithoutRecovery).
func (s *Server) DeleteSecret(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, sec := range s.secrets {
		if sec.name == name {
			s.secrets = append(s.secrets[:i], s.secrets[i+1:]...)
			return
		}
	}
}

// Rotate stores value as the secret's new AWSCURRENT version, as a
// rotation or PutSecretValue does, and returns the version id.
func (s *Server) Rotate(name, value string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.find(name)
	if sec == nil {
		panic("secretsim: Rotate of an unknown secret " + name)
	}
	v := value
	return s.putVersion(sec, newVersionID(), &v, nil).id
}

// Value is the secret's AWSCURRENT string, for tests to check what was
// stored; false when there is no such secret.
func (s *Server) Value(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.find(name)
	if sec == nil {
		return "", false
	}
	v := sec.stage("AWSCURRENT")
	if v == nil || v.str == nil {
		return "", false
	}
	return *v.str, true
}

// Calls is how many times the identity of accessKey called operation
// (e.g. "GetSecretValue") successfully.
func (s *Server) Calls(accessKey, operation string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[accessKey+" "+operation]
}

// Requests is how many requests reached the server, answered or refused.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// apiError is an error as Secrets Manager answers it: HTTP 400 and a JSON
// body naming the exception.
type apiError struct {
	status  int
	kind    string
	message string
}

func errorf(kind, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, kind: kind, message: fmt.Sprintf(format, args...)}
}

const jsonType = "application/x-amz-json-1.1"

// ServeHTTP answers one JSON 1.1 request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newRequestID()
	w.Header().Set("x-amzn-RequestId", reqID)
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	out, err := s.serve(r)
	if err != nil {
		w.Header().Set("Content-Type", jsonType)
		w.Header().Set("X-Amzn-ErrorType", err.kind)
		w.WriteHeader(err.status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": err.kind, "Message": err.message})
		return
	}
	w.Header().Set("Content-Type", jsonType)
	_ = json.NewEncoder(w).Encode(out)
}

// serve answers one request: what to send back, or the error AWS answers.
func (s *Server) serve(r *http.Request) (any, *apiError) {
	id, op, in, aerr := s.decode(r)
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sec, aerr := s.authorize(id, op, in.SecretID)
	if aerr != nil {
		return nil, aerr
	}
	var out any
	switch op {
	case "GetSecretValue":
		out, aerr = getSecretValue(sec, in)
	case "DescribeSecret":
		out = describeSecret(sec)
	case "PutSecretValue":
		out, aerr = s.putSecretValue(sec, in)
	}
	if aerr != nil {
		return nil, aerr
	}
	s.calls[id.AccessKey+" "+op]++
	return out, nil
}

// request is the parameters of the operations the stand-in knows.
type request struct {
	SecretID           string   `json:"SecretId"`
	VersionID          string   `json:"VersionId"`
	VersionStage       string   `json:"VersionStage"`
	ClientRequestToken string   `json:"ClientRequestToken"`
	SecretString       *string  `json:"SecretString"`
	SecretBinary       []byte   `json:"SecretBinary"`
	VersionStages      []string `json:"VersionStages"`
}

// decode reads a request as AWS does, in its order: the body, the path,
// the signature, the operation, the content type, the parameters.
func (s *Server) decode(r *http.Request) (*identity, string, request, *apiError) {
	var in request
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, "", in, errorf("SerializationException", "the request body could not be read")
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		return nil, "", in, &apiError{status: http.StatusNotFound, kind: "UnknownOperationException", message: ""}
	}
	id, aerr := s.authenticate(r, body)
	if aerr != nil {
		return nil, "", in, aerr
	}
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "secretsmanager.")
	if !ok {
		return nil, "", in, errorf("UnknownOperationException", "")
	}
	if ct := r.Header.Get("Content-Type"); ct != jsonType {
		return nil, "", in, errorf("SerializationException", "Content-Type %q is not %s", ct, jsonType)
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, "", in, errorf("SerializationException", "Start of structure or map found where not expected.")
	}
	return id, op, in, nil
}

// authorize finds the secret op is called on, once it knows op and id may
// call it (an unknown secret is named as given in the refusal). s.mu is
// held.
func (s *Server) authorize(id *identity, op, secretID string) (*secret, *apiError) {
	action := "secretsmanager:" + op
	switch op {
	case "GetSecretValue", "DescribeSecret", "PutSecretValue":
	default:
		return nil, errorf("UnknownOperationException", "")
	}
	if secretID == "" {
		return nil, errorf("ValidationException", "1 validation error detected: Value null at 'secretId' failed to satisfy constraint: Member must not be null")
	}
	sec := s.find(secretID)
	resource := secretID
	if sec != nil {
		resource = sec.arn
	}
	if !id.allowed[action][resource] && !id.allowed[action]["*"] {
		return nil, errorf("AccessDeniedException", "User: %s is not authorized to perform: %s on resource: %s because no identity-based policy allows the %s action",
			id.Principal, action, secretID, action)
	}
	if sec == nil {
		return nil, errorf("ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
	}
	return sec, nil
}

// getSecretValue is GetSecretValue's answer: the version asked for.
func getSecretValue(sec *secret, in request) (any, *apiError) {
	v, err := sec.pick(in.VersionID, in.VersionStage)
	if err != nil {
		return nil, err
	}
	o := map[string]any{"ARN": sec.arn, "Name": sec.name, "VersionId": v.id, "VersionStages": v.stages, "CreatedDate": epoch(v.created)}
	if v.str != nil {
		o["SecretString"] = *v.str
	} else {
		o["SecretBinary"] = v.bin
	}
	return o, nil
}

// describeSecret is DescribeSecret's answer: the secret without its value.
func describeSecret(sec *secret) any {
	stages := map[string][]string{}
	for _, v := range sec.versions {
		if len(v.stages) > 0 {
			stages[v.id] = v.stages
		}
	}
	o := map[string]any{"ARN": sec.arn, "Name": sec.name, "CreatedDate": epoch(sec.created),
		"LastChangedDate": epoch(sec.changed), "VersionIdsToStages": stages}
	if sec.description != "" {
		o["Description"] = sec.description
	}
	return o
}

// putSecretValue is PutSecretValue: a new version, idempotent by its
// client request token. s.mu is held.
func (s *Server) putSecretValue(sec *secret, in request) (any, *apiError) {
	if (in.SecretString == nil) == (in.SecretBinary == nil) {
		return nil, errorf("InvalidParameterException", "You must provide either SecretString or SecretBinary.")
	}
	token := in.ClientRequestToken
	if token == "" {
		token = newVersionID()
	}
	if len(token) < 32 || len(token) > 64 {
		return nil, errorf("ValidationException", "1 validation error detected: Value at 'clientRequestToken' failed to satisfy constraint: Member must have length between 32 and 64")
	}
	var out any
	for _, v := range sec.versions {
		if v.id != token {
			continue
		}
		// The same request again is answered as before; another value
		// under the same token is refused.
		if (v.str == nil) != (in.SecretString == nil) || (v.str != nil && *v.str != *in.SecretString) || !bytes.Equal(v.bin, in.SecretBinary) {
			return nil, errorf("ResourceExistsException", "You can't modify an existing version, you can only create a new version.")
		}
		out = map[string]any{"ARN": sec.arn, "Name": sec.name, "VersionId": v.id, "VersionStages": v.stages}
	}
	if out == nil {
		v := s.putVersion(sec, token, in.SecretString, in.SecretBinary)
		out = map[string]any{"ARN": sec.arn, "Name": sec.name, "VersionId": v.id, "VersionStages": v.stages}
	}
	return out, nil
}

// authenticate checks r's SigV4 signature against the identity its access
// key names, as AWS does before anything else.
func (s *Server) authenticate(r *http.Request, body []byte) (*identity, *apiError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errorf("MissingAuthenticationTokenException", "Missing Authentication Token")
	}
	a, problem := parseAuthorization(h)
	if problem != "" {
		return nil, errorf("IncompleteSignatureException", "%s", problem)
	}
	s.mu.Lock()
	id := s.ids[a.accessKey]
	s.mu.Unlock()
	if id == nil {
		return nil, errorf("UnrecognizedClientException", "The security token included in the request is invalid.")
	}
	if id.SessionToken != "" && r.Header.Get("X-Amz-Security-Token") != id.SessionToken {
		return nil, errorf("UnrecognizedClientException", "The security token included in the request is invalid.")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, perr := time.Parse("20060102T150405Z", amzDate)
	if perr != nil {
		return nil, errorf("IncompleteSignatureException", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	if now := s.Now(); t.Before(now.Add(-maxSkew)) || t.After(now.Add(maxSkew)) {
		return nil, errorf("InvalidSignatureException", "Signature expired: %s is now earlier than %s (%s - 5 min.)",
			amzDate, now.Add(-maxSkew).UTC().Format("20060102T150405Z"), now.UTC().Format("20060102T150405Z"))
	}
	if a.date != amzDate[:8] || a.region != s.Region || a.service != "secretsmanager" {
		return nil, errorf("InvalidSignatureException", "Credential should be scoped to a valid region and service: %s", a.scope())
	}
	if !containsAll(a.signedHeaders, "host", "x-amz-date") {
		return nil, errorf("InvalidSignatureException", "The request signature must sign the host and x-amz-date headers.")
	}
	payload := sha256Hex(body)
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payload {
		return nil, errorf("InvalidSignatureException", "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	want := signature(id.SecretKey, a, stringToSign(amzDate, a.scope(), canonicalRequest(r, a.signedHeaders, payload)))
	if want != a.signature {
		return nil, errorf("InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	}
	return id, nil
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// find resolves a SecretId: a name, a full ARN, or an ARN without AWS's
// random suffix.
func (s *Server) find(id string) *secret {
	for _, sec := range s.secrets {
		if id == sec.name || id == sec.arn || (strings.HasPrefix(id, "arn:") && id == sec.arn[:len(sec.arn)-7]) {
			return sec
		}
	}
	return nil
}

func (sec *secret) stage(stage string) *version {
	for _, v := range sec.versions {
		for _, st := range v.stages {
			if st == stage {
				return v
			}
		}
	}
	return nil
}

func (sec *secret) pick(versionID, stage string) (*version, *apiError) {
	if versionID != "" {
		for _, v := range sec.versions {
			if v.id == versionID && (stage == "" || containsAll(v.stages, stage)) {
				return v, nil
			}
		}
		return nil, errorf("ResourceNotFoundException", "Secrets Manager can't find the specified secret value for VersionId: %s", versionID)
	}
	if stage == "" {
		stage = "AWSCURRENT"
	}
	if v := sec.stage(stage); v != nil {
		return v, nil
	}
	return nil, errorf("ResourceNotFoundException", "Secrets Manager can't find the specified secret value for staging label: %s", stage)
}

// putVersion adds a version as AWSCURRENT: the old current becomes
// AWSPREVIOUS, and the old previous loses its label.
func (s *Server) putVersion(sec *secret, id string, str *string, bin []byte) *version {
	now := s.Now()
	for _, v := range sec.versions {
		var keep []string
		for _, st := range v.stages {
			switch st {
			case "AWSPREVIOUS":
			case "AWSCURRENT":
				keep = append(keep, "AWSPREVIOUS")
			default:
				keep = append(keep, st)
			}
		}
		v.stages = keep
	}
	v := &version{id: id, str: str, bin: bin, stages: []string{"AWSCURRENT"}, created: now}
	sec.versions = append(sec.versions, v)
	sec.changed = now
	return v
}

// epoch is a timestamp as JSON 1.1 carries it: seconds since 1970.
func epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

func suffix() string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b [6]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b[:])
}

func newVersionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func newRequestID() string { return newVersionID() }
