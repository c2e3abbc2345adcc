package importrules

import (
	"strings"
	"testing"
)

// templatePackages may not be in any function's graph: text/template's
// evaluator calls reflect.Value.MethodByName with a name known only at run
// time, so the linker must keep every exported method of every type that
// reaches an interface (the whole GitHub client, the AWS SDK…). The web
// function's pages were html/template: its bootstrap was 20.0 MB, 11.5 MB
// without them, and its init 1.6 times the DynamoDB-only floor. The pages
// are Go code (shared/web/html.go); this keeps it so, deterministically,
// where a size threshold would depend on the toolchain.
var templatePackages = []string{"text/template", "html/template"}

// functionDeps is `go list -deps` of every function, built as it ships:
// with lambda.norpc, without which aws-lambda-go links net/rpc, and
// net/rpc html/template, in every function.
func functionDeps(t *testing.T) []pkg {
	t.Helper()
	return goList(t, "-tags", "lambda.norpc", "-json=ImportPath,Deps", module+"functions/...")
}

// templateViolations are the functions among pkgs that link a template
// package, one sentence each.
func templateViolations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		for _, d := range p.Deps {
			for _, tp := range templatePackages {
				if d == tp {
					out = append(out, strings.TrimPrefix(p.ImportPath, module)+" links "+tp+
						": its evaluator calls reflect's MethodByName, so the linker keeps every exported method of every type (about 8 MB more bootstrap, a slower init); write the output in Go code, as shared/web does its pages")
				}
			}
		}
	}
	return out
}

// TestFunctionsLinkNoTemplates: no function's graph holds text/template or
// html/template (templatePackages says why).
func TestFunctionsLinkNoTemplates(t *testing.T) {
	pkgs := functionDeps(t)
	if len(pkgs) < 2 {
		t.Fatalf("go list found %d functions", len(pkgs))
	}
	for _, v := range templateViolations(pkgs) {
		t.Error(v)
	}
}

// TestTemplateRuleCatches replays the web function as it was, and one
// through text/template alone.
func TestTemplateRuleCatches(t *testing.T) {
	got := templateViolations([]pkg{
		{ImportPath: module + "functions/web", Deps: []string{"html/template", "net/http", "text/template"}},
		{ImportPath: module + "functions/status", Deps: []string{"fmt", "text/template/parse"}},
		{ImportPath: module + "functions/openapi", Deps: []string{"text/template"}},
	})
	want := []string{"functions/web links html/template", "functions/web links text/template", "functions/openapi links text/template"}
	if len(got) != len(want) {
		t.Fatalf("violations:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+": ") || !strings.Contains(got[i], "MethodByName") {
			t.Errorf("violation %d: %s, want %s: … MethodByName …", i, got[i], want[i])
		}
	}
}
