package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// JUnitDir is the folder of real CI reports (testdata/junit at the
// repository's root, with their sources and licences), found from the
// working directory upwards: go test runs each package's tests in its own
// folder, so a test in any package reads the same folder. (Not from this
// file's own path: the suite builds with -trimpath, which hides it.)
func JUnitDir() string { return filepath.Join(Root(), "testdata", "junit") }

// Root is the repository's root: the folder of go.mod, found from the
// working directory upwards.
func Root() string {
	dir, err := os.Getwd()
	if err != nil {
		panic("testkit: " + err.Error())
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testkit: no go.mod above the working directory")
		}
		dir = parent
	}
}

// JUnit is the content of one report of JUnitDir; a missing one fails tb.
func JUnit(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(JUnitDir(), name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
