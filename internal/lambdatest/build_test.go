package lambdatest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// rieModule is AWS's Runtime Interface Emulator, built from the Go module
// proxy (nothing of it is in the repository).
const rieModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// binaries are the emulator and every function's bootstrap, built once per
// test run into a temporary folder (TestMain removes it).
var binaries struct {
	once sync.Once
	dir  string
	err  error
}

// build builds the emulator and the functions, two go commands at once:
// one `go build` of ./functions/... compiles the shared packages once for
// all 27 and links them in parallel.
func build(tb testing.TB) string {
	tb.Helper()
	binaries.once.Do(func() {
		dir, err := os.MkdirTemp("", "mainguard-lambdatest-")
		if err != nil {
			binaries.err = err
			return
		}
		binaries.dir = dir
		root, err := filepath.Abs("../..")
		if err != nil {
			binaries.err = err
			return
		}
		// This machine's own build settings, not lambda.mk's static arm64
		// ones: the packages compiled are then those the other tests'
		// plain builds (the README tour's) compile too, and the build
		// cache serves both. The wiring tested is the same.
		goEnv := os.Environ()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		run := func(i int, env []string, args ...string) {
			defer wg.Done()
			cmd := exec.Command("go", args...)
			cmd.Dir, cmd.Env = root, env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("go %v: %v\n%s", args, err, out.Bytes())
			}
		}
		wg.Add(2)
		go run(0, append(goEnv, "GOBIN="+dir), "install", rieModule)
		go run(1, goEnv, "build", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o", filepath.Join(dir, "functions")+"/", "./functions/...")
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				binaries.err = err
				return
			}
		}
	})
	if binaries.err != nil {
		tb.Fatalf("building the functions and the emulator: %v", binaries.err)
	}
	return binaries.dir
}
