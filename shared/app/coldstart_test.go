package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkColdStart measures every function's init the way Lambda sees
// it: from starting the process to its first GET of the Runtime API's next
// invocation. It builds each folder of functions/ and two baselines with
// the Lambda build flags for this machine: an empty aws-lambda-go function
// (testdata/emptyfn) and one that only builds a DynamoDB client
// (testdata/dynamodbfn, the floor every function stands on). It starts each
// b.N times against a fake Runtime API, the order rotated each round so no
// function always runs on a cache warmed by another, and reports per
// function its median init, the ratio of that to the empty function's
// median in the same run, the ratio to the DynamoDB floor's, and its
// binary's size:
//
//	make coldstart   # go test -run '^$' -bench ColdStart -benchtime 60x ./shared/app/
func BenchmarkColdStart(b *testing.B) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("coldstart: the go command is not on PATH, so the functions cannot be built: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	names := []string{"empty", "dynamodb-only"}
	bins := map[string]string{
		"empty":         buildLambda(b, goTool, root, "./shared/app/testdata/emptyfn", filepath.Join(dir, "empty")),
		"dynamodb-only": buildLambda(b, goTool, root, "./shared/app/testdata/dynamodbfn", filepath.Join(dir, "dynamodb-only")),
	}
	for _, f := range functionFolders(b) {
		names = append(names, f)
		bins[f] = buildLambda(b, goTool, root, "./functions/"+f, filepath.Join(dir, f))
	}

	api := startRuntimeAPI(b)
	home := b.TempDir() // no ~/.aws of the developer's: a Lambda has none
	env := []string{
		"AWS_LAMBDA_RUNTIME_API=" + api.addr,
		"TABLE_NAME=x",
		// What Lambda sets: the region and the function's credentials.
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY=secret",
		"AWS_SESSION_TOKEN=token",
		"BUNDLE_BUCKET=x",
		"_HANDLER=bootstrap",
		"AWS_LAMBDA_FUNCTION_NAME=x",
		"HOME=" + home,
	}

	runs := map[string][]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		for j := range names {
			name := names[(i+j)%len(names)]
			runs[name] = append(runs[name], api.initTime(b, bins[name], env))
		}
	}
	b.StopTimer()
	empty, floor := medianMs(runs["empty"]), medianMs(runs["dynamodb-only"])
	b.ReportMetric(empty, "empty-init-p50-ms")
	b.ReportMetric(floor, "dynamodb-only-init-p50-ms")
	b.ReportMetric(floor/empty, "dynamodb-only-init-ratio")
	worst, worstOverFloor := 0.0, 0.0
	for _, name := range names[2:] {
		fn := medianMs(runs[name])
		info, err := os.Stat(bins[name])
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(fn, name+"-init-p50-ms")
		b.ReportMetric(fn/empty, name+"-init-ratio")
		b.ReportMetric(fn/floor, name+"-over-dynamodb-only")
		b.ReportMetric(float64(info.Size())/1e6, name+"-MB")
		worst, worstOverFloor = max(worst, fn/empty), max(worstOverFloor, fn/floor)
	}
	b.ReportMetric(worst, "worst-init-ratio")
	b.ReportMetric(worstOverFloor, "worst-over-dynamodb-only")
}

func medianMs(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return float64(m) / float64(time.Millisecond)
}

// buildLambda builds pkg as Lambda's bootstrap is built (lambda.mk), but
// for this machine's OS and architecture.
func buildLambda(b *testing.B, goTool, root, pkg, out string) string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	output, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("coldstart: go build %s: %v\n%s", pkg, err, output)
	}
	return out
}

// runtimeAPI is the part of the Lambda Runtime API a starting function
// reaches: GET /2018-06-01/runtime/invocation/next. It notes when each
// request arrives and holds it until the caller goes away.
type runtimeAPI struct {
	addr    string
	arrived chan time.Time
}

func startRuntimeAPI(b *testing.B) *runtimeAPI {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	api := &runtimeAPI{addr: ln.Addr().String(), arrived: make(chan time.Time, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		select {
		case api.arrived <- at:
		default:
		}
		<-r.Context().Done() // the process is killed while waiting
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not part of this fake Runtime API", http.StatusNotFound)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return api
}

// initTime starts bin and returns how long it took to ask for its first
// invocation; then it kills it.
func (api *runtimeAPI) initTime(b *testing.B, bin string, env []string) time.Duration {
	b.Helper()
	for len(api.arrived) > 0 { // nothing stale from an earlier process
		<-api.arrived
	}
	var out bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &out, &out
	exited := make(chan error, 1)

	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("coldstart: start %s: %v", bin, err)
	}
	go func() { exited <- cmd.Wait() }()
	// stop kills the process and reports whether it is gone (and so its
	// output complete).
	stop := func() bool {
		_ = cmd.Process.Kill()
		select {
		case <-exited:
			return true
		case <-time.After(10 * time.Second):
			b.Errorf("coldstart: %s (pid %d) did not exit after kill", filepath.Base(bin), cmd.Process.Pid)
			return false
		}
	}

	select {
	case at := <-api.arrived:
		stop()
		return at.Sub(start)
	case err := <-exited:
		if err == nil {
			err = errors.New("exit status 0")
		}
		b.Fatalf("coldstart: %s exited before asking for an invocation: %v\n%s", filepath.Base(bin), err, out.String())
	case <-time.After(30 * time.Second):
		output := "(output unavailable: the process did not exit)"
		if stop() {
			output = out.String()
		}
		b.Fatalf("coldstart: %s did not ask for an invocation within 30s\n%s", filepath.Base(bin), output)
	}
	panic(fmt.Sprintf("unreachable: %s", bin))
}
