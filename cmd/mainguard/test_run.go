package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// testRun is `mainguard test [flags] -- COMMAND [ARGS...]`: it runs the
// tests' command (standard streams passed through, SIGINT and SIGTERM
// forwarded), reads the JUnit reports --junit names that the command
// wrote, uploads them as `upload` does, prints each failed test with its
// label, and exits as the build should: the command's code, or 0 when the
// command failed and every failed test of the reports is quarantined.
// Whatever goes wrong after the command (the service down, slow or
// refusing, a report missing or bad) costs one warning and leaves the
// command's own code: mainguard never turns a red build green by mistake,
// nor a green one red.
func testRun(e *env, args []string) error {
	f := newFlags(cmdOf("test"))
	client := apiClientFlags(f, e)
	org := f.String("org", e.getenv("MAINGUARD_ORG"), "organization slug (default $MAINGUARD_ORG)")
	run := newRunFlags(f)
	var globs []string
	f.Func("junit", "JUnit reports to upload: globs relative to the repository's root, `**` for any folders; repeat it or separate with commas (required)", func(v string) error {
		for _, g := range strings.Split(v, ",") {
			if g = strings.TrimSpace(g); g != "" {
				globs = append(globs, g)
			}
		}
		return nil
	})
	timeout := f.Duration("timeout", 60*time.Second, "the most time spent after the command (reports, upload, labels)")
	k := slices.Index(args, "--")
	if k < 0 {
		// Not a run: a word after `test` is a command of the test group
		// that does not exist; flags alone ask for help or are a mistake.
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			return usageError(fmt.Sprintf("unknown command \"test %s\"; the test commands are list, show and quarantine, or `mainguard test [flags] -- COMMAND` to run tests", args[0]))
		}
		if _, err := f.parse(e, args, 0); err != nil {
			return err
		}
		return usageError("test needs `--` and the command that runs the tests, e.g. `mainguard test --junit 'junit/*.xml' -- go test ./...`")
	}
	if _, err := f.parse(e, args[:k], 0); err != nil {
		return err
	}
	argv := args[k+1:]
	if len(argv) == 0 {
		return usageError("test needs the command that runs the tests after `--`")
	}
	if len(globs) == 0 {
		return usageError("test needs --junit: the reports the command writes")
	}
	if *timeout <= 0 {
		return usageError("--timeout must be positive")
	}

	root := repoRoot(e)
	before := snapshot(e.ctx, root, globs)
	code, interrupted := runCommand(e, argv)
	if code == 127 || code == 126 {
		return exitError(code)
	}
	if interrupted {
		fmt.Fprintf(e.stderr, "mainguard: interrupted: nothing uploaded; exit %d, the command's\n", code)
		return exitError(code)
	}
	ctx, cancel := context.WithTimeout(e.ctx, *timeout)
	defer cancel()
	warn := func(what string, err error) error {
		msg := what
		if err != nil {
			msg += ": " + err.Error()
		}
		fmt.Fprintf(e.stderr, "mainguard: warning: %s; exit %d, the command's own code\n", strings.ReplaceAll(msg, "\n", " "), code)
		return exitError(code)
	}

	reports, skipped, doubt := collect(ctx, root, globs, before)
	for _, s := range skipped {
		fmt.Fprintf(e.stderr, "mainguard: skipped %s: %s\n", printable(s.path), printable(s.why))
	}
	if len(reports) == 0 {
		if doubt != "" {
			return warn("no JUnit report to upload", errors.New(doubt))
		}
		return warn("no JUnit report to upload", nil)
	}
	return uploadAndExit(ctx, e, client(), *org, run, reports, doubt, code, warn)
}

// uploadAndExit uploads the reports of a run of the tests that exited
// code, prints the failures with their labels, and ends with the exit
// code the build should have (exitCode). Whatever fails is warn's: one
// warning, and code.
func uploadAndExit(ctx context.Context, e *env, c *apiClient, org string, run runFlags, reports []report, doubt string, code int, warn func(string, error) error) error {
	info := run.detect(e)
	ref, err := tested(info)
	if err != nil {
		return warn("nothing uploaded", err)
	}
	if org == "" {
		return warn("nothing uploaded", errors.New("no organization: give --org or set MAINGUARD_ORG"))
	}
	if c.token == "" {
		return warn("nothing uploaded", errors.New("no token: give --token or set MAINGUARD_TOKEN"))
	}
	var owners []byte
	if *run.codeowners != "" {
		if owners, err = os.ReadFile(*run.codeowners); err != nil {
			return warn("nothing uploaded", err)
		}
	}
	c.tries = 3
	sum, failed := totals(reports)
	ids := failedIDs(org, ref, *run.variant, failed)
	s, err := send(ctx, c, org, ref, info, *run.variant, owners, reports, failed, e.now())
	if err != nil && s.uploadID == "" {
		return warn("the results were not uploaded", explain(err))
	}
	var answer *sent
	if err == nil {
		answer = &s
	} else {
		fmt.Fprintf(e.stderr, "mainguard: warning: which tests are quarantined is unknown: %v\n", explain(err))
	}
	labs, page, lerr := labels(ctx, c, org, ref, s.uploadID, ids[:min(len(ids), maxFailuresShown)])
	if lerr != nil && len(ids) > 0 {
		fmt.Fprintf(e.stderr, "mainguard: the failures' labels are not known: %v\n", explain(lerr))
	}
	printResults(e.stdout, reports, sum, s, ids, failed, labs, page)
	final, why := exitCode(code, failed, ids, doubt, answer)
	if why != "" {
		fmt.Fprintf(e.stderr, "mainguard: %s\n", why)
	}
	return exitError(final)
}

// exitError ends a command with an exit code of its own (0 included).
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// explain says why the service refused, for the one line a warning is.
func explain(err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		switch {
		case ae.status == 401:
			return fmt.Errorf("the service refused the token (%s)", ae.msg)
		case ae.status == 404 && strings.HasPrefix(ae.msg, "organization "):
			return fmt.Errorf("%s for this token: the token belongs to another organization", ae.msg)
		}
	}
	return err
}

// statKey is what a report's file looked like before the command ran.
type statKey struct {
	mod  time.Time
	size int64
}

// snapshot records the files the globs match before the command runs: a
// report the command does not write again is an earlier run's.
func snapshot(ctx context.Context, root string, globs []string) map[string]statKey {
	out := map[string]statKey{}
	for _, g := range globs {
		files, _ := globFiles(ctx, root, g)
		for _, p := range files {
			if st, err := os.Stat(p); err == nil {
				out[p] = statKey{st.ModTime(), st.Size()}
			}
		}
	}
	return out
}

// collect reads the reports the globs match now, skipping (and naming)
// those the command did not write and those that are no JUnit report;
// doubt says why the reports may not hold every failure.
func collect(ctx context.Context, root string, globs []string, before map[string]statKey) ([]report, []skip, string) {
	var reports []report
	var skipped []skip
	var doubts []string
	seen := map[string]bool{}
	for _, g := range globs {
		files, err := globFiles(ctx, root, g)
		if err != nil {
			doubts = append(doubts, fmt.Sprintf("--junit %q: %v", g, err))
			continue
		}
		if len(files) == 0 {
			doubts = append(doubts, fmt.Sprintf("--junit %q matched no file", g))
			continue
		}
		for _, p := range files {
			if seen[p] {
				continue
			}
			seen[p] = true
			name := relTo(root, p)
			st, err := os.Stat(p)
			if err != nil {
				skipped = append(skipped, skip{name, err.Error()})
				continue
			}
			if was, ok := before[p]; ok && was.mod.Equal(st.ModTime()) && was.size == st.Size() {
				skipped = append(skipped, skip{name, "written before the command started (an earlier run's report)"})
				continue
			}
			r, err := readReport(p, name)
			if err != nil {
				skipped = append(skipped, skip{name, err.Error()})
				continue
			}
			reports = append(reports, r)
		}
	}
	if len(skipped) > 0 {
		doubts = append(doubts, fmt.Sprintf("%d report(s) skipped", len(skipped)))
	}
	return reports, skipped, strings.Join(doubts, "; ")
}

// runCommand runs argv with the standard streams passed through and
// SIGINT and SIGTERM forwarded, and answers its exit code as a shell
// would: 127 when it is not found, 126 when it cannot run, 128+n when
// signal n ended it. interrupted says a signal was forwarded.
func runCommand(e *env, argv []string) (code int, interrupted bool) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = e.dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		switch {
		case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(e.stderr, "mainguard: %s: command not found\n", printable(argv[0]))
			return 127, false
		default:
			fmt.Fprintf(e.stderr, "mainguard: %s: %v\n", printable(argv[0]), err)
			return 126, false
		}
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	for {
		select {
		case s := <-sigs:
			interrupted = true
			_ = cmd.Process.Signal(s)
		case <-done:
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ok && ws.Signaled() {
				return 128 + int(ws.Signal()), interrupted
			}
			return cmd.ProcessState.ExitCode(), interrupted
		}
	}
}
