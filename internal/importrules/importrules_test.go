// Package importrules holds the dependency rules of the tree: the domain at
// the centre depends on nothing of ours but other domain packages (and on
// no storage or transport), and the services that apply it import no
// package of the HTTP surface.
package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mainguard/mainguard/"

// domain are the packages of the domain: entities and pure rules.
var domain = []string{"shared/errs", "shared/repository", "shared/testhealth", "shared/testhealth/...", "shared/mergequeue"}

// services apply the domain through storage and outbound calls.
var services = []string{"shared/store", "shared/healthsvc", "shared/queuesvc", "shared/webhooks", "shared/blobs", "shared/healthview", "shared/github", "shared/tenancy"}

// surface are the packages that speak HTTP to clients.
var surface = []string{"shared/api", "shared/app", "shared/lambdafn", "shared/testsapi", "shared/uploadapi", "shared/queueapi", "shared/metricsapi"}

// outside are the dependencies no domain package may have, however
// indirectly: storage and transport.
var outside = []string{"net/http", "github.com/aws/", "github.com/google/go-github/"}

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

type pkg struct {
	ImportPath string
	Deps       []string
}

// listed is `go list -deps` of every package of the module, without tests.
func listed(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Deps", module+"...")
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
		switch {
		case matches(p.ImportPath, domain):
			for _, d := range p.Deps {
				if strings.HasPrefix(d, module) && !matches(d, domain) {
					out = append(out, "domain package "+p.ImportPath+" depends on "+d+", which is not domain")
				}
				for _, o := range outside {
					if d == o || (strings.HasSuffix(o, "/") && strings.HasPrefix(d, o)) {
						out = append(out, "domain package "+p.ImportPath+" depends on "+d)
					}
				}
			}
		case matches(p.ImportPath, services):
			for _, d := range p.Deps {
				if matches(d, surface) {
					out = append(out, "service package "+p.ImportPath+" depends on the HTTP package "+d)
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
	// The lists name packages that exist: a rename must update them, or
	// the rules would quietly stop applying.
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[strings.TrimPrefix(p.ImportPath, module)] = true
	}
	for _, list := range [][]string{domain, services, surface} {
		for _, p := range list {
			if p = strings.TrimSuffix(p, "/..."); !seen[p] {
				t.Errorf("the rules name %s, which is not a package of the module", p)
			}
		}
	}
}

// TestImportRulesCatchViolations feeds the rules the imports this tree
// had before its domain moved out of the store, and one more of each kind.
func TestImportRulesCatchViolations(t *testing.T) {
	got := violations([]pkg{
		{ImportPath: module + "shared/testhealth", Deps: []string{module + "shared/errs", module + "shared/store", "github.com/aws/aws-sdk-go-v2/aws"}},
		{ImportPath: module + "shared/mergequeue", Deps: []string{"net/http"}},
		{ImportPath: module + "shared/healthsvc", Deps: []string{module + "shared/testsapi"}},
		{ImportPath: module + "shared/queueapi", Deps: []string{module + "shared/store", "net/http"}}, // the surface may
	})
	want := []string{
		"domain package " + module + "shared/testhealth depends on " + module + "shared/store, which is not domain",
		"domain package " + module + "shared/testhealth depends on github.com/aws/aws-sdk-go-v2/aws",
		"domain package " + module + "shared/mergequeue depends on net/http",
		"service package " + module + "shared/healthsvc depends on the HTTP package " + module + "shared/testsapi",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
