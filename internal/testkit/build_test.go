package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBuiltIsKeptAndRuns: the program Built makes runs, and a second
// process asking for the same build gets the same folder.
func TestBuiltIsKeptAndRuns(t *testing.T) {
	dir := Built(t, nil, "./internal/withdynamo")
	out, _ := exec.Command(dir + "/withdynamo").CombinedOutput()
	if !strings.Contains(string(out), "usage: withdynamo") {
		t.Errorf("the built program says %q", out)
	}
	if again := Built(t, nil, "./internal/withdynamo"); again != dir {
		t.Errorf("asked twice in one process: %s, then %s", dir, again)
	}
	// Another process (this test binary again) finds the kept folder.
	if os.Getenv("TESTKIT_BUILT_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestBuiltIsKeptAndRuns$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTKIT_BUILT_CHILD="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the second process: %v\n%s", err, out)
		}
	} else if want := os.Getenv("TESTKIT_BUILT_CHILD"); want != dir {
		t.Errorf("a second process got %s, the first %s", dir, want)
	}
}
