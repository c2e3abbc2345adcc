package lambdatest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/internal/samtemplate"
	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/secrets/secretsim"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

const (
	token         = "mg_lambdatest_token_0123456789abcdefghijklmnopq"
	webhookSecret = "hook-secret"
	appID         = 42
	installation  = 7
)

// world is one deployment: its table, a GitHub with the App installed on
// acme/web (PR 10 open), and the bundle bucket. The functions and the local
// server each get a world of their own, made alike, so the same requests
// in the same order get the same answers.
type world struct {
	table string
	gh    *githubsim.Server
	s3    string
}

// appKey is the App's key: the functions read it from Secrets Manager with
// its line breaks escaped, as a hand-pasted key arrives.
var appKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func keyPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(appKey())}))
}

func newWorld(t *testing.T) world {
	t.Helper()
	ctx := context.Background()
	db, table := storetest.NewTable(t)
	st := store.New(db, table, time.Now)
	ref, _ := repository.Parse("github.com/acme/web")
	if _, err := st.CreateOrg(ctx, "acme", "Acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddToken(ctx, "acme", token); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateRepo(ctx, "acme", ref, store.RepoSettings{}); err != nil {
		t.Fatal(err)
	}
	// The repository is acme's by its claim (tenancy), as the README's
	// deploying section has an administrator make it.
	if _, err := st.ClaimRepo(ctx, "acme", ref.Owner, ref.Name, false); err != nil {
		t.Fatal(err)
	}
	// A fixed clock makes both GitHubs' commits, and so their shas, alike.
	fixed := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	gh, err := githubsim.New(t.TempDir(), githubsim.Options{Now: func() time.Time { return fixed },
		App: &githubsim.App{ID: appID, PublicKey: &appKey().PublicKey, InstallationID: installation, TokenTTL: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gh.Close() })
	if _, err := gh.CreateRepo("acme/web", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := gh.CreateBranch("acme/web", "feature", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := gh.CommitFile("acme/web", "feature", "a.txt", "a\n", "a change"); err != nil {
		t.Fatal(err)
	}
	if _, err := gh.OpenPR("acme/web", "feature", "main", "A change", "octocat"); err != nil {
		t.Fatal(err)
	}
	return world{table: table, gh: gh, s3: testkit.S3(t, "mainguard-bundles")}
}

// deployment holds the Secrets Manager stand-in with the stack's secrets,
// and the table's IAM, which allows each function what its policy
// statements do.
type deployment struct {
	sm   *secretsim.Server
	url  string
	arns map[string]string // the template's logical id → ARN
	iam  *tableIAM
}

func newDeployment(t *testing.T) deployment {
	t.Helper()
	sm := secretsim.New("us-east-1")
	d := deployment{sm: sm, url: sm.Start(t), arns: map[string]string{}, iam: newTableIAM()}
	app, _ := json.Marshal(github.AppSecret{AppID: appID, PrivateKey: strings.ReplaceAll(keyPEM(), "\n", `\n`)})
	for id, v := range map[string]string{
		"GitHubAppSecret": string(app), "GitHubWebhookSecret": webhookSecret,
		"PageTokenSecret": "page-token-key-of-the-stack", "WebSessionSecret": "web-session-key-of-the-stack",
	} {
		d.arns[id] = sm.CreateSecret("mainguard/"+id, "", v)
	}
	return d
}

// template is template.yaml, parsed once for every function's environment
// (a parse is a tenth of a second of CPU under the race detector); the
// tests only read it.
var template = sync.OnceValues(func() (*cloudformation.Template, error) {
	return samtemplate.Parse("../../template.yaml")
})

// environment is what template.yaml gives the function, with the test's
// stand-ins for what a deployment resolves (the table, the secrets' ARNs,
// the GitHub parameter) and the endpoints of the local stand-ins; and it
// grants the function's credentials the secrets its policies name, no
// others.
func (d deployment) environment(t *testing.T, w world, folder string) map[string]string {
	t.Helper()
	tpl, err := template()
	if err != nil {
		t.Fatal(err)
	}
	fn, err := tpl.GetServerlessFunctionWithName(samtemplate.LogicalID(folder))
	if err != nil {
		t.Fatalf("%s: %v", folder, err)
	}
	env := map[string]string{}
	if g, err := tpl.GetServerlessGlobalFunction(); err == nil && g.Environment != nil {
		for k, v := range g.Environment.Variables {
			env[k] = v
		}
	}
	if fn.Environment != nil {
		for k, v := range fn.Environment.Variables {
			env[k] = v
		}
	}
	for k, v := range env {
		switch {
		case k == "TABLE_NAME":
			env[k] = w.table
		case strings.HasSuffix(k, "_SECRET_ARN"):
			arn, ok := d.arns[v]
			if !ok {
				t.Fatalf("%s: %s names %s, which the test does not make", folder, k, v)
			}
			env[k] = arn
		case k == "GITHUB_API_URL":
			env[k] = w.gh.URL()
		}
	}
	key := keyOf(folder)
	d.sm.AddIdentity(secretsim.Identity{AccessKey: key, SecretKey: secretKeyOf(folder), SessionToken: "session-" + folder,
		Principal: "arn:aws:sts::123456789012:assumed-role/" + samtemplate.LogicalID(folder) + "Role/" + folder})
	if fn.Policies != nil && fn.Policies.SAMPolicyTemplateArray != nil {
		for _, p := range *fn.Policies.SAMPolicyTemplateArray {
			if p.AWSSecretsManagerGetSecretValuePolicy != nil {
				d.sm.Allow(key, "secretsmanager:GetSecretValue", d.arns[p.AWSSecretsManagerGetSecretValuePolicy.SecretArn])
			}
		}
	}
	for k, v := range map[string]string{
		"DYNAMODB_ENDPOINT": d.iam.endpoint(t, folder, fn), "S3_ENDPOINT": w.s3, "SECRETSMANAGER_ENDPOINT": d.url,
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secretKeyOf(folder),
		"AWS_SESSION_TOKEN": "session-" + folder, "AWS_LAMBDA_FUNCTION_NAME": folder,
	} {
		env[k] = v
	}
	return env
}

// localServer is the local server's app on a world: GitHub as the App from
// the environment, its keys in the table, commands folded by the stream
// (as deployed) rather than before the answer.
func localServer(t *testing.T, w world) *app.App {
	t.Helper()
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{
			"TABLE_NAME": w.table, "DYNAMODB_ENDPOINT": storetest.Endpoint(), "AWS_REGION": "us-east-1",
			"BUNDLE_BUCKET": "mainguard-bundles", "S3_ENDPOINT": w.s3, "GITHUB_API_URL": w.gh.URL(),
			"GITHUB_APP_ID": "42", "GITHUB_APP_PRIVATE_KEY": keyPEM(), "GITHUB_WEBHOOK_SECRET": webhookSecret,
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, app.Options{DB: storetest.Client(t), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	a.MergeQueue.Driver.AfterRecord = nil
	return a
}

// localInvoke runs an event through the local server's handler of the
// function, as aws-lambda-go would, and returns its answer.
func localInvoke(t *testing.T, a *app.App, folder string, event []byte) []byte {
	t.Helper()
	var h any
	switch {
	case folder == "web":
		h = a.WebFunction()
	default:
		if fn, ok := a.EventFunction(folder); ok {
			h = fn
		} else {
			f, err := a.Function(folder)
			if err != nil {
				t.Fatal(err)
			}
			h = f
		}
	}
	out, err := lambda.NewHandler(h).Invoke(context.Background(), event)
	if err != nil {
		b, _ := json.Marshal(map[string]string{"errorMessage": err.Error()})
		return b
	}
	return out
}

// httpEvent is the API Gateway HTTP API 2.0 event of a request.
func httpEvent(method, path, body string, headers map[string]string) []byte {
	h := map[string]string{"content-type": "application/json", "x-api-token": token, "user-agent": "lambdatest"}
	for k, v := range headers {
		h[k] = v
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: path, Headers: h, Body: body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID: "123456789012", APIID: "abcdef123", DomainName: "abcdef123.execute-api.us-east-1.amazonaws.com",
			RequestID: "req-lambdatest", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.9", UserAgent: "lambdatest"},
		},
	}
	b, _ := json.Marshal(ev)
	return b
}

func signed(body string) map[string]string {
	mac := hmac.New(sha256.New, []byte(webhookSecret))
	mac.Write([]byte(body))
	return map[string]string{"x-hub-signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil))}
}

// streamEvent is the table's stream record of each item whose SK starts
// with prefix, as the fold and delivery functions' event sources send
// inserts (string attributes only: all they read).
func streamEvent(t *testing.T, table, prefix string) []byte {
	t.Helper()
	out, err := storetest.Client(t).Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	for _, item := range out.Items {
		var sk string
		_ = attributevalue.Unmarshal(item[store.AttrSK], &sk)
		if !strings.HasPrefix(sk, prefix) {
			continue
		}
		rec := events.DynamoDBEventRecord{EventName: "INSERT", EventSource: "aws:dynamodb", AWSRegion: "us-east-1"}
		rec.Change.Keys = map[string]events.DynamoDBAttributeValue{}
		rec.Change.NewImage = map[string]events.DynamoDBAttributeValue{}
		for name, v := range item {
			s, ok := v.(*types.AttributeValueMemberS)
			if !ok {
				continue
			}
			av := events.NewStringAttribute(s.Value)
			rec.Change.NewImage[name] = av
			if name == store.AttrPK || name == store.AttrSK {
				rec.Change.Keys[name] = av
			}
		}
		ev.Records = append(ev.Records, rec)
	}
	if len(ev.Records) == 0 {
		t.Fatalf("no item of %s starts with %s", table, prefix)
	}
	b, _ := json.Marshal(ev)
	return b
}

// volatile are the parts of an answer that differ between two worlds made
// alike: ids, times, request ids and signatures.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uuid>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`X-Amz-[A-Za-z-]+=[^&"\\]+`), "X-Amz-<signed>"},
	{regexp.MustCompile(`"x-request-id":"[^"]*"`), `"x-request-id":"<id>"`},
	{regexp.MustCompile(`request id [^)"]+`), "request id <id>"},
	// Each world has its own S3 stand-in, on its own port.
	{regexp.MustCompile(`http://127\.0\.0\.1:\d+`), "http://<stand-in>"},
	// The sign-in form's random anti-forgery value and its cookie.
	{regexp.MustCompile(`name=\\"csrf\\" value=\\"[^\\]*`), `name=\"csrf\" value=\"<csrf>`},
	{regexp.MustCompile(`mainguard_signin=[^;]*`), "mainguard_signin=<csrf>"},
}

func normalize(b []byte) string {
	s := string(b)
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// TestFunctionsAnswerAsTheLocalServer starts every function under the
// emulator with its template environment and only its own secrets, and
// sends each the same events as the local server, in the same order.
func TestFunctionsAnswerAsTheLocalServer(t *testing.T) {
	t.Parallel()
	bins := build(t)
	d := newDeployment(t)
	fw, lw := newWorld(t), newWorld(t)
	local := localServer(t, lw)

	fns := map[string]*function{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, f := range folders(t) {
		env := d.environment(t, fw, f)
		wg.Go(func() {
			fn := start(t, bins, f, env)
			mu.Lock()
			fns[f] = fn
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	repo := `"repo":{"host":"github.com","owner":"acme","name":"web"}`
	q := func(extra string) string { return `{` + repo + `,"targetBranch":"main"` + extra + `}` }
	th := func(extra string) string { return `{` + repo + `,"org_url_slug":"acme"` + extra + `}` }
	const testID = `"06cb6db5-f807-5198-b072-af67a0636f8a"`
	comment := `{"action":"created","issue":{"number":10,"pull_request":{}},"comment":{"id":5,"body":"just a remark","updated_at":"` + time.Now().UTC().Format(time.RFC3339) + `"},"repository":{"name":"web","full_name":"acme/web","owner":{"login":"acme"}},"sender":{"login":"octocat"}}`
	steps := []struct {
		fn    string
		event func(w world) []byte
	}{
		{"status", func(world) []byte { return httpEvent("GET", "/v1/status", "", nil) }},
		{"openapi", func(world) []byte { return httpEvent("GET", "/v1/openapi.yaml", "", nil) }},
		{"get-test-details", func(world) []byte {
			return httpEvent("POST", "/v1/flaky-tests/get-test-details", th(`,"test_id":`+testID), nil)
		}},
		{"link-ticket-to-test-case", func(world) []byte {
			return httpEvent("POST", "/v1/flaky-tests/link-ticket-to-test-case", `{`+repo+`,"test_case_id":`+testID+`,"external_ticket_id":"KAN-1"}`, nil)
		}},
		{"list-quarantined-tests", func(world) []byte {
			return httpEvent("POST", "/v1/flaky-tests/list-quarantined-tests", th(`,"page_query":{"page_size":10}`), nil)
		}},
		{"list-unhealthy-tests", func(world) []byte {
			return httpEvent("POST", "/v1/flaky-tests/list-unhealthy-tests", th(`,"status":"FLAKY","page_query":{"page_size":10,"page_token":"bogus"}`), nil)
		}},
		{"list-failing-tests", func(world) []byte {
			return httpEvent("POST", "/v1/flaky-tests/list-failing-tests", th(`,"start_time":"2026-07-01T00:00:00Z","end_time":"2026-07-02T00:00:00Z","page_query":{"page_size":10}`), nil)
		}},
		{"label-failures", func(world) []byte {
			return httpEvent("POST", "/v1/flaky-tests/label-failures", th(`,"test_ids":[`+testID+`]`), nil)
		}},
		{"get-quarantine-config", func(world) []byte {
			return httpEvent("POST", "/v1/metrics/getQuarantineConfig", `{`+repo+`,"orgUrlSlug":"acme","testIdentifiers":[]}`, nil)
		}},
		{"create-bundle-upload", func(world) []byte {
			return httpEvent("POST", "/v1/metrics/createBundleUpload", `{`+repo+`,"orgUrlSlug":"acme","headSha":"a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"}`, nil)
		}},
		{"create-queue", func(world) []byte {
			return httpEvent("POST", "/v1/createQueue", q(`,"mode":"single","concurrency":1`), nil)
		}},
		{"update-queue", func(world) []byte { return httpEvent("POST", "/v1/updateQueue", q(`,"concurrency":2`), nil) }},
		{"submit-pull-request", func(world) []byte { return httpEvent("POST", "/v1/submitPullRequest", q(`,"pr":{"number":10}`), nil) }},
		{"get-queue", func(world) []byte { return httpEvent("POST", "/v1/getQueue", q(``), nil) }},
		{"fold-queue-commands", func(w world) []byte { return streamEvent(t, w.table, "QUEUE#CMD#") }},
		{"get-submitted-pull-request", func(world) []byte {
			return httpEvent("POST", "/v1/getSubmittedPullRequest", q(`,"pr":{"number":10}`), nil)
		}},
		{"set-impacted-targets", func(world) []byte {
			return httpEvent("POST", "/v1/setImpactedTargets", q(`,"pr":{"number":10,"sha":"a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"},"impactedTargets":["//a"]`), nil)
		}},
		{"get-merge-queue-testing-details", func(world) []byte {
			return httpEvent("POST", "/v1/getMergeQueueTestingDetails", q(`,"pr":{"number":10}`), nil)
		}},
		{"list-pull-requests", func(world) []byte { return httpEvent("POST", "/v1/listPullRequests", q(``), nil) }},
		{"get-queue-history", func(world) []byte { return httpEvent("POST", "/v1/getQueueHistory", q(``), nil) }},
		{"restart-tests-on-pull-request", func(world) []byte {
			return httpEvent("POST", "/v1/restartTestsOnPullRequest", q(`,"pr":{"number":10}`), nil)
		}},
		{"cancel-pull-request", func(world) []byte { return httpEvent("POST", "/v1/cancelPullRequest", q(`,"pr":{"number":10}`), nil) }},
		{"github-webhook", func(world) []byte {
			return httpEvent("POST", "/v1/github/webhook", comment, mergeHeaders(signed(comment), map[string]string{"x-github-event": "issue_comment", "x-github-delivery": "d-1"}))
		}},
		{"github-webhook", func(world) []byte {
			return httpEvent("POST", "/v1/github/webhook", comment, map[string]string{"x-github-event": "issue_comment", "x-hub-signature-256": "sha256=00"})
		}},
		{"get-merge-queue-metrics", func(world) []byte { return httpEvent("GET", "/v1/getMergeQueueMetrics", "", nil) }},
		{"scheduler", func(world) []byte {
			return []byte(`{"version":"0","id":"x","detail-type":"Scheduled Event","source":"aws.events","account":"123456789012","time":"2026-07-01T12:00:00Z","region":"us-east-1","resources":[],"detail":{}}`)
		}},
		{"deliver-webhooks", func(world) []byte { return []byte(`{"Records":[]}`) }},
		{"ingest-bundle", func(world) []byte {
			return []byte(`{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"mainguard-bundles"},"object":{"key":"bundles/acme/not-an-upload.tar.gz","size":1}}}]}`)
		}},
		{"web", func(world) []byte { return httpEvent("GET", "/signin", "", map[string]string{"content-type": ""}) }},
		{"web", func(world) []byte { return httpEvent("GET", "/v1/nowhere", "", nil) }},
		{"delete-queue", func(world) []byte { return httpEvent("POST", "/v1/deleteQueue", q(``), nil) }},
	}
	seen := map[string]bool{}
	for i, s := range steps {
		fn := fns[s.fn]
		if fn == nil {
			t.Fatalf("step %d: no function %s", i, s.fn)
		}
		seen[s.fn] = true
		want := normalize(localInvoke(t, local, s.fn, s.event(lw)))
		t.Logf("step %d, %s: %.160s", i, s.fn, want)
		code, got := fn.invoke(t, s.event(fw))
		if code != 200 {
			t.Errorf("step %d, %s: the emulator answered %d: %s\n%s", i, s.fn, code, got, fn.out)
			continue
		}
		if diff := cmp.Diff(normalize(got), want); diff != "" {
			t.Errorf("step %d, %s: the function and the local server answer differently (-function +local):\n%s", i, s.fn, diff)
		}
	}
	for f := range fns {
		if !seen[f] {
			t.Errorf("no step drives %s", f)
		}
	}
	// Every function did its work with the table actions its policy
	// statements grant (template.yaml; shared/app's functionActions).
	d.iam.mu.Lock()
	if len(d.iam.denied) > 0 {
		t.Errorf("requests IAM would refuse: %q", d.iam.denied)
	}
	for _, f := range []string{"status", "get-queue", "create-queue", "scheduler"} {
		if len(d.iam.calls[f]) == 0 {
			t.Errorf("%s made no request through its table endpoint", f)
		}
	}
	for f := range fns {
		t.Logf("%s used %v", f, d.iam.calls[f])
	}
	d.iam.mu.Unlock()
	// The functions read the secrets they needed, with their own keys only.
	for f, want := range map[string]bool{"github-webhook": true, "list-unhealthy-tests": true, "fold-queue-commands": true, "get-queue": false, "status": false} {
		if got := d.sm.Calls(keyOf(f), "GetSecretValue") > 0; got != want {
			t.Errorf("%s read a secret: %v, want %v", f, got, want)
		}
	}

	// The largest body a function can be sent whole gets the 413 sentence
	// from the function as from the local server: one byte over MaxBody.
	big := httpEvent("POST", "/v1/flaky-tests/get-test-details", strings.Repeat(" ", api.MaxBody+1), nil)
	code, got := fns["get-test-details"].invoke(t, big)
	want := normalize(localInvoke(t, local, "get-test-details", big))
	if code != 200 || !strings.Contains(string(got), `"statusCode":413`) || !strings.Contains(string(got), "larger than a deployed function can receive") {
		t.Errorf("MaxBody + 1: %d %.300s", code, got)
	}
	if diff := cmp.Diff(normalize(got), want); diff != "" {
		t.Errorf("MaxBody + 1: the function and the local server answer differently (-function +local):\n%s", diff)
	}
	// A 6 MB + 1 byte body never reaches a function: the emulator, as
	// Lambda, reads no more than 6 MiB (and 100 bytes) of an event, and the
	// function gets a truncated one. Deployed, API Gateway answers such a
	// request itself. The local server answers it with the 413 sentence.
	huge := httpEvent("POST", "/v1/flaky-tests/get-test-details", strings.Repeat(" ", 6<<20+1), nil)
	if _, got := fns["get-test-details"].invoke(t, huge); strings.Contains(string(got), `"statusCode":200`) {
		t.Errorf("6 MB + 1 byte reached the function whole: %.300s", got)
	}
	if got := localInvoke(t, local, "get-test-details", huge); !strings.Contains(string(got), `"statusCode":413`) {
		t.Errorf("6 MB + 1 byte, local server: %.300s", got)
	}

	// Last, on the same deployment and world (the steps above are done
	// with them): its own set-up would cost a world and a function start.
	t.Run("GitHubSecretUnreadable", func(t *testing.T) { gitHubSecretUnreadable(t, bins, d, fw, fns["get-queue"]) })
}

func mergeHeaders(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// gitHubSecretUnreadable: with the GitHub App's secret unreadable (its
// grant taken away), the webhook function still starts and serves what
// needs no GitHub, and answers 503 with a sentence only for a command that
// must ask GitHub; functions without GitHub access (queue, get-queue
// started with its template environment) serve as ever.
func gitHubSecretUnreadable(t *testing.T, bins binaries, d deployment, w world, queue *function) {
	env := d.environment(t, w, "github-webhook")
	// Another key, granted only the webhook secret.
	env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env["AWS_SESSION_TOKEN"] = "AKIDNOGITHUB", "no-github", ""
	d.sm.AddIdentity(secretsim.Identity{AccessKey: "AKIDNOGITHUB", SecretKey: "no-github"})
	d.sm.Allow("AKIDNOGITHUB", "secretsmanager:GetSecretValue", d.arns["GitHubWebhookSecret"])
	hook := start(t, bins, "github-webhook", env)

	deliver := func(event, body string) (int, string) {
		t.Helper()
		code, out := hook.invoke(t, httpEvent("POST", "/v1/github/webhook", body, mergeHeaders(signed(body), map[string]string{"x-github-event": event, "x-github-delivery": "d-" + event})))
		if code != 200 {
			t.Fatalf("the emulator answered %d: %s\n%s", code, out, hook.out)
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("%s: %s", err, out)
		}
		return resp.StatusCode, resp.Body
	}
	if code, body := deliver("ping", `{"zen":"Design for failure.","hook_id":1}`); code != 200 {
		t.Errorf("a ping: %d %s", code, body)
	}
	// A command is taken within an hour of its comment (tenancy's replay window).
	merge := `{"action":"created","issue":{"number":10,"pull_request":{}},"comment":{"id":6,"body":"/trunk merge","updated_at":"` + time.Now().UTC().Format(time.RFC3339) + `"},"repository":{"name":"web","full_name":"acme/web","owner":{"login":"acme"}},"sender":{"login":"octocat"}}`
	if code, body := deliver("issue_comment", merge); code != 503 || !strings.Contains(body, "GitHub did not answer; redeliver the webhook") {
		t.Errorf("a command with the App's secret unreadable: %d %s", code, body)
	}
	// The 503 is the secret's doing, not another failure of the call to
	// GitHub: the function's log says which secret, and why. The log
	// reaches us through the emulator, maybe after the answer: a minute's
	// guard against a hang, not a speed requirement.
	for deadline := time.Now().Add(time.Minute); !strings.Contains(hook.out.String(), "the deployment's github-app secret cannot be read (Secrets Manager answered AccessDeniedException)"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the function's log does not put the 503 down to the App's secret:\n%s", hook.out)
			break
		}
	}
	if code, out := queue.invoke(t, httpEvent("POST", "/v1/getQueue", `{"repo":{"host":"github.com","owner":"acme","name":"web"},"targetBranch":"main"}`, nil)); code != 200 || !strings.Contains(string(out), `"statusCode":404`) {
		t.Errorf("get-queue, its App secret unreadable, on a claimed repository: %d %s", code, out)
	}
}
