package lambdatest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
)

// function is one function running under the emulator.
type function struct {
	name string
	url  string // the emulator's invocation endpoint
	out  *testkit.SyncBuffer
}

// start runs the function's bootstrap under the emulator with exactly env
// (the emulator hands its environment to the function, as Lambda hands the
// function's configuration), stopped when the test ends. The function
// itself starts on the first invocation, as Lambda's init does.
func start(tb testing.TB, bins binaries, name string, env map[string]string) *function {
	tb.Helper()
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)
	for attempt := 0; ; attempt++ {
		// Reserved addresses (testkit.FreeAddr): the emulator binds its
		// runtime API's only when the function first starts.
		api, rie := testkit.FreeAddr(tb), testkit.FreeAddr(tb)
		out := &testkit.SyncBuffer{}
		cmd := exec.Command(filepath.Join(bins.rie, "aws-lambda-rie"),
			"--runtime-interface-emulator-address", rie, "--runtime-api-address", api,
			filepath.Join(bins.functions, name))
		cmd.Env, cmd.Stdout, cmd.Stderr = list, out, out
		// Its own process group: the emulator starts the bootstrap, and both
		// are stopped together.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if listening(rie, exited) {
			tb.Cleanup(stop)
			return &function{name: name, url: "http://" + rie + "/2015-03-31/functions/function/invocations", out: out}
		}
		stop()
		// Another process took a port between freePort and the emulator.
		if attempt == 3 {
			tb.Fatalf("the emulator of %s did not start:\n%s", name, out)
		}
	}
}

// listening waits until addr accepts connections, or the process exits; a
// guard of two minutes against a hang, not a speed requirement.
func listening(addr string, exited <-chan struct{}) bool {
	guard := time.After(2 * time.Minute)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return true
		}
		select {
		case <-exited:
			return false
		case <-guard:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// invoke sends one event and returns the emulator's status and the
// function's answer.
func (f *function) invoke(tb testing.TB, event []byte) (int, []byte) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(event))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("invoking %s: %v\n%s", f.name, err, f.out)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// keyOf is the access key of a function's credentials.
func keyOf(name string) string { return "AKID" + strings.ToUpper(strings.ReplaceAll(name, "-", "")) }

func secretKeyOf(name string) string { return "secret-of-" + name }

func folders(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir("../../functions")
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}
