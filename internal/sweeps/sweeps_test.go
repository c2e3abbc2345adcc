// Package sweeps checks the Makefile's split of the suite: `make test`
// runs the tests named in SWEEPS, in the packages of SWEEP_PKGS, without
// the race detector, and skips those names in the race run of every
// package. A name that matches no test of SWEEP_PKGS runs nowhere, and so
// does a test of another package that happens to share a sweep's name.
package sweeps

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEverySweepRunsOnce(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	sweeps, pkgs := makeVar(t, string(mk), "SWEEPS"), makeVar(t, string(mk), "SWEEP_PKGS")
	sweepDirs := map[string]bool{}
	for _, p := range pkgs {
		sweepDirs[filepath.Clean(p)] = true
	}

	declared := map[string][]string{} // test name → folders of the packages declaring it
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				declared[fn.Name.Name] = append(declared[fn.Name.Name], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, name := range sweeps {
		dirs := declared[name]
		if !slices.ContainsFunc(dirs, func(d string) bool { return sweepDirs[d] }) {
			t.Errorf("SWEEPS names %s, which no package of SWEEP_PKGS declares (declared in %v): it runs nowhere", name, dirs)
		}
		for _, d := range dirs {
			if !sweepDirs[d] {
				t.Errorf("%s of %s shares a name with a sweep: the race run skips it and the sweeps do not run its package", name, d)
			}
		}
	}
	if len(sweeps) < 20 || len(pkgs) < 5 {
		t.Errorf("read %d sweeps in %d packages from the Makefile: the variables' format changed", len(sweeps), len(pkgs))
	}
}

// makeVar returns the words of a Makefile variable set with `NAME = …`,
// continued over lines ending in a backslash.
func makeVar(t *testing.T, mk, name string) []string {
	t.Helper()
	var words []string
	lines := strings.Split(mk, "\n")
	for i, line := range lines {
		value, ok := strings.CutPrefix(line, name+" = ")
		if !ok {
			continue
		}
		for {
			more := strings.HasSuffix(value, "\\")
			words = append(words, strings.Fields(strings.TrimSuffix(value, "\\"))...)
			if !more || i+1 >= len(lines) {
				return words
			}
			i++
			value = lines[i]
		}
	}
	t.Fatalf("the Makefile sets no %s", name)
	return nil
}
