// Command mainguard is the service's one program for people: the local
// server (`serve`), the administration commands that work straight on the
// table, the uploader (`upload`) and the merge queue's commands (`queue`),
// which call the API, and a webhook receiver for trying things out
// (`webhook listen`). Each subcommand is one function in a file of its
// own, with its own flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// commands is every subcommand, in the order the usage lists them.
var commands []command

func init() {
	commands = []command{
		{"serve", "", "run every function behind one listener at /v1, on DynamoDB Local, with the scheduler ticking", serve},
		{"upload", "FILES...", "upload JUnit reports to the service, as the public uploader does, and print what failed", upload},
		{"org create", "", "create an organization and print its first token, once", orgCreate},
		{"org set", "", "change an organization's settings: the case of merge-queue enum values, its GitHub App installations", orgSet},
		{"token create", "", "create another token of an organization, for what --scope says, and print it, once", tokenCreate},
		{"token list", "", "list an organization's tokens", tokenList},
		{"token revoke", "", "revoke a token (by its id tok_… or the token itself)", tokenRevoke},
		{"repo set", "HOST/OWNER/NAME", "change a repository's settings: ticket tracker, default branch, monitors, quarantine", repoSet},
		{"repo claim", "HOST/OWNER/NAME", "make a GitHub repository an organization's: only its owner runs merge queues on it (with a plain GitHub token; an App's installations say it otherwise)", repoClaim},
		{"test list", "HOST/OWNER/NAME", "list a repository's tests: unhealthy by default, or of one status, or the quarantined ones", testList},
		{"test show", "HOST/OWNER/NAME TEST_ID", "show one test: status and reason, rates, quarantine, owners, ticket, link", testShow},
		{"test quarantine", "HOST/OWNER/NAME TEST_ID", "set a test's quarantine override: --always, --never or --unset", testQuarantine},
		// After the test group: `test list …` is that command, `test … -- COMMAND` this one.
		{"test", "[flags] -- COMMAND [ARGS...]", "run the tests' command, upload its JUnit reports, print each failure's label, and exit with its code, or 0 when every failed test is quarantined", testRun},
		{"ci-info", "", "print what the CI's environment (or git) says is tested, and where each value came from", ciInfo},
		{"uploads list", "", "list an organization's recent uploads, with why a refused one was refused", uploadsList},
		{"webhook add", "", "add a webhook endpoint and print its signing secret, once", webhookAdd},
		{"webhook list", "", "list an organization's webhook endpoints", webhookList},
		{"webhook remove", "", "remove a webhook endpoint", webhookRemove},
		{"webhook rotate-secret", "", "give an endpoint a new signing secret (the old one signs for 24 hours more)", webhookRotate},
		{"webhook deliveries", "", "list the recent delivery attempts to an endpoint, most recent first", webhookDeliveries},
		{"webhook replay", "", "send an event again to its endpoints", webhookReplay},
		{"webhook listen", "", "receive webhooks on a local address, verify their signatures and print them", webhookListen},
		{"sim health", "", "simulate test health: the real classifier on a generated CI history of flaky tests, regressions and fixes, its recall, mix-ups and status changes", simHealth},
		{"sim", "", "simulate the merge queue: the real engine on a simulated GitHub and CI, its throughput beside the model's", simulate},
		{"queue status", "[PR]", "show a merge queue and its pull requests in order, or one pull request's state and position", queueStatus},
		{"queue list", "", "list the pull requests ever submitted to a merge queue, by number", queueList},
		{"queue history", "", "show a merge queue's arrivals, test runs and merges; --json writes the file `sim --from-history` replays", queueHistory},
		{"queue submit", "PR", "submit a pull request to a merge queue (again: change its priority)", queueSubmit},
		{"queue cancel", "PR", "take a pull request out of its merge queue", queueCancel},
		{"queue restart", "PR", "restart the tests of a pull request in place", queueRestart},
		{"queue pause", "", "pause a merge queue: no test starts and nothing merges; submissions are kept", queuePause},
		{"queue resume", "", "set a merge queue running again", queueResume},
		{"queue drain", "", "drain a merge queue: what is testing finishes and merges, nothing new starts", queueDrain},
		{"queue config get", "", "show a merge queue's settings", queueConfigGet},
		{"queue config set", "KEY=VALUE...", "change a merge queue's settings: each KEY is a field of updateQueue, as `queue config get` lists them", queueConfigSet},
		{"github app-manifest", "", "print the GitHub App manifest of a deployment and the address that creates the App from it", githubAppManifest},
		{"github app-setup", "", "create the deployment's GitHub App from its manifest and store its key and webhook secret in Secrets Manager", githubAppSetup},
		{"version", "", "print the program's version", version},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runEnv(&env{ctx: ctx, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, now: time.Now}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run is the program, with its world passed in so tests drive it. It
// answers 0 when the command did its work (or printed help), 1 when it
// failed, 2 for a mistake in the command line; `test` and `upload
// --test-process-exit-code` answer the tests' exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return runEnv(&env{ctx: ctx, stdout: stdout, stderr: stderr, getenv: getenv, now: time.Now}, args)
}

// runEnv is run in the world e, which tests may give a clock and a working
// folder of their own.
func runEnv(e *env, args []string) int {
	stdout, stderr := e.stdout, e.stderr
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "--help":
		if len(args) > 1 {
			// `mainguard help repo set` is `mainguard repo set --help`.
			return runEnv(e, append(args[1:], "--help"))
		}
		usage(stdout)
		return 0
	case "--version", "-version", "-v":
		args = []string{"version"}
	}
	cmd, rest, err := find(args)
	if err == nil {
		err = cmd.run(e, rest)
	}
	var u usageError
	var exit exitError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &exit):
		return int(exit)
	case errors.As(err, &u):
		fmt.Fprintln(stderr, "mainguard:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "mainguard:", err)
		return 1
	}
}

// find picks the command args name: one word, or more for a group
// (`token create`, `queue config set`); a group alone, or with --help,
// lists its commands.
func find(args []string) (command, []string, error) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], nil
		}
	}
	// The group is the longest run of leading words that begins commands.
	var group []command
	name, n := "", 0
	for n < len(args) {
		var in []command
		for _, c := range commands {
			if strings.HasPrefix(c.name, strings.Join(args[:n+1], " ")+" ") {
				in = append(in, c)
			}
		}
		if len(in) == 0 {
			break
		}
		group, n = in, n+1
		name = strings.Join(args[:n], " ")
	}
	if len(group) == 0 {
		return command{}, nil, usageError(fmt.Sprintf("unknown command %q; `mainguard help` lists them", args[0]))
	}
	list := func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		for _, c := range group {
			fmt.Fprintf(tw, "  %s %s\t%s\n", c.name, c.args, c.summary)
		}
		_ = tw.Flush()
	}
	help := command{name: name, run: func(e *env, rest []string) error {
		if len(rest) > 0 && (rest[0] == "-h" || rest[0] == "--help") {
			fmt.Fprintf(e.stdout, "usage: mainguard %s <command> [flags]\n\ncommands:\n", name)
			list(e.stdout)
			return errHelp
		}
		var b strings.Builder
		list(&b)
		if len(rest) == 0 {
			return usageError(fmt.Sprintf("%s needs a command:\n%s", name, strings.TrimRight(b.String(), "\n")))
		}
		return usageError(fmt.Sprintf("unknown command \"%s %s\"; the %s commands are:\n%s", name, rest[0], name, strings.TrimRight(b.String(), "\n")))
	}}
	return help, args[n:], nil
}

// usage lists every command.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: mainguard <command> [flags]\n\ncommands:")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s %s\t%s\n", c.name, c.args, c.summary)
	}
	_ = tw.Flush()
	fmt.Fprint(w, `
Every command prints its flags with --help (or: mainguard help COMMAND).

The administration commands work on the local server's table (found through
.data/dynamodb-endpoint, which `+"`make run`"+` writes), on DYNAMODB_ENDPOINT when
it is set, or on the table TABLE_NAME (default mainguard) in AWS with --aws
or AWS_PROFILE set; they say on stderr which one. upload and the queue
commands call the API instead: MAINGUARD_URL (default the local server) with
MAINGUARD_TOKEN; the queue commands find the repository and its default
branch in the git checkout they run in (its origin remote), unless given
--repo and --branch.
`)
}

// version prints the module version and the commit the program was built
// from, as the Go toolchain recorded them.
func version(e *env, args []string) error {
	f := newFlags(command{name: "version", summary: "print the program's version"})
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, versionString())
	return nil
}

func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "mainguard (no build information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	out := "mainguard " + v
	if rev != "" {
		out += " commit " + rev
		if modified {
			out += " (with uncommitted changes)"
		}
		if when != "" {
			out += " of " + when
		}
	}
	return out + " " + info.GoVersion
}
