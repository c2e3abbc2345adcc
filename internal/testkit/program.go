package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

var program struct {
	once sync.Once
	path string
	err  error
}

// Program is the path of the mainguard program built from this checkout,
// for tests that run it as its users do. It is built where `make run`
// puts it (bin/mainguard), once per test process: in that one folder of
// the clone, go build relinks only when the program changed, so the test
// processes of one suite, and the next suite, link it once between them
// rather than once per test (seconds of CPU each). A lock on the folder
// keeps two processes from writing it at the same time; each built it
// with the same GOFLAGS, so the second finds it up to date.
func Program(tb testing.TB) string {
	tb.Helper()
	program.once.Do(func() { program.path, program.err = buildProgram() })
	if program.err != nil {
		tb.Fatal(program.err)
	}
	return program.path
}

func buildProgram() (string, error) {
	root := Root()
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", fmt.Errorf("testkit: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(bin, ".build-lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("testkit: %w", err)
	}
	defer lock.Close() // and with it the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("testkit: lock %s: %w", lock.Name(), err)
	}
	path := filepath.Join(bin, "mainguard")
	build := exec.Command("go", "build", "-o", path, "./cmd/mainguard")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testkit: go build ./cmd/mainguard: %v\n%s", err, out)
	}
	return path, nil
}
