package testkit

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// JUnitDir is the folder of real CI reports (testdata/junit at the
// repository's root, with their sources and licences). It is found from this
// file's own location, so a test in any package reads the same folder.
func JUnitDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("testkit: cannot locate its own source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "junit")
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
