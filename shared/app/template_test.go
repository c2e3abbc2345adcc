package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	cfdynamodb "github.com/awslabs/goformation/v7/cloudformation/dynamodb"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"
	"github.com/awslabs/goformation/v7/intrinsics"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// readOnlyFunctions only read the table: they get DynamoDBReadPolicy and
// nothing more. Every other function writes and needs DynamoDBCrudPolicy.
var readOnlyFunctions = map[string]bool{
	"status":                true,
	"get-test-details":      true,
	"get-quarantine-config": true,
	// merge-queue reads
	"get-queue":                       true,
	"get-submitted-pull-request":      true,
	"get-merge-queue-testing-details": true,
	"list-pull-requests":              true,
	"get-queue-history":               true,
	// get-merge-queue-metrics reads queues and their transitions only.
	"get-merge-queue-metrics": true,
}

// tablelessFunctions never touch the table: they get no table policy.
var tablelessFunctions = map[string]bool{
	"openapi": true, // serves the embedded OpenAPI document
}

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
	if p := checkTemplate(parseTemplate(t), folders, endpoints, mk); len(p) > 0 {
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
		{"writer with a read policy only", "LinkTicketToTestCaseFunction: writes (not in readOnlyFunctions) but has no DynamoDBCrudPolicy on Table",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "LinkTicketToTestCaseFunction").Policies = fn(tpl, "StatusFunction").Policies
			}},
		{"tableless function with a table policy", "OpenapiFunction: touches no table but has a table policy",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "OpenapiFunction").Policies = fn(tpl, "StatusFunction").Policies
			}},
		{"reader with a write policy", "GetTestDetailsFunction: read-only but has a write policy",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				fn(tpl, "GetTestDetailsFunction").Policies = fn(tpl, "LinkTicketToTestCaseFunction").Policies
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
		{"table not retained", "Table: DeletionPolicy",
			func(tpl *cloudformation.Template, _ *[]string, _ *[]api.Endpoint, _ *string) {
				table(tpl).AWSCloudFormationDeletionPolicy = ""
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl, f, e, m := parseTemplate(t), slices.Clone(folders), slices.Clone(endpoints), mk
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
		checkLogGroup(tpl, id, add)

		if kind, ok := lambdafn.EventFunctions[folder]; ok {
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
			if folder == lambdafn.WebFunction {
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
		_, isEvent := lambdafn.EventFunctions[f]
		if _, ok := endpointOf[f]; !ok && !isEvent && f != lambdafn.WebFunction {
			add("functions/%s: no endpoint named %q in the route table", f, f)
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

func checkPolicies(id, folder string, fn *serverless.Function, add func(string, ...any)) {
	var read, crud, write bool
	if fn.Policies != nil && fn.Policies.SAMPolicyTemplateArray != nil {
		for _, p := range *fn.Policies.SAMPolicyTemplateArray {
			if p.DynamoDBReadPolicy != nil {
				read = read || p.DynamoDBReadPolicy.TableName == tableID
			}
			if p.DynamoDBCrudPolicy != nil {
				crud = crud || p.DynamoDBCrudPolicy.TableName == tableID
				write = true
			}
			if p.DynamoDBWritePolicy != nil {
				write = true
			}
		}
	}
	if fn.Policies != nil && fn.Policies.StringArray != nil {
		for _, s := range *fn.Policies.StringArray {
			if s != "" { // managed policies are broader than the templates
				add("%s: managed policy %q; use the SAM DynamoDB policy templates", id, s)
			}
		}
	}
	switch {
	case tablelessFunctions[folder]:
		if read || write || crud {
			add("%s: touches no table but has a table policy", id)
		}
	case readOnlyFunctions[folder]:
		if !read {
			add("%s: no DynamoDBReadPolicy on %s", id, tableID)
		}
		if write {
			add("%s: read-only but has a write policy (least privilege: DynamoDBReadPolicy only)", id)
		}
	case !crud:
		add("%s: writes (not in readOnlyFunctions) but has no DynamoDBCrudPolicy on %s", id, tableID)
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
func logicalID(folder string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(folder, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String() + "Function"
}

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

var parseMu sync.Mutex

// parseTemplate reads template.yaml. A Ref to a resource reads as the
// resource's logical id, and a ${Resource} in a Sub stays as written, so the
// checks can tell what refers to what (goformation alone resolves only
// parameters and pseudo parameters, and drops the rest).
func parseTemplate(tb testing.TB) *cloudformation.Template {
	tb.Helper()
	data, err := os.ReadFile(templatePath)
	if err != nil {
		tb.Fatal(err)
	}
	// goformation registers its YAML tags in a package-level map on every
	// parse: two parallel tests parsing at once race on it.
	parseMu.Lock()
	defer parseMu.Unlock()
	tpl, err := goformation.ParseYAMLWithOptions(data, &intrinsics.ProcessorOptions{
		IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
			"Ref":     refByName,
			"Fn::Sub": subKeepingResources,
		},
	})
	if err != nil {
		tb.Fatalf("parse %s: %v", templatePath, err)
	}
	return tpl
}

func refByName(name string, input, template any) any {
	if v := intrinsics.Ref(name, input, template); v != nil {
		return v
	}
	s, ok := input.(string)
	if !ok {
		return nil
	}
	if tpl, ok := template.(map[string]any); ok {
		if res, ok := tpl["Resources"].(map[string]any); ok {
			if _, ok := res[s]; ok {
				return s
			}
		}
	}
	return nil
}

var subVariable = regexp.MustCompile(`\$\{([.:0-9A-Za-z]+)\}`)

func subKeepingResources(name string, input, template any) any {
	s, ok := input.(string)
	if !ok {
		return intrinsics.FnSub(name, input, template)
	}
	return subVariable.ReplaceAllStringFunc(s, func(m string) string {
		v := m[2 : len(m)-1]
		if !strings.Contains(v, ".") {
			if r, ok := intrinsics.Ref("Ref", v, template).(string); ok {
				return r
			}
		}
		return m
	})
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
