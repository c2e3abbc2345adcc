package deploytour

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/secrets/secretsim"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// notHere are the section's commands no test can run here, and why.
var notHere = map[string]string{
	"sam build":  "needs the AWS SAM CLI; it runs lambda.mk's targets, which internal/lambdatest builds and runs under Lambda's emulator",
	"sam deploy": "creates the stack in an AWS account; shared/app/template_test.go checks the template it deploys",
}

// commands are the lines of the README's `sh deploy` blocks, comments
// dropped.
func commands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for line := range strings.SplitSeq(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "```sh deploy":
			in = true
		case in && trimmed == "```":
			in = false
		case in:
			if i := strings.Index(trimmed, "  #"); i >= 0 {
				trimmed = strings.TrimSpace(trimmed[:i])
			}
			if trimmed != "" {
				out = append(out, trimmed)
			}
		}
	}
	return out
}

// TestDeployingSection follows the section in order.
func TestDeployingSection(t *testing.T) {
	t.Parallel()
	cmds := commands(t)
	if len(cmds) < 8 {
		t.Fatalf("the README's Deploying section has %d commands: %q", len(cmds), cmds)
	}
	root, _ := filepath.Abs("../..")
	work := t.TempDir()

	// The deployment: its table on DynamoDB Local, its API (the local
	// server on that table), its secrets, and GitHub.
	_, table := storetest.NewTable(t)
	gh, err := githubsim.New(t.TempDir(), githubsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gh.Close() })
	sm := secretsim.New("us-east-1")
	smURL := sm.Start(t)
	sm.AddIdentity(secretsim.Identity{AccessKey: "AKIDADMIN", SecretKey: "admin"})
	for _, name := range []string{"mainguard/github-app", "mainguard/github-webhook"} {
		arn := sm.CreateSecret(name, "", "placeholder")
		for _, op := range []string{"DescribeSecret", "PutSecretValue"} {
			sm.Allow("AKIDADMIN", "secretsmanager:"+op, arn)
		}
	}
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"TABLE_NAME": table, "DYNAMODB_ENDPOINT": storetest.Endpoint()}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, app.Options{DB: storetest.Client(t), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(a.Mux())
	t.Cleanup(api.Close)

	env := map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "GOCACHE": os.Getenv("GOCACHE"), "GOPATH": os.Getenv("GOPATH"),
		"GOFLAGS": os.Getenv("GOFLAGS"), "GOMODCACHE": os.Getenv("GOMODCACHE"),
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIDADMIN", "AWS_SECRET_ACCESS_KEY": "admin",
		"SECRETSMANAGER_ENDPOINT": smURL, "GITHUB_API_URL": gh.URL(), "DYNAMODB_ENDPOINT": storetest.Endpoint(),
	}
	// What a deployment's outputs are, here.
	placeholders := strings.NewReplacer(
		"https://ID.execute-api.REGION.amazonaws.com", api.URL,
		"mainguard-Table-XXXX", table,
	)
	var token string
	ran := 0
	for _, line := range cmds {
		if why, skip := skipped(line); skip {
			t.Logf("not run here: %s (%s)", line, why)
			continue
		}
		line = placeholders.Replace(line)
		if token != "" {
			line = strings.ReplaceAll(line, "mg_...", token)
		}
		ran++
		switch {
		case strings.HasPrefix(line, "export "):
			out := runLine(t, root, work, env, line+"; env")
			for _, kv := range strings.Split(out, "\n") {
				if k, v, ok := strings.Cut(kv, "="); ok && (strings.HasPrefix(k, "MAINGUARD_") || strings.HasPrefix(k, "TRUNK_")) {
					env[k] = v
				}
			}
		case strings.Contains(line, "github app-setup"):
			// GitHub's redirect comes to a port of its own, not 8765, so
			// that tests run side by side.
			setup(t, root, work, env, line+" --listen 127.0.0.1:0")
			stored, _ := sm.Value("mainguard/github-app")
			if _, err := github.ParseAppSecret([]byte(stored), 0); err != nil {
				t.Errorf("app-setup stored no usable App: %v", err)
			}
		default:
			out := runLine(t, root, work, env, line)
			switch {
			case strings.Contains(line, "org create"):
				token = regexp.MustCompile(`mg_[0-9A-Za-z]{43}`).FindString(out)
				if token == "" {
					t.Fatalf("org create printed no token:\n%s", out)
				}
			case strings.Contains(line, "app-manifest") && !strings.Contains(out, `"default_permissions"`):
				t.Errorf("app-manifest printed no manifest:\n%s", out)
			case strings.Contains(line, "queue status") && !strings.Contains(out, "no queue for branch main of github.com/acme/web"):
				t.Errorf("queue status against the deployment:\n%s", out)
			}
		}
	}
	if ran == 0 {
		t.Fatal("no command ran")
	}
}

func skipped(line string) (string, bool) {
	for prefix, why := range notHere {
		if strings.HasPrefix(line, prefix) {
			return why, true
		}
	}
	return "", false
}

// runLine runs one line with bash in work (where the repository's files
// are, as in a checkout), and returns what it printed; `queue status` may
// end 1 (the answer is checked).
func runLine(t *testing.T, root, work string, env map[string]string, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = root
	cmd.Env = envList(env, work)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil && !strings.Contains(line, "queue status") {
		t.Fatalf("%s: %v\n%s", line, err, out.String())
	}
	return out.String()
}

// setup runs app-setup and is the browser GitHub's page needs.
func setup(t *testing.T, root, work string, env map[string]string, line string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = root
	cmd.Env = envList(env, work)
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	re := regexp.MustCompile(`Open (http://\S+)/ in a browser`)
	guard := time.After(5 * time.Minute)
	var page string
	for page == "" {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			page = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("%s ended (%v) before serving its page:\n%s", line, err, out)
		case <-guard:
			t.Fatalf("%s served no page:\n%s", line, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	testkit.CreateGitHubApp(t, page+"/")
	if err := <-done; err != nil || !strings.Contains(out.String(), "/installations/new") {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
}

func envList(env map[string]string, work string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return append(out, "TMPDIR="+work)
}
