package app_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/wiring"
	webhookdelivery "github.com/mainguard/mainguard/shared/wiring/delivery"
	"github.com/mainguard/mainguard/shared/wiring/health"
	"github.com/mainguard/mainguard/shared/wiring/metricendpoints"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
	"github.com/mainguard/mainguard/shared/wiring/queues"
	"github.com/mainguard/mainguard/shared/wiring/testendpoints"
	"github.com/mainguard/mainguard/shared/wiring/tick"
	"github.com/mainguard/mainguard/shared/wiring/uploadendpoints"
	"github.com/mainguard/mainguard/shared/wiring/webapp"
)

// builders are the builders a function's main may hand lambdafn, by the
// name its main spells. A new one is added here, and to app.New.
var builders = map[string]any{
	"wiring.Status": wiring.Group(wiring.Status), "wiring.OpenAPI": wiring.Group(wiring.OpenAPI),
	"testendpoints.Group": wiring.Group(testendpoints.Group), "uploadendpoints.Group": wiring.Group(uploadendpoints.Group),
	"queueendpoints.Group": wiring.Group(queueendpoints.Group), "metricendpoints.Group": wiring.Group(metricendpoints.Group),
	"delivery.DeliverWebhooks": webhookdelivery.DeliverWebhooks, "queues.FoldCommands": queues.FoldCommands,
	"health.IngestBundle": health.IngestBundle, "tick.Function": tick.Function, "webapp.Handler": webapp.Handler,
}

// mainCall is what a function's main does: its one statement, a call of
// lambdafn's Main (with the function's name), EventMain or WebMain on a
// builder of package wiring or one of its subpackages.
type mainCall struct {
	starter, name, builder string
}

func parseMain(t *testing.T, folder string) mainCall {
	t.Helper()
	path := filepath.Join(functionsDir, folder, "main.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		imports[p[strings.LastIndex(p, "/")+1:]] = p
	}
	var call *ast.CallExpr
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "main" && len(fn.Body.List) == 1 {
			if st, ok := fn.Body.List[0].(*ast.ExprStmt); ok {
				call, _ = st.X.(*ast.CallExpr)
			}
		}
	}
	sel := func(e ast.Expr) (string, string) {
		s, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", ""
		}
		id, ok := s.X.(*ast.Ident)
		if !ok {
			return "", ""
		}
		return id.Name, s.Sel.Name
	}
	var m mainCall
	if call != nil {
		if pkg, fn := sel(call.Fun); pkg == "lambdafn" && imports[pkg] == module+"shared/lambdafn" {
			m.starter = fn
		}
		args := call.Args
		if m.starter == "Main" && len(args) == 2 {
			if lit, ok := args[0].(*ast.BasicLit); ok {
				m.name, _ = strconv.Unquote(lit.Value)
			}
			args = args[1:]
		}
		if len(args) == 1 {
			if pkg, fn := sel(args[0]); strings.HasPrefix(imports[pkg], module+"shared/wiring") {
				m.builder = pkg + "." + fn
			}
		}
	}
	if m.starter == "" || m.builder == "" {
		t.Fatalf("%s: main is not one call of lambdafn.Main, EventMain or WebMain on a builder of package wiring (or its subpackages)", path)
	}
	return m
}

// TestFunctionsAreBuiltByTheAppsBuilders: every function's main hands
// lambdafn one builder of package wiring; built on its own Base, as the
// function builds it, it serves the function's route (or event), and
// every part of the function's graph is a part the local server built
// with the same builders on its Base, so the local server's graph holds
// each function's. TestNoServiceBuiltByHand keeps the builders the only
// code that builds a service.
func TestFunctionsAreBuiltByTheAppsBuilders(t *testing.T) {
	t.Parallel()
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"BUNDLE_BUCKET": "bundles", "S3_ENDPOINT": "http://127.0.0.1:1"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := storetest.Client(t)
	discard := slog.New(slog.DiscardHandler)
	a, err := app.New(ctx, cfg, app.Options{DB: db, Log: discard})
	if err != nil {
		t.Fatal(err)
	}
	local := a.Built()
	for _, folder := range functionFolders(t) {
		m := parseMain(t, folder)
		b, err := wiring.NewBase(cfg, wiring.Options{DB: db, Log: discard})
		if err != nil {
			t.Fatal(err)
		}
		_, isEvent := api.EventFunctions[folder]
		var wantStarter string
		switch builder := builders[m.builder].(type) {
		case wiring.Group:
			wantStarter = "Main"
			if !slices.ContainsFunc(app.Groups, func(g wiring.Group) bool {
				return reflect.ValueOf(g).Pointer() == reflect.ValueOf(builder).Pointer()
			}) {
				t.Errorf("%s: app.New does not serve %s", folder, m.builder)
			}
			h, err := builder(ctx, b)
			if err != nil {
				t.Fatalf("%s: %v", m.builder, err)
			}
			if m.name != folder {
				t.Errorf("%s: main serves %q", folder, m.name)
			}
			if _, err := b.Serve(folder, h); err != nil {
				t.Errorf("%s: %v", folder, err)
			}
		case nil:
			t.Errorf("%s: %s is no builder this test knows: add it to builders, and to app.New", folder, m.builder)
			continue
		default:
			// An event function's builder, or the web app's: called as
			// lambdafn calls it.
			wantStarter = "EventMain"
			if folder == api.WebFunction {
				wantStarter = "WebMain"
			}
			out := reflect.ValueOf(builder).Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(b)})
			if err, _ := out[1].Interface().(error); err != nil || out[0].IsNil() {
				t.Errorf("%s: %s: %v", folder, m.builder, err)
			}
		}
		if isEvent != (wantStarter == "EventMain") || m.starter != wantStarter {
			t.Errorf("%s: main runs lambdafn.%s(%s)", folder, m.starter, m.builder)
		}
		for _, part := range b.Built() {
			if !slices.Contains(local, part) {
				t.Errorf("%s: its graph has the part %q, which the local server does not build (it built %v)", folder, part, local)
			}
		}
	}
}

// constructors are what builds a service or an endpoint group: calls of
// these packages' New functions and literals of these types. Only package
// wiring's builders use them (and tests, and each package itself).
var constructors = map[string]func(name string, literal bool) bool{
	"shared/healthsvc":  func(n string, lit bool) bool { return !lit && n == "New" || lit && n == "Service" },
	"shared/queuesvc":   func(n string, lit bool) bool { return !lit && n == "New" || lit && n == "Service" },
	"shared/webhooks":   func(n string, lit bool) bool { return !lit && n == "NewDeliverer" || lit && n == "Deliverer" },
	"shared/blobs":      func(n string, lit bool) bool { return !lit && n == "NewS3" },
	"shared/web":        func(n string, lit bool) bool { return !lit && n == "New" || lit && n == "Web" },
	"shared/scheduler":  func(n string, lit bool) bool { return !lit && n == "New" || lit && n == "Scheduler" },
	"shared/queueapi":   func(n string, lit bool) bool { return !lit && n == "New" || lit && n == "Handlers" },
	"shared/testsapi":   func(n string, lit bool) bool { return !lit && n == "New" || lit && n == "Handlers" },
	"shared/uploadapi":  func(n string, lit bool) bool { return lit && n == "Handlers" },
	"shared/metricsapi": func(n string, lit bool) bool { return lit && n == "Handler" },
}

// TestNoServiceBuiltByHand: no program builds a service or an endpoint
// group but through package wiring's builders (the local server's app.New
// included), so each is built one way, the one every function ships.
func TestNoServiceBuiltByHand(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path == root {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || rel == filepath.Join("shared", "wiring") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		files++
		dir := filepath.ToSlash(filepath.Dir(rel))
		pkgOf := map[string]string{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			pkgOf[name] = strings.TrimPrefix(p, module)
		}
		check := func(e ast.Expr, literal bool) {
			s, ok := e.(*ast.SelectorExpr)
			if !ok {
				return
			}
			id, ok := s.X.(*ast.Ident)
			if !ok {
				return
			}
			pkg := pkgOf[id.Name]
			if is, ok := constructors[pkg]; ok && pkg != dir && is(s.Sel.Name, literal) {
				t.Errorf("%s builds %s.%s by hand: use its builder of package wiring", rel, id.Name, s.Sel.Name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				check(n.Fun, false)
			case *ast.CompositeLit:
				check(n.Type, true)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no Go file read")
	}
}

// TestNoProgramLinksTheS3ChecksumLogger: under load the service once
// logged one SDK warning per bundle fetched ("Response has no supported
// checksum"): the S3 client's output-checksum middleware says so for each
// GetObject answer of an S3-compatible server without checksum headers.
// Bundles now go through signed addresses over net/http, so no function
// and not the local server link that middleware; this keeps it so.
func TestNoProgramLinksTheS3ChecksumLogger(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "../../functions/...", "../../cmd/mainguard").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/aws/aws-sdk-go-v2/service/internal/checksum" || pkg == "github.com/aws/aws-sdk-go-v2/service/s3" {
			t.Errorf("a program links %s", pkg)
		}
	}
}

// module is the path of the module's packages.
const module = "github.com/mainguard/mainguard/"
