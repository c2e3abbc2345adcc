package app_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/metricsapi"
	"github.com/mainguard/mainguard/shared/queueapi"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testsapi"
	"github.com/mainguard/mainguard/shared/uploadapi"
	webapp "github.com/mainguard/mainguard/shared/web"
)

// TestEveryFunctionServesItsRoute reads each functions/<name>/main.go: an
// HTTP function hands lambdafn.Main its own name and an endpoint group that
// has a handler for it (built here as the function builds it), an event
// function runs lambdafn.EventMain. A main that named the wrong group would
// otherwise fail only at init in AWS.
func TestEveryFunctionServesItsRoute(t *testing.T) {
	t.Parallel()
	groups := map[string]lambdafn.Group{
		"lambdafn.Status": lambdafn.Status, "testsapi.Group": testsapi.Group, "uploadapi.Group": uploadapi.Group,
		"queueapi.Group": queueapi.Group, "metricsapi.Group": metricsapi.Group,
	}
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"BUNDLE_BUCKET": "bundles", "S3_ENDPOINT": "http://127.0.0.1:1"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := lambdafn.NewBase(cfg, lambdafn.Options{DB: storetest.Client(t), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	built := map[string]lambdafn.Handlers{}
	mainRE := regexp.MustCompile(`lambdafn\.Main\("([^"]+)", (\w+\.\w+)\)`)
	for _, name := range functionFolders(t) {
		src, err := os.ReadFile(filepath.Join("..", "..", "functions", name, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if _, isEvent := lambdafn.EventFunctions[name]; isEvent {
			if !regexp.MustCompile(`lambdafn\.EventMain\(`).Match(src) {
				t.Errorf("%s: an event function's main runs lambdafn.EventMain", name)
			}
			continue
		}
		if name == lambdafn.WebFunction {
			if !regexp.MustCompile(`lambdafn\.WebMain\(web\.Function\)`).Match(src) {
				t.Errorf("%s: the web app's main runs lambdafn.WebMain(web.Function)", name)
			}
			if _, err := webapp.Function(ctx, b); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if _, ok := lambdafn.RouteOf(name); !ok {
			t.Errorf("%s: no route in lambdafn.Routes", name)
			continue
		}
		m := mainRE.FindSubmatch(src)
		if m == nil {
			if name != "openapi" { // the one whose group is a closure of its main
				t.Errorf("%s: main.go does not call lambdafn.Main(%q, <package>.<Group>)", name, name)
			}
			continue
		}
		if string(m[1]) != name {
			t.Errorf("%s: main.go serves %q", name, m[1])
		}
		g, ok := groups[string(m[2])]
		if !ok {
			t.Errorf("%s: unknown group %s", name, m[2])
			continue
		}
		h, ok := built[string(m[2])]
		if !ok {
			if h, err = g(ctx, b); err != nil {
				t.Fatalf("%s: %v", m[2], err)
			}
			built[string(m[2])] = h
		}
		if _, err := b.Serve(name, h); err != nil {
			t.Errorf("%s: %v", name, err)
		}
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
