package lambdatest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// rieModule is AWS's Runtime Interface Emulator, built from the Go module
// proxy (nothing of it is in the repository).
const rieModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// binDir is where the emulator and every function's bootstrap are built:
// a folder of this clone (bin/ is ignored by git, and `make clean` removes
// it), kept between runs. The go command links a binary again only when
// the one in its -o folder is out of date, so a run after an unchanged
// one links nothing (linking the 29 functions afresh is about 27 s of
// CPU). Two clones never share it; two runs in one clone take turns
// (binaries.lock).
const binDir = "../../bin/lambdatest"

// binaries are the built folder, once per test run; lock is held from the
// build until the run ends (TestMain closes it), so that another run in
// this clone never rewrites a bootstrap this one is about to start.
var binaries struct {
	once sync.Once
	dir  string
	lock *os.File
	err  error
}

// build builds the emulator and the functions, two go commands at once:
// one `go build` of ./functions/... compiles the shared packages once for
// all 29 and links them in parallel.
func build(tb testing.TB) string {
	tb.Helper()
	binaries.once.Do(func() {
		dir, err := filepath.Abs(binDir)
		if err != nil {
			binaries.err = err
			return
		}
		if err := os.MkdirAll(filepath.Join(dir, "functions"), 0o755); err != nil {
			binaries.err = err
			return
		}
		lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			binaries.err = err
			return
		}
		// Another run of this clone's tests holds it until it ends: a
		// wait of a minute or two at most, bounded by go test's timeout.
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			lock.Close()
			binaries.err = fmt.Errorf("locking %s: %v", lock.Name(), err)
			return
		}
		binaries.lock, binaries.dir = lock, dir
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

// releaseBinaries lets another run of this clone build (TestMain calls it
// when the tests have ended).
func releaseBinaries() {
	if binaries.lock != nil {
		binaries.lock.Close()
	}
}
