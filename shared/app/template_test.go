package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7/cloudformation"
	cfdynamodb "github.com/awslabs/goformation/v7/cloudformation/dynamodb"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"

	"github.com/mainguard/mainguard/internal/samtemplate"
	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// The IAM actions a function may be granted on the table, by kind. A
// transaction's Put, Update, Delete and ConditionCheck are authorized as
// PutItem, UpdateItem, DeleteItem and ConditionCheckItem; a batch as
// BatchGetItem or BatchWriteItem (AWS, "Using IAM with DynamoDB
// transactions").
var (
	tableReads  = []string{"dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"}
	tableWrites = []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
	// rateLimit is the organization rate limit's write (store.TakeTokens),
	// which every authenticated request makes: UpdateItem of the bucket's
	// own attributes only, so a reader can write nothing else.
	rateLimit = "dynamodb:UpdateItem if ForAllValues:StringEquals dynamodb:Attributes = PK, SK, full_at, ttl"
)

// functionActions are the IAM actions each function's policies grant (its
// policy statements, by Sid), beside its secrets (functionSecrets) and the
// stream reads SAM adds for deliver-webhooks' event source. Nothing else:
// no wildcard, no managed policy, no SAM policy template but the secret
// one. The sets are what each function's binary can call (the DynamoDB
// client's and package blobs' methods its linker keeps, README "What each
// function can touch"); the readers, whose binaries link writers they
// never call, get reads and the rate limit's write only, and
// internal/lambdatest runs every function with exactly these actions
// enforced.
var functionActions = map[string][]string{
	"status":  {"Table: dynamodb:GetItem"}, // public: reads the health item only
	"openapi": nil,                         // serves the embedded OpenAPI document
	// readers
	"get-test-details":                reader(),
	"get-quarantine-config":           reader(),
	"label-failures":                  reader(),
	"list-quarantined-tests":          reader(),
	"list-unhealthy-tests":            reader(),
	"list-failing-tests":              reader(),
	"get-queue":                       reader(),
	"get-submitted-pull-request":      reader(),
	"get-merge-queue-testing-details": reader(),
	"list-pull-requests":              reader(),
	"get-queue-history":               reader(),
	"get-merge-queue-metrics":         reader(),
	// writers
	"link-ticket-to-test-case":      table(tableReads, tableWrites),
	"create-bundle-upload":          append(table(tableReads, tableWrites), "Bundles: s3:PutObject"), // signs the PUT address
	"deliver-webhooks":              table([]string{"dynamodb:GetItem", "dynamodb:Query"}, tableWrites),
	"ingest-bundle":                 append(table(tableReads, tableWrites, batchWrite), "BundleListing: s3:ListBucket", "Bundles: s3:GetObject"),
	"scheduler":                     append(table(tableReads, tableWrites, batchWrite), "BundleListing: s3:ListBucket", "Bundles: s3:GetObject", "Bundles: s3:PutObject"),
	"cancel-pull-request":           table(tableReads, tableWrites, batchWrite),
	"create-queue":                  table(tableReads, tableWrites, batchWrite),
	"delete-queue":                  table(tableReads, tableWrites, batchWrite),
	"fold-queue-commands":           table(tableReads, tableWrites, batchWrite),
	"github-webhook":                table(tableReads, tableWrites, batchWrite),
	"restart-tests-on-pull-request": table(tableReads, tableWrites, batchWrite),
	"set-impacted-targets":          table(tableReads, tableWrites, batchWrite),
	"submit-pull-request":           table(tableReads, tableWrites, batchWrite),
	"update-queue":                  table(tableReads, tableWrites, batchWrite),
	// The web app pauses, cancels and overrides quarantine itself.
	"web": table(tableReads, tableWrites, batchWrite),
}

var batchWrite = []string{"dynamodb:BatchWriteItem"}

// table is the Table statement's actions, as functionActions lists them.
func table(sets ...[]string) []string {
	var out []string
	for _, s := range sets {
		for _, a := range s {
			out = append(out, "Table: "+a)
		}
	}
	slices.Sort(out)
	return out
}

// reader is what a read endpoint is granted: reads, and the rate limit.
func reader() []string { return append(table(tableReads), "RateLimit: "+rateLimit) }

// functionSecrets are the deployment's secrets each function reads, and
// no others: its environment names each one's ARN (config.SecretVar, a
// !Ref of the secret's resource) and its policies let it read exactly these
// (AWSSecretsManagerGetSecretValuePolicy). A function not listed reads
// none. The functions test (internal/lambdatest) runs every function under
// Lambda's emulator with these alone. Least-privilege rules for the other
// resources join this table's neighbours.
var functionSecrets = map[string][]string{
	"github-webhook":      {config.SecretGitHubApp, config.SecretGitHubWebhook},
	"scheduler":           {config.SecretGitHubApp}, // advances the queues
	"fold-queue-commands": {config.SecretGitHubApp}, // folds, then advances
	"update-queue":        {config.SecretGitHubApp}, // advances after a change
	// The queue's other endpoints check that their organization owns the
	// repository: by its claim, or by the App installation that covers
	// it, which only the App can ask GitHub (tenancy).
	"create-queue":                    {config.SecretGitHubApp},
	"get-queue":                       {config.SecretGitHubApp},
	"delete-queue":                    {config.SecretGitHubApp},
	"submit-pull-request":             {config.SecretGitHubApp},
	"cancel-pull-request":             {config.SecretGitHubApp},
	"restart-tests-on-pull-request":   {config.SecretGitHubApp},
	"get-submitted-pull-request":      {config.SecretGitHubApp},
	"set-impacted-targets":            {config.SecretGitHubApp},
	"get-merge-queue-testing-details": {config.SecretGitHubApp},
	"list-pull-requests":              {config.SecretGitHubApp},
	"get-queue-history":               {config.SecretGitHubApp},
	"web":                             {config.SecretGitHubApp, config.SecretWebSession},
	"list-quarantined-tests":          {config.SecretPageToken},
	"list-unhealthy-tests":            {config.SecretPageToken},
	"list-failing-tests":              {config.SecretPageToken},
}

// secretResources are the template's secret of each name.
var secretResources = map[string]string{
	config.SecretGitHubApp:     "GitHubAppSecret",
	config.SecretGitHubWebhook: "GitHubWebhookSecret",
	config.SecretPageToken:     "PageTokenSecret",
	config.SecretWebSession:    "WebSessionSecret",
}

// secretLooking are words of an environment variable's name that hold a
// secret's value, not its ARN: no function may have one.
var secretLooking = regexp.MustCompile(`(?i)(SECRET|PRIVATE|PASSWORD|TOKEN|KEY|PEM|CREDENTIAL)`)

const (
	templatePath = "../../template.yaml"
	functionsDir = "../../functions"
	lambdaMkPath = "../../lambda.mk"

	// Logical ids every function refers to.
	tableID   = "Table"
	httpApiID = "HttpApi"
)

func TestTemplate(t *testing.T) {
	t.Parallel()
	tpl := parseTemplate(t)
	folders := functionFolders(t)
	endpoints := routeTable(t)
	if len(folders) == 0 || len(endpoints) == 0 {
		t.Fatalf("nothing to check: %d folders under functions/, %d endpoints in the route table", len(folders), len(endpoints))
	}
	for _, p := range checkTemplate(tpl, folders, endpoints, lambdaMk(t)) {
		t.Error(p)
	}
}

// TestTemplateChecker breaks one thing at a time in copies of the real
// inputs and expects checkTemplate to name it, so TestTemplate passing means
// the template, functions/, the route table and lambda.mk really agree.
func TestTemplateChecker(t *testing.T) {
	t.Parallel()
	endpoints := routeTable(t)
	folders := functionFolders(t)
	mk := lambdaMk(t)
	// Parsed once (a third of a second each under the race detector); each
	// case breaks a deep copy of its own.
	parsed := parseTemplate(t)
	if p := checkTemplate(parsed, folders, endpoints, mk); len(p) > 0 {
		t.Fatalf("the real inputs must pass first: %q", p)
	}
	fn := func(tpl *cloudformation.Template, id string) *serverless.Function {
		t.Helper()
		f, err := tpl.GetServerlessFunctionWithName(id)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	httpEvent := func(tpl *cloudformation.Template, id string) *serverless.Function_HttpApiEvent {
		t.Helper()
		for _, ev := range fn(tpl, id).Events {
			if ev.Properties != nil && ev.Properties.HttpApiEvent != nil {
				return ev.Properties.HttpApiEvent
			}
		}
		t.Fatalf("%s has no HttpApi event", id)
		return nil
	}
	table := func(tpl *cloudformation.Template) *cfdynamodb.Table {
		t.Helper()
		tb, err := tpl.GetDynamoDBTableWithName(tableID)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	cases := []struct {
		name   string
		want   string // a substring of one of the problems
		mutate func(tpl *cloudformation.Template, folders *[]string, eps *[]api.Endpoint, mk *string)
	}{
		{"function resource removed", "functions/get-test-details: no AWS::Serverless::Function GetTestDetailsFunction",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				delete(tpl.Resources, "GetTestDetailsFunction")
			}},
		{"new folder without a function", "functions/new-thing: no AWS::Serverless::Function NewThingFunction",
			func(_ *cloudformation.Template, f *[]string, _ *[]api.Endpoint, _ *string) {
				*f = append(*f, "new-thing")
			}},
		{"new folder without an endpoint", `functions/new-thing: no endpoint named "new-thing"`,
			func(_ *cloudformation.Template, f *[]string, _ *[]api.Endpoint, _ *string) {
				*f = append(*f, "new-thing")
			}},
		{"folder removed", "StatusFunction has no folder functions/status",
			func(_ *cloudformation.Template, f *[]string, _ *[]api.Endpoint, _ *string) {
				*f = slices.DeleteFunc(slices.Clone(*f), func(s string) bool { return s == "status" })
			}},
		{"endpoint without a folder", `route table: endpoint "new-thing" (POST /v1/new-thing) has no folder functions/new-thing`,
			func(_ *cloudformation.Template, _ *[]string, e *[]api.Endpoint, _ *string) {
				*e = append(slices.Clone(*e), api.Endpoint{Name: "new-thing", Method: "POST", Path: "/new-thing"})
			}},
		{"HttpApi event removed", "LinkTicketToTestCaseFunction: no HttpApi event",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "LinkTicketToTestCaseFunction").Events = nil
			}},
		{"event function without its event", "IngestBundleFunction: events [], want one S3 event",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "IngestBundleFunction").Events = nil
			}},
		{"route path differs", `GetTestDetailsFunction: route path "/v1/flaky-tests/get-test-detail", route table says "/v1/flaky-tests/get-test-details"`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				p := "/v1/flaky-tests/get-test-detail"
				httpEvent(tpl, "GetTestDetailsFunction").Path = &p
			}},
		{"web app on a path of its own", `WebFunction: route "ANY" "/{proxy+}", want the $default route`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				m, p := "ANY", "/{proxy+}"
				httpEvent(tpl, "WebFunction").Method, httpEvent(tpl, "WebFunction").Path = &m, &p
			}},
		{"route method not ANY", `StatusFunction: route method "GET", want ANY`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				m := "GET"
				httpEvent(tpl, "StatusFunction").Method = &m
			}},
		{"route on another API", `StatusFunction: route ApiId "Other"`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				id := "Other"
				httpEvent(tpl, "StatusFunction").ApiId = &id
			}},
		{"x86_64", `StatusFunction: architectures [x86_64], want [arm64]`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "StatusFunction").Architectures = []string{"x86_64"}
			}},
		{"other runtime", `GetTestDetailsFunction: runtime "go1.x", want provided.al2023`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				r := "go1.x"
				fn(tpl, "GetTestDetailsFunction").Runtime = &r
			}},
		{"CodeUri elsewhere", `StatusFunction: CodeUri "functions/status", want "."`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				u := "functions/status"
				fn(tpl, "StatusFunction").CodeUri = &serverless.Function_CodeUri{String: &u}
			}},
		{"no BuildMethod", "StatusFunction: Metadata.BuildMethod <nil>, want makefile",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "StatusFunction").AWSCloudFormationMetadata = nil
			}},
		{"no make target", "lambda.mk: no target build-LinkTicketToTestCaseFunction running $(call lambda,link-ticket-to-test-case)",
			func(_ *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, mk *string) {
				*mk = strings.ReplaceAll(*mk, "build-LinkTicketToTestCaseFunction:", "build-Other:")
			}},
		{"make target builds another folder", "lambda.mk: no target build-StatusFunction running $(call lambda,status)",
			func(_ *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, mk *string) {
				*mk = strings.ReplaceAll(*mk, "$(call lambda,status)", "$(call lambda,get-test-details)")
			}},
		{"writer with a reader's policy", "LinkTicketToTestCaseFunction: grants",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "LinkTicketToTestCaseFunction").Policies = fn(tpl, "GetTestDetailsFunction").Policies
			}},
		{"tableless function with a table policy", "OpenapiFunction: grants",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "OpenapiFunction").Policies = fn(tpl, "StatusFunction").Policies
			}},
		{"reader with a writer's policy", "GetTestDetailsFunction: grants",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "GetTestDetailsFunction").Policies = fn(tpl, "LinkTicketToTestCaseFunction").Policies
			}},
		{"wildcard action", `GetQueueFunction: statement "Table": action "dynamodb:*" is a wildcard`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				st := (*fn(tpl, "GetQueueFunction").Policies.IAMPolicyDocumentArray)[0].Statement[0].(map[string]any)
				st["Action"] = []any{"dynamodb:*"}
			}},
		{"wildcard resource", `IngestBundleFunction: statement "Bundles": resources ["*"]`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				for _, st := range (*fn(tpl, "IngestBundleFunction").Policies.IAMPolicyDocumentArray)[0].Statement {
					if st.(map[string]any)["Sid"] == "Bundles" {
						st.(map[string]any)["Resource"] = "*"
					}
				}
			}},
		{"rate limit unconditioned", "ListPullRequestsFunction: grants",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				for _, st := range (*fn(tpl, "ListPullRequestsFunction").Policies.IAMPolicyDocumentArray)[0].Statement {
					delete(st.(map[string]any), "Condition")
				}
			}},
		{"wide SAM template", "SchedulerFunction: a SAM policy template other than AWSSecretsManagerGetSecretValuePolicy",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				f := fn(tpl, "SchedulerFunction")
				*f.Policies.SAMPolicyTemplateArray = append(*f.Policies.SAMPolicyTemplateArray, serverless.Function_SAMPolicyTemplate{
					S3CrudPolicy: &serverless.Function_BucketSAMPT{BucketName: "mainguard-bundles"}})
			}},
		{"attribute definition differs", "Table: AttributeDefinitions [GSI1PK:N GSI1SK:S GSI2PK:S GSI2SK:S PK:S SK:S], store.TableSpec has [GSI1PK:S GSI1SK:S GSI2PK:S GSI2SK:S PK:S SK:S]",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				for i, a := range table(tpl).AttributeDefinitions {
					if a.AttributeName == "GSI1PK" {
						table(tpl).AttributeDefinitions[i].AttributeType = "N"
					}
				}
			}},
		{"key schema differs", "Table: KeySchema [SK:HASH PK:RANGE], store.TableSpec has [PK:HASH SK:RANGE]",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				ks := table(tpl).KeySchema
				ks[0].AttributeName, ks[1].AttributeName = ks[1].AttributeName, ks[0].AttributeName
			}},
		{"GSI projection differs", "Table: GSI1 projection KEYS_ONLY [], store.TableSpec has ALL []",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				p := "KEYS_ONLY"
				table(tpl).GlobalSecondaryIndexes[0].Projection.ProjectionType = &p
			}},
		{"GSI missing", "Table: GlobalSecondaryIndexes [], store.TableSpec has [GSI1 GSI2]",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				table(tpl).GlobalSecondaryIndexes = nil
			}},
		{"TTL attribute differs", `Table: TimeToLiveSpecification "expires" enabled=true, want "ttl" enabled`,
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				a := "expires"
				table(tpl).TimeToLiveSpecification.AttributeName = &a
			}},
		{"a secret for every function", "Globals: environment variable GITHUB_APP_SECRET_ARN gives every function",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				g, _ := tpl.GetServerlessGlobalFunction()
				g.Environment.Variables["GITHUB_APP_SECRET_ARN"] = "GitHubAppSecret"
			}},
		{"a secret value in the environment", "StatusFunction: environment variable GITHUB_APP_PRIVATE_KEY looks like a secret",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "StatusFunction").Environment = &serverless.Function_FunctionEnvironment{Variables: map[string]string{"GITHUB_APP_PRIVATE_KEY": "-----BEGIN"}}
			}},
		{"a NoEcho parameter", "parameter GitHubApiUrl is NoEcho",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				p := tpl.Parameters["GitHubApiUrl"]
				yes := true
				p.NoEcho = &yes
				tpl.Parameters["GitHubApiUrl"] = p
			}},
		{"a secret's ARN without the right to read it", "WebFunction: may read the secrets [GitHubAppSecret], want exactly [GitHubAppSecret WebSessionSecret]",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				ps := *fn(tpl, "WebFunction").Policies.SAMPolicyTemplateArray
				*fn(tpl, "WebFunction").Policies.SAMPolicyTemplateArray = slices.DeleteFunc(slices.Clone(ps), func(p serverless.Function_SAMPolicyTemplate) bool {
					return p.AWSSecretsManagerGetSecretValuePolicy != nil && p.AWSSecretsManagerGetSecretValuePolicy.SecretArn == "WebSessionSecret"
				})
			}},
		{"the right to read a secret the function does not need", "GetMergeQueueMetricsFunction: may read the secrets [GitHubAppSecret], want exactly []",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				f := fn(tpl, "GetMergeQueueMetricsFunction")
				*f.Policies.SAMPolicyTemplateArray = append(*f.Policies.SAMPolicyTemplateArray, serverless.Function_SAMPolicyTemplate{
					AWSSecretsManagerGetSecretValuePolicy: &serverless.Function_SecretArnSAMPT{SecretArn: "GitHubAppSecret"}})
			}},
		{"a secret's ARN missing", "ListFailingTestsFunction: no PAGE_TOKEN_SECRET_ARN in its environment",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "ListFailingTestsFunction").Environment = nil
			}},
		{"a secret under another name", "PageTokenSecret: Name",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				sec, _ := tpl.GetSecretsManagerSecretWithName("PageTokenSecret")
				n := "page-token"
				sec.Name = &n
			}},
		{"table not retained", "Table: DeletionPolicy",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				table(tpl).AWSCloudFormationDeletionPolicy = ""
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, f, e, m := deepCopy(reflect.ValueOf(parsed)).Interface().(*cloudformation.Template), slices.Clone(folders), slices.Clone(endpoints), mk
			c.mutate(tpl, &f, &e, &m)
			problems := checkTemplate(tpl, f, e, m)
			for _, p := range problems {
				if strings.Contains(p, c.want) {
					return
				}
			}
			t.Errorf("checkTemplate missed %q; it reported:\n%s", c.want, strings.Join(problems, "\n"))
		})
	}
	// The copies were deep: no case's change reached the parse they share.
	if p := checkTemplate(parsed, folders, endpoints, mk); len(p) > 0 {
		t.Errorf("the cases changed the shared parse: %q", p)
	}
}

// checkTemplate lists every way tpl disagrees with the folders of
// functions/, the route table, lambda.mk's text and store.TableSpec.
func checkTemplate(tpl *cloudformation.Template, folders []string, endpoints []api.Endpoint, makefileText string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	isFolder := map[string]bool{}
	for _, f := range folders {
		isFolder[f] = true
	}
	endpointOf := map[string]api.Endpoint{}
	for _, ep := range endpoints {
		if _, dup := endpointOf[ep.Name]; dup {
			add("route table: two endpoints named %q", ep.Name)
		}
		endpointOf[ep.Name] = ep
		if !isFolder[ep.Name] && !ep.LocalOnly {
			add("route table: endpoint %q (%s /v1%s) has no folder functions/%s", ep.Name, ep.Method, ep.Path, ep.Name)
		}
	}

	// What Globals.Function gives every function.
	var global struct {
		runtime, handler string
		arch             []string
		env              map[string]string
		codeURI          *serverless.Function_CodeUri
	}
	if g, err := tpl.GetServerlessGlobalFunction(); err == nil {
		global.runtime, global.handler = deref(g.Runtime), deref(g.Handler)
		if g.Architectures != nil {
			global.arch = *g.Architectures
		}
		if g.Environment != nil {
			global.env = g.Environment.Variables
		}
		global.codeURI = g.CodeUri
	}

	if _, err := tpl.GetServerlessHttpApiWithName(httpApiID); err != nil {
		add("template.yaml: no AWS::Serverless::HttpApi %s", httpApiID)
	}

	functions := tpl.GetAllServerlessFunctionResources()
	folderOf := map[string]string{}
	for _, f := range folders {
		folderOf[logicalID(f)] = f
	}
	routeOwner := map[string]string{} // "METHOD path" → logical id
	for _, id := range sortedKeys(functions) {
		fn := functions[id]
		folder, ok := folderOf[id]
		if !ok {
			add("template.yaml: function %s has no folder functions/%s", id, folderName(id))
		}
		ep, hasEndpoint := endpointOf[folder]

		runtime, handler, arch, codeURI := global.runtime, global.handler, global.arch, global.codeURI
		if fn.Runtime != nil {
			runtime = *fn.Runtime
		}
		if fn.Handler != nil {
			handler = *fn.Handler
		}
		if fn.Architectures != nil {
			arch = fn.Architectures
		}
		if fn.CodeUri != nil {
			codeURI = fn.CodeUri
		}
		if runtime != "provided.al2023" {
			add("%s: runtime %q, want provided.al2023", id, runtime)
		}
		if handler != "bootstrap" {
			add("%s: handler %q, want bootstrap", id, handler)
		}
		if !slices.Equal(arch, []string{"arm64"}) {
			add("%s: architectures %v, want [arm64]", id, arch)
		}
		if codeURI == nil || codeURI.String == nil || *codeURI.String != "." {
			got := "<none>"
			if codeURI != nil && codeURI.String != nil {
				got = *codeURI.String
			}
			add("%s: CodeUri %q, want \".\" (the module root: functions share code)", id, got)
		}
		if bm := fn.AWSCloudFormationMetadata["BuildMethod"]; bm != "makefile" {
			add("%s: Metadata.BuildMethod %v, want makefile", id, bm)
		}
		env := maps(global.env, fn.Environment)
		if env["TABLE_NAME"] != tableID {
			add("%s: TABLE_NAME is %q, want !Ref %s", id, env["TABLE_NAME"], tableID)
		}
		if folder != "" {
			target := regexp.MustCompile(`(?m)^build-` + regexp.QuoteMeta(id) + `:[^\n]*\n\t\$\(call lambda,` + regexp.QuoteMeta(folder) + `\)[ \t]*$`)
			if !target.MatchString(makefileText) {
				add("lambda.mk: no target build-%s running $(call lambda,%s)", id, folder)
			}
		}
		checkPolicies(id, folder, fn, add)
		checkSecrets(id, folder, fn, env, add)
		checkLogGroup(tpl, id, add)

		if kind, ok := api.EventFunctions[folder]; ok {
			var kinds []string
			for _, name := range sortedKeys(fn.Events) {
				kinds = append(kinds, fn.Events[name].Type)
			}
			if !slices.Equal(kinds, []string{kind}) {
				add("%s: events %v, want one %s event (it is an event function)", id, kinds, kind)
			}
			continue
		}
		var routes []*serverless.Function_HttpApiEvent
		for _, name := range sortedKeys(fn.Events) {
			ev := fn.Events[name]
			if ev.Type != "HttpApi" {
				continue
			}
			if ev.Properties == nil || ev.Properties.HttpApiEvent == nil {
				add("%s: HttpApi event %s has properties goformation cannot read", id, name)
				continue
			}
			routes = append(routes, ev.Properties.HttpApiEvent)
		}
		if len(routes) == 0 {
			add("%s: no HttpApi event", id)
		}
		if len(routes) > 1 {
			add("%s: %d HttpApi events, want one (one endpoint per function)", id, len(routes))
		}
		for _, r := range routes {
			method, path := deref(r.Method), deref(r.Path)
			if deref(r.ApiId) != httpApiID {
				add("%s: route ApiId %q, want !Ref %s", id, deref(r.ApiId), httpApiID)
			}
			if folder == api.WebFunction {
				// The web app takes what no route takes: no Method and no
				// Path make SAM declare the API's $default route.
				if method != "" || path != "" {
					add("%s: route %q %q, want the $default route (no Method, no Path)", id, method, path)
				}
			} else if method != "ANY" {
				add("%s: route method %q, want ANY (the code answers 405 itself)", id, method)
			}
			if hasEndpoint && path != "/v1"+ep.Path {
				add("%s: route path %q, route table says %q", id, path, "/v1"+ep.Path)
			}
			key := method + " " + path
			if other, dup := routeOwner[key]; dup {
				add("%s: route %s is also %s's", id, key, other)
			}
			routeOwner[key] = id
		}
	}
	for _, f := range folders {
		if _, ok := functions[logicalID(f)]; !ok {
			add("functions/%s: no AWS::Serverless::Function %s in template.yaml", f, logicalID(f))
		}
		_, isEvent := api.EventFunctions[f]
		if _, ok := endpointOf[f]; !ok && !isEvent && f != api.WebFunction {
			add("functions/%s: no endpoint named %q in the route table", f, f)
		}
	}

	for name := range global.env {
		if secretLooking.MatchString(name) {
			add("Globals: environment variable %s gives every function a secret or its ARN; give each function only its own", name)
		}
	}
	for _, name := range sortedKeys(tpl.Parameters) {
		if p := tpl.Parameters[name]; p.NoEcho != nil && *p.NoEcho {
			add("template.yaml: parameter %s is NoEcho: a secret passed as a parameter ends in an environment; keep it in Secrets Manager", name)
		}
	}
	secretsByID := tpl.GetAllSecretsManagerSecretResources()
	for _, name := range config.SecretNames {
		id := secretResources[name]
		sec, ok := secretsByID[id]
		if !ok {
			add("template.yaml: no AWS::SecretsManager::Secret %s for the %s secret", id, name)
			continue
		}
		// goformation reads the pseudo parameter AWS::StackName as
		// "goformation-stack".
		if want := "goformation-stack/" + name; deref(sec.Name) != want {
			add("%s: Name %q, want !Sub %s (mainguard github app-setup and the README find it by that name)", id, deref(sec.Name), want)
		}
	}

	table, err := tpl.GetDynamoDBTableWithName(tableID)
	if err != nil {
		add("template.yaml: no AWS::DynamoDB::Table %s", tableID)
		return problems
	}
	checkTable(table, add)
	return problems
}

// checkPolicies wants the function's policy statements to grant exactly
// functionActions[folder], each on its own resources, none a wildcard.
func checkPolicies(id, folder string, fn *serverless.Function, add func(string, ...any)) {
	var got []string
	if fn.Policies != nil && fn.Policies.StringArray != nil {
		for _, s := range *fn.Policies.StringArray {
			if s != "" {
				add("%s: managed policy %q; grant actions in a Statement", id, s)
			}
		}
	}
	if fn.Policies != nil && fn.Policies.SAMPolicyTemplateArray != nil {
		for _, p := range *fn.Policies.SAMPolicyTemplateArray {
			p.AWSSecretsManagerGetSecretValuePolicy = nil
			if !reflect.ValueOf(p).IsZero() {
				add("%s: a SAM policy template other than AWSSecretsManagerGetSecretValuePolicy (their actions are wider than a function needs)", id)
			}
		}
	}
	if fn.Policies != nil && fn.Policies.IAMPolicyDocumentArray != nil {
		for _, doc := range *fn.Policies.IAMPolicyDocumentArray {
			for _, raw := range doc.Statement {
				got = append(got, statementActions(id, raw, add)...)
			}
		}
	}
	slices.Sort(got)
	want, ok := functionActions[folder]
	want = slices.Sorted(slices.Values(want))
	if !ok {
		add("%s: not in functionActions", id)
	}
	if !slices.Equal(got, want) {
		add("%s: grants %q, functionActions has %q", id, got, want)
	}
}

// statementResources are the resources each statement may name.
var statementResources = map[string][]string{
	"Table":         {"${Table.Arn}", "${Table.Arn}/index/*"},
	"RateLimit":     {"${Table.Arn}"},
	"Bundles":       {"arn:${AWS::Partition}:s3:::mainguard-bundles/bundles/*"}, // ${BundleBucketName} as parsed
	"BundleListing": {"arn:${AWS::Partition}:s3:::mainguard-bundles"},
}

// statementActions reads one policy statement as "Sid: action" strings,
// with " if <condition>" when it has one, and names what is wrong with it.
func statementActions(id string, raw any, add func(string, ...any)) []string {
	st, _ := raw.(map[string]any)
	sid, _ := st["Sid"].(string)
	if st["Effect"] != "Allow" || st["NotAction"] != nil || st["NotResource"] != nil {
		add("%s: statement %q: want Effect Allow with Action and Resource", id, sid)
	}
	for k := range st {
		if !slices.Contains([]string{"Sid", "Effect", "Action", "Resource", "Condition"}, k) {
			add("%s: statement %q: unexpected %s", id, sid, k)
		}
	}
	if res := samtemplate.PolicyStrings(st["Resource"]); !slices.Equal(res, statementResources[sid]) {
		add("%s: statement %q: resources %q, want %q", id, sid, res, statementResources[sid])
	}
	cond := ""
	if c, ok := st["Condition"].(map[string]any); ok {
		for op, kv := range c {
			m, _ := kv.(map[string]any)
			for k, v := range m {
				cond = fmt.Sprintf(" if %s %s = %s", op, k, strings.Join(samtemplate.PolicyStrings(v), ", "))
			}
		}
	}
	var out []string
	for _, a := range samtemplate.PolicyStrings(st["Action"]) {
		if strings.Contains(a, "*") || !strings.Contains(a, ":") {
			add("%s: statement %q: action %q is a wildcard", id, sid, a)
		}
		out = append(out, sid+": "+a+cond)
	}
	return out
}

// checkSecrets wants the function's secrets (functionSecrets) named in its
// environment and readable by its policies, and nothing else secret there.
func checkSecrets(id, folder string, fn *serverless.Function, env map[string]string, add func(string, ...any)) {
	wantEnv := map[string]string{}
	var wantARNs []string
	for _, name := range functionSecrets[folder] {
		wantEnv[config.SecretVar(name)] = secretResources[name]
		wantARNs = append(wantARNs, secretResources[name])
	}
	for _, k := range sortedKeys(env) {
		want, ok := wantEnv[k]
		switch {
		case ok && env[k] != want:
			add("%s: %s is %q, want !Ref %s", id, k, env[k], want)
		case !ok && strings.HasSuffix(k, "_SECRET_ARN"):
			add("%s: %s names a secret the function does not read (not in functionSecrets)", id, k)
		case !ok && secretLooking.MatchString(k):
			add("%s: environment variable %s looks like a secret; functions read secrets from Secrets Manager by ARN", id, k)
		}
	}
	for _, k := range sortedKeys(wantEnv) {
		if _, ok := env[k]; !ok {
			add("%s: no %s in its environment (it reads that secret)", id, k)
		}
	}
	var gotARNs []string
	if fn.Policies != nil && fn.Policies.SAMPolicyTemplateArray != nil {
		for _, p := range *fn.Policies.SAMPolicyTemplateArray {
			if p.AWSSecretsManagerGetSecretValuePolicy != nil {
				gotARNs = append(gotARNs, p.AWSSecretsManagerGetSecretValuePolicy.SecretArn)
			}
		}
	}
	slices.Sort(gotARNs)
	slices.Sort(wantARNs)
	if !slices.Equal(gotARNs, wantARNs) {
		add("%s: may read the secrets %v, want exactly %v (functionSecrets)", id, gotARNs, wantARNs)
	}
}

// checkLogGroup wants /aws/lambda/<function> kept 30 days.
func checkLogGroup(tpl *cloudformation.Template, id string, add func(string, ...any)) {
	want := "/aws/lambda/${" + id + "}"
	for _, lg := range tpl.GetAllLogsLogGroupResources() {
		if deref(lg.LogGroupName) == want {
			if lg.RetentionInDays == nil || *lg.RetentionInDays != 30 {
				add("%s: log group %s keeps logs %d days, want 30", id, want, deref(lg.RetentionInDays))
			}
			return
		}
	}
	add("%s: no AWS::Logs::LogGroup named !Sub %s", id, want)
}

func checkTable(table *cfdynamodb.Table, add func(string, ...any)) {
	spec := store.TableSpec("x")

	var got, want []string
	for _, a := range table.AttributeDefinitions {
		got = append(got, a.AttributeName+":"+a.AttributeType)
	}
	for _, a := range spec.AttributeDefinitions {
		want = append(want, *a.AttributeName+":"+string(a.AttributeType))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		add("Table: AttributeDefinitions %v, store.TableSpec has %v", got, want)
	}

	keys := func(ks []cfdynamodb.Table_KeySchema) []string {
		var out []string
		for _, k := range ks {
			out = append(out, k.AttributeName+":"+k.KeyType)
		}
		return out
	}
	var specKeys []string
	for _, k := range spec.KeySchema {
		specKeys = append(specKeys, *k.AttributeName+":"+string(k.KeyType))
	}
	if got := keys(table.KeySchema); !slices.Equal(got, specKeys) {
		add("Table: KeySchema %v, store.TableSpec has %v", got, specKeys)
	}

	gsis := map[string]cfdynamodb.Table_GlobalSecondaryIndex{}
	var gotNames, wantNames []string
	for _, g := range table.GlobalSecondaryIndexes {
		gsis[g.IndexName] = g
		gotNames = append(gotNames, g.IndexName)
	}
	for _, g := range spec.GlobalSecondaryIndexes {
		wantNames = append(wantNames, *g.IndexName)
	}
	slices.Sort(gotNames)
	slices.Sort(wantNames)
	if !slices.Equal(gotNames, wantNames) {
		add("Table: GlobalSecondaryIndexes %v, store.TableSpec has %v", gotNames, wantNames)
	}
	for _, sg := range spec.GlobalSecondaryIndexes {
		g, ok := gsis[*sg.IndexName]
		if !ok {
			continue
		}
		var specKeys []string
		for _, k := range sg.KeySchema {
			specKeys = append(specKeys, *k.AttributeName+":"+string(k.KeyType))
		}
		if got := keys(g.KeySchema); !slices.Equal(got, specKeys) {
			add("Table: %s KeySchema %v, store.TableSpec has %v", g.IndexName, got, specKeys)
		}
		var gotType string
		var gotNonKey []string
		if g.Projection != nil {
			gotType, gotNonKey = deref(g.Projection.ProjectionType), g.Projection.NonKeyAttributes
		}
		wantType, wantNonKey := string(sg.Projection.ProjectionType), sg.Projection.NonKeyAttributes
		if gotType != wantType || !slices.Equal(gotNonKey, wantNonKey) {
			add("Table: %s projection %s %v, store.TableSpec has %s %v", g.IndexName, gotType, gotNonKey, wantType, wantNonKey)
		}
	}
	if len(table.LocalSecondaryIndexes) != len(spec.LocalSecondaryIndexes) {
		add("Table: %d LocalSecondaryIndexes, store.TableSpec has %d", len(table.LocalSecondaryIndexes), len(spec.LocalSecondaryIndexes))
	}
	if got := deref(table.BillingMode); got != string(spec.BillingMode) {
		add("Table: BillingMode %q, store.TableSpec has %q", got, spec.BillingMode)
	}
	if ttl := table.TimeToLiveSpecification; ttl == nil {
		add("Table: no TimeToLiveSpecification, want %q enabled", store.AttrTTL)
	} else if deref(ttl.AttributeName) != store.AttrTTL || !ttl.Enabled {
		add("Table: TimeToLiveSpecification %q enabled=%v, want %q enabled", deref(ttl.AttributeName), ttl.Enabled, store.AttrTTL)
	}
	if table.AWSCloudFormationDeletionPolicy != "Retain" || table.AWSCloudFormationUpdateReplacePolicy != "Retain" {
		add("Table: DeletionPolicy %q, UpdateReplacePolicy %q, want Retain for both (the data outlives the stack)",
			table.AWSCloudFormationDeletionPolicy, table.AWSCloudFormationUpdateReplacePolicy)
	}
}

// logicalID is the template's name for a folder's function:
// get-test-details → GetTestDetailsFunction.
func logicalID(folder string) string { return samtemplate.LogicalID(folder) }

// folderName guesses the folder a logical id stands for, for messages:
// GetTestDetailsFunction → get-test-details.
func folderName(id string) string {
	id = strings.TrimSuffix(id, "Function")
	var b strings.Builder
	for i, r := range id {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func maps(global map[string]string, env *serverless.Function_FunctionEnvironment) map[string]string {
	out := map[string]string{}
	for k, v := range global {
		out[k] = v
	}
	if env != nil {
		for k, v := range env.Variables {
			out[k] = v
		}
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// deepCopy copies v and everything it points to, so that a mutation of
// the copy reaches nothing of v. Unexported fields are copied as they are
// (the template's are not mutated).
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		c := reflect.New(v.Elem().Type())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Interface:
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem()))
		return c
	case reflect.Map:
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return c
	case reflect.Slice:
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if c.Field(i).CanSet() {
				c.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return c
	}
	return v
}

// parseTemplate reads template.yaml (samtemplate.Parse: a Ref to a
// resource reads as its logical id).
func parseTemplate(tb testing.TB) *cloudformation.Template {
	tb.Helper()
	tpl, err := samtemplate.Parse(templatePath)
	if err != nil {
		tb.Fatal(err)
	}
	return tpl
}

func functionFolders(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir(functionsDir)
	if err != nil {
		tb.Fatal(err)
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	return folders
}

// routeTable is the endpoints of the app as built.
func routeTable(tb testing.TB) []api.Endpoint {
	tb.Helper()
	cfg, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		tb.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, app.Options{DB: storetest.Client(tb), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	return a.Endpoints()
}

func lambdaMk(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Clean(lambdaMkPath))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
