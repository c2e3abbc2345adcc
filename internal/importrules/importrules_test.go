// Package importrules holds the dependency rules of the tree. Every package
// of the module belongs to exactly one layer, and imports only packages of
// the layers its own may import (allowed); a package no layer names fails
// the test, so a new package is placed on purpose.
//
// The layers, from the centre out:
//
//   - foundation: vocabulary every layer shares and that knows nothing of
//     ours (errors, configuration, a TTL cache, the token and bucket
//     vocabulary of access, the request-unit accounting of billing).
//   - domain: entities and pure rules (repositories, test health, the merge
//     queue and their simulators, what a CI job tests). The domain depends
//     on no storage or transport, however indirectly.
//   - transport: the wire formats the endpoints share: package api, the HTTP
//     vocabulary (decoding, the one error→status table, the adapter,
//     middleware and limits), and queuemetrics, the queue's Prometheus text
//     (its encoder links net/http, so it is not domain). They know no
//     storage: api declares the few store methods it calls as interfaces of
//     its own.
//   - services: apply the domain through storage and outbound calls (the
//     store, blobs, GitHub, secrets, tenancy, webhooks, the test-health and
//     merge-queue services, the scheduler). They speak no HTTP to clients.
//   - surface: the endpoint groups that speak HTTP to clients (testsapi,
//     uploadapi, queueapi, metricsapi, web, and docs: the API description
//     and the page serving it). No surface package imports
//     another: they meet only in the composition.
//   - composition: what builds each function's graph and starts it
//     (lambdafn, app: the whole service in one process, functions/*). The
//     only packages that import surface packages.
//   - commands: cmd/mainguard, the local server, administration and
//     uploader: a composition that may also run the stand-ins.
//   - support: test helpers, stand-ins of what we cannot reach, tools run
//     by the tests (internal/*, storetest, githubsim, secretsim,
//     promtooltest, dynamolocal). They may import anything; nothing
//     shipped but the commands imports them.
//
// One more rule across the layers: test health knows nothing of the merge
// queue (the queue asks test health before ejecting a PR, not the other way
// round), so no test-health package imports a merge-queue one.
package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mainguard/mainguard/"

// layer names one ring of the tree.
type layer string

const (
	foundation  layer = "foundation"
	domain      layer = "domain"
	transport   layer = "transport"
	services    layer = "services"
	surface     layer = "surface"
	composition layer = "composition"
	commands    layer = "commands"
	support     layer = "support"
)

// layers are the packages of each layer; "x/..." is every package under x.
var layers = map[layer][]string{
	foundation: {"shared/errs", "shared/config", "shared/ttlcache", "shared/access", "shared/store/billing"},
	domain: {"shared/repository", "shared/testhealth", "shared/testhealth/...", "shared/mergequeue", "shared/mergequeue/...",
		"shared/ciinfo"},
	transport: {"shared/api", "shared/queuemetrics"},
	services: {"shared/store", "shared/blobs", "shared/github", "shared/secrets", "shared/tenancy", "shared/webhooks",
		"shared/healthview", "shared/healthsvc", "shared/queuesvc", "shared/scheduler"},
	surface:     {"shared/testsapi", "shared/uploadapi", "shared/queueapi", "shared/metricsapi", "shared/web", "docs"},
	composition: {"shared/lambdafn", "shared/app", "functions/...", "shared/wiring", "shared/wiring/..."},
	commands:    {"cmd/..."},
	support: {"internal/...", "shared/store/storetest", "shared/github/githubsim", "shared/secrets/secretsim",
		"shared/queuemetrics/promtooltest", "shared/dynamolocal", "shared/localport"},
}

// allowed are the layers a layer's packages may import, their own
// included where they may import one another. Surface is not in its own
// list: endpoint groups meet only in the composition.
var allowed = map[layer][]layer{
	foundation:  {foundation},
	domain:      {foundation, domain},
	transport:   {foundation, domain, transport},
	services:    {foundation, domain, services},
	surface:     {foundation, domain, transport, services},
	composition: {foundation, domain, transport, services, surface, composition},
	commands:    {foundation, domain, transport, services, surface, composition, commands, support},
	support:     {foundation, domain, transport, services, surface, composition, commands, support},
}

// healthSide and queueSide are the two product domains, from the domain
// out to their endpoints: test health imports nothing of the queue.
var (
	healthSide = []string{"shared/testhealth", "shared/testhealth/...", "shared/healthview", "shared/healthsvc", "shared/testsapi", "shared/uploadapi"}
	queueSide  = []string{"shared/mergequeue", "shared/mergequeue/...", "shared/queuesvc", "shared/queueapi", "shared/queuemetrics", "shared/queuemetrics/...", "shared/metricsapi"}
)

// outside are the dependencies no domain package may have, however
// indirectly: storage and transport.
var outside = []string{"net/http", "github.com/aws/", "github.com/google/go-github/"}

// matches reports whether the package path (of the module) is one of
// patterns.
func matches(path string, patterns []string) bool {
	rel, ok := strings.CutPrefix(path, module)
	if !ok {
		return false
	}
	for _, p := range patterns {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if strings.HasPrefix(rel, base+"/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// layerOf is the layer of the package path; "" when it is not of the
// module or no layer names it. An exact name wins over a "/..." pattern
// (shared/store/storetest is support though shared/store is a service;
// shared/queuemetrics/promtooltest though shared/mergequeue/... is domain).
func layerOf(path string) layer {
	var byPattern layer
	for l, patterns := range layers {
		for _, p := range patterns {
			if !matches(path, []string{p}) {
				continue
			}
			if !strings.HasSuffix(p, "/...") {
				return l
			}
			byPattern = l
		}
	}
	return byPattern
}

type pkg struct {
	ImportPath string
	Imports    []string // direct, without tests
	Deps       []string // direct and indirect, without tests
}

// listed is `go list -deps` of every package of the module, without tests.
func listed(t *testing.T) []pkg {
	t.Helper()
	return goList(t, "-json=ImportPath,Imports,Deps", module+"...")
}

// goList is what `go list args…` says of each package it lists.
func goList(t *testing.T, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// violations are the broken rules among pkgs, one sentence each.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		l := layerOf(p.ImportPath)
		if l == "" {
			out = append(out, "package "+rel+" is in no layer: name it in importrules' layers")
			continue
		}
		for _, d := range p.Imports {
			dl := layerOf(d)
			if dl == "" {
				continue // not ours, or unclassified (reported as its own package)
			}
			if !slices.Contains(allowed[l], dl) {
				out = append(out, string(l)+" package "+rel+" imports the "+string(dl)+" package "+strings.TrimPrefix(d, module))
			}
			if matches(p.ImportPath, healthSide) && matches(d, queueSide) {
				out = append(out, "test-health package "+rel+" imports the merge-queue package "+strings.TrimPrefix(d, module))
			}
		}
		if l == domain {
			for _, d := range p.Deps {
				for _, o := range outside {
					if d == o || (strings.HasSuffix(o, "/") && strings.HasPrefix(d, o)) {
						out = append(out, "domain package "+rel+" depends on "+d)
					}
				}
			}
		}
	}
	return out
}

func TestImportRules(t *testing.T) {
	pkgs := listed(t)
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
	// The lists name packages that exist, each once: a rename must update
	// them, or the rules would quietly stop applying.
	var named []string
	for _, list := range layers {
		named = append(named, list...)
	}
	for _, p := range append(named, append(healthSide, queueSide...)...) {
		if !slices.ContainsFunc(pkgs, func(q pkg) bool { return matches(q.ImportPath, []string{p}) }) {
			t.Errorf("the rules name %s, which is no package of the module", p)
		}
	}
	slices.Sort(named)
	for i := 1; i < len(named); i++ {
		if named[i] == named[i-1] {
			t.Errorf("two layers name %s", named[i])
		}
	}
}

// TestImportRulesCatchViolations replays the arrows the tree has had and
// the review of issue 31 listed, and one of each other kind, and asserts
// the rule that catches each.
func TestImportRulesCatchViolations(t *testing.T) {
	m := func(p string) string { return module + p }
	got := violations([]pkg{
		// api held *store.Store in its limiters and CachedAuth.
		{ImportPath: m("shared/api"), Imports: []string{m("shared/errs"), m("shared/store"), m("shared/store/billing")}},
		// The scheduler, a service, built itself from lambdafn.Base.
		{ImportPath: m("shared/scheduler"), Imports: []string{m("shared/healthsvc"), m("shared/lambdafn")}},
		// web imported queueapi for EnterpriseHost.
		{ImportPath: m("shared/web"), Imports: []string{m("shared/api"), m("shared/queuesvc"), m("shared/queueapi")}},
		// healthsvc imported mergequeue for TestBranchPrefix.
		{ImportPath: m("shared/healthsvc"), Imports: []string{m("shared/store"), m("shared/mergequeue")}},
		// The domain before it moved out of the store.
		{ImportPath: m("shared/testhealth"), Imports: []string{m("shared/errs"), m("shared/store")},
			Deps: []string{m("shared/errs"), m("shared/store"), "github.com/aws/aws-sdk-go-v2/aws"}},
		{ImportPath: m("shared/mergequeue"), Deps: []string{"net/http"}},
		// Lower to higher: a service on the HTTP surface, the foundation
		// on the domain, the store on the transport, shipped code on a
		// test stand-in.
		{ImportPath: m("shared/healthsvc"), Imports: []string{m("shared/testsapi")}},
		{ImportPath: m("shared/config"), Imports: []string{m("shared/repository")}},
		{ImportPath: m("shared/store"), Imports: []string{m("shared/api")}},
		{ImportPath: m("functions/status"), Imports: []string{m("shared/github/githubsim")}},
		// A package no layer names.
		{ImportPath: m("shared/utils")},
		// What is allowed: the composition on the surface, the surface on
		// the transport and the services, a command on a stand-in, the
		// queue on test health.
		{ImportPath: m("shared/app"), Imports: []string{m("shared/queueapi"), m("shared/web"), m("shared/lambdafn")}},
		{ImportPath: m("shared/queueapi"), Imports: []string{m("shared/api"), m("shared/queuesvc"), m("shared/store")}},
		{ImportPath: m("cmd/mainguard"), Imports: []string{m("shared/github/githubsim"), m("shared/app")}},
		{ImportPath: m("shared/queuesvc"), Imports: []string{m("shared/testhealth")}},
	})
	want := []string{
		"transport package shared/api imports the services package shared/store",
		"services package shared/scheduler imports the composition package shared/lambdafn",
		"surface package shared/web imports the surface package shared/queueapi",
		"test-health package shared/healthsvc imports the merge-queue package shared/mergequeue",
		"domain package shared/testhealth imports the services package shared/store",
		"domain package shared/testhealth depends on github.com/aws/aws-sdk-go-v2/aws",
		"domain package shared/mergequeue depends on net/http",
		"services package shared/healthsvc imports the surface package shared/testsapi",
		"foundation package shared/config imports the domain package shared/repository",
		"services package shared/store imports the transport package shared/api",
		"composition package functions/status imports the support package shared/github/githubsim",
		"package shared/utils is in no layer: name it in importrules' layers",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
