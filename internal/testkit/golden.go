package testkit

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// Updating reports whether the tests run with -update, rewriting golden
// files instead of comparing with them.
func Updating() bool { return *update }

// GoldenText compares got with the file at path byte for byte; with
// -update it writes got there instead.
func GoldenText(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		write(tb, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(got), string(want)); d != "" {
		tb.Errorf("%s (-got +want):\n%s", path, d)
	}
}

// GoldenJSON compares got, as JSON, with the JSON file at path: values
// compare as JSON values (numbers as numbers, objects whatever their key
// order); with -update it writes got there instead, indented.
func GoldenJSON(tb testing.TB, path string, got any) {
	tb.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		tb.Fatal(err)
	}
	var gotJSON any
	if err := json.Unmarshal(b, &gotJSON); err != nil {
		tb.Fatal(err)
	}
	if *update {
		out, _ := json.MarshalIndent(gotJSON, "", "  ")
		write(tb, path, append(out, '\n'))
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with -update to create it)", err)
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	if d := cmp.Diff(gotJSON, want); d != "" {
		tb.Errorf("%s (-got +want):\n%s", path, d)
	}
}

func write(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}
