package testkit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Program is the path of the mainguard program built from this checkout,
// for tests that run it as its users do (Built).
func Program(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(Built(tb, nil, "./cmd/mainguard"), "mainguard")
}

// Built is a folder holding the programs `go build FLAGS -o DIR/ PKGS`
// makes from this checkout. A link is seconds of CPU, and go build links
// afresh into every new folder, so the folder is kept in the user's cache
// (builds/ under CacheDir), named by everything the programs are made of:
// the go command, its environment, the flags, and the compiled package of
// every dependency as the build cache holds it. A test process, a second
// run and another clone of the same code find it there and link nothing;
// changed code, or another Go, is another folder.
//
// The programs carry no commit (-buildvcs=false): stamped, each commit's
// main packages compile anew, and a fresh clone of a new commit, CI's
// case, would link everything again for a version string no test reads.
func Built(tb testing.TB, flags []string, pkgs ...string) string {
	tb.Helper()
	flags = append([]string{"-buildvcs=false"}, flags...)
	args := append(append([]string{}, flags...), pkgs...)
	return cached(tb, "build "+strings.Join(args, " "), func() (string, error) {
		list := append(append([]string{"list", "-deps", "-export", "-f", "{{.ImportPath}} {{.Export}}"}, flags...), pkgs...)
		deps, err := goOutput(list...)
		if err != nil {
			return "", err
		}
		// The compiled packages are named by their content's hash in the
		// build cache; their folder is this machine's, not part of them.
		var key bytes.Buffer
		for line := range strings.Lines(deps) {
			path, export, _ := strings.Cut(strings.TrimSpace(line), " ")
			fmt.Fprintf(&key, "%s %s\n", path, filepath.Base(export))
		}
		return key.String(), nil
	}, func(dir string) error {
		_, err := goOutput(append(append([]string{"build"}, flags...), append([]string{"-o", dir + "/"}, pkgs...)...)...)
		return err
	})
}

// Installed is a folder holding the program `go install MODULE@VERSION`
// makes, kept as Built keeps its own: a version names its code.
func Installed(tb testing.TB, moduleAtVersion string) string {
	tb.Helper()
	return cached(tb, "install "+moduleAtVersion, func() (string, error) { return "", nil }, func(dir string) error {
		cmd := exec.Command("go", "install", moduleAtVersion)
		cmd.Env = append(os.Environ(), "GOBIN="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go install %s: %v\n%s", moduleAtVersion, err, out)
		}
		return nil
	})
}

// CacheDir is where Built and Installed keep their folders: the user's
// cache, as the go command's own, or the temporary folder when there is
// none.
func CacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "mainguard-test")
	}
	return filepath.Join(os.TempDir(), "mainguard-test")
}

// unusedFor is how long a kept folder lasts unused: far longer than a
// suite's run, whose processes mark theirs used as they start.
const unusedFor = 24 * time.Hour

var builds sync.Map // what → *build, once per test process

type build struct {
	once sync.Once
	dir  string
	err  error
}

// cached returns the folder of what: named by what, key() and the go
// command's version and settings; made by fill in a temporary folder and
// renamed into place, so that a process sees either none or all of it.
func cached(tb testing.TB, what string, key func() (string, error), fill func(dir string) error) string {
	tb.Helper()
	v, _ := builds.LoadOrStore(what, &build{})
	b := v.(*build)
	b.once.Do(func() { b.dir, b.err = keep(what, key, fill) })
	if b.err != nil {
		tb.Fatalf("testkit: %s: %v", what, b.err)
	}
	return b.dir
}

func keep(what string, key func() (string, error), fill func(dir string) error) (string, error) {
	k, err := key()
	if err != nil {
		return "", err
	}
	goEnv, err := goOutput("env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT", "GOAMD64", "GOARM64", "CC")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(what + "\n" + goEnv + "\n" + k))
	root := filepath.Join(CacheDir(), "builds")
	dir := filepath.Join(root, hex.EncodeToString(sum[:16]))
	if err := os.Chtimes(dir, time.Now(), time.Now()); err == nil {
		return dir, nil // made before, and marked used
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".new-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone once renamed
	if err := fill(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			return "", err
		}
		// Another process made the same folder first: the same programs.
	}
	forgetUnused(root)
	return dir, nil
}

// forgetUnused removes the folders no run has used for unusedFor (an
// older commit's programs), and the leftovers of processes killed while
// they built.
func forgetUnused(root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > unusedFor {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// goOutput runs the go command in the repository's root.
func goOutput(args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = Root()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return "", err
	}
	return string(out), nil
}
