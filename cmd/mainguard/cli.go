package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mainguard/mainguard/shared/repository"
)

// env is the world a command runs in, passed in so tests drive it.
type env struct {
	ctx            context.Context
	stdin          io.Reader // the tests' command reads it (`test`); nil: nothing
	stdout, stderr io.Writer
	getenv         func(string) string
	now            func() time.Time
	// dir is where git runs to find the checkout's repository; "" is the
	// process's working folder.
	dir string
}

// usageError is a mistake in the command line: exit code 2.
type usageError string

func (u usageError) Error() string { return string(u) }

// errHelp ends a command that printed its help: exit code 0.
var errHelp = errors.New("help printed")

// command is one subcommand: its words, the positional arguments it takes,
// one line of what it does, and its function.
type command struct {
	name    string // "repo set"
	args    string // positional arguments, for the usage line
	summary string
	run     func(e *env, args []string) error
}

// flags is a subcommand's own flag set, which knows its command for the
// usage it prints.
type flags struct {
	*flag.FlagSet
	cmd      command
	required []string
}

func newFlags(cmd command) *flags {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flags{FlagSet: fs, cmd: cmd}
}

// require marks flags that must be given; parse names the missing ones.
func (f *flags) require(names ...string) { f.required = append(f.required, names...) }

// usage is the command's usage line, summary and flags.
func (f *flags) usage(w io.Writer) {
	line := "usage: mainguard " + f.cmd.name
	if f.cmd.args != "" {
		line += " " + f.cmd.args
	}
	fmt.Fprintf(w, "%s [flags]\n\n%s\n", line, f.cmd.summary)
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	f.VisitAll(func(fl *flag.Flag) { fmt.Fprint(w, flagHelp(fl)) })
}

// flagHelp is one flag's help, as flag.PrintDefaults writes it, but with
// its default said once: a usage that says it in words ("(default
// $MAINGUARD_ORG)") is not followed by the value it came to here, which
// for a token would print a secret.
func flagHelp(fl *flag.Flag) string {
	name, usage := flag.UnquoteUsage(fl)
	line := "  -" + fl.Name
	if name != "" {
		line += " " + name
	}
	if len(line) <= 4 { // a one-letter flag without a value: on the same line
		line += "\t"
	} else {
		line += "\n    \t"
	}
	line += strings.ReplaceAll(usage, "\n", "\n    \t")
	if !strings.Contains(usage, "(default") && !zeroDefault(fl) {
		def := fl.DefValue
		if g, ok := fl.Value.(flag.Getter); ok {
			if _, ok := g.Get().(string); ok {
				def = strconv.Quote(def)
			}
		}
		line += " (default " + def + ")"
	}
	return line + "\n"
}

// zeroDefault reports whether a flag's default is its type's zero value,
// which the help does not mention (as flag.PrintDefaults).
func zeroDefault(fl *flag.Flag) bool {
	switch fl.DefValue {
	case "", "0", "false", "0s":
		return true
	}
	return false
}

// parse reads args: flags may come before, between or after the positional
// arguments (`repo set HOST/OWNER/NAME --quarantine on`). -h and --help
// print the usage and end the command with exit code 0; an unknown flag, a
// missing required flag or a wrong number of positional arguments is a
// usage error naming it. want is how many positional arguments the command
// takes, -1 for any number.
func (f *flags) parse(e *env, args []string, want int) ([]string, error) {
	var positional []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.usage(e.stdout)
				return nil, errHelp
			}
			return nil, usageError(fmt.Sprintf("%s: %v (see `mainguard %s --help`)", f.cmd.name, err, f.cmd.name))
		}
		args = f.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			positional = append(positional, args[1:]...)
			break
		}
		positional, args = append(positional, args[0]), args[1:]
	}
	switch {
	case want == 0 && len(positional) > 0:
		return nil, usageError(fmt.Sprintf("%s: unexpected argument %q (see `mainguard %s --help`)", f.cmd.name, positional[0], f.cmd.name))
	case want > 0 && len(positional) != want:
		return nil, usageError(fmt.Sprintf("%s takes %s, got %d argument(s) (see `mainguard %s --help`)", f.cmd.name, f.cmd.args, len(positional), f.cmd.name))
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	var missing []string
	for _, name := range f.required {
		if fl := f.Lookup(name); !set[name] && fl.Value.String() == "" {
			// A flag the environment may give says which variable.
			if m := envDefault.FindStringSubmatch(fl.Usage); m != nil {
				name += " (or " + m[1] + ")"
			}
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		return nil, usageError(fmt.Sprintf("%s needs %s (see `mainguard %s --help`)", f.cmd.name, strings.Join(missing, " and "), f.cmd.name))
	}
	return positional, nil
}

// envDefault finds the variable a flag's usage names as its default.
var envDefault = regexp.MustCompile(`\(default (\$[A-Z_]+)`)

// isSet reports whether the flag was given on the command line.
func (f *flags) isSet(name string) bool {
	found := false
	f.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

// orgFlag is --org: required, with $MAINGUARD_ORG as an explicit default,
// so that no command picks an organization by itself.
func (f *flags) orgFlag(e *env) *string {
	org := f.String("org", e.getenv("MAINGUARD_ORG"), "organization slug (default $MAINGUARD_ORG)")
	f.require("org")
	return org
}

// parseRepo reads HOST/OWNER/NAME, with a sentence showing the form when it
// is anything else (a URL, OWNER/NAME, extra segments).
func parseRepo(s string) (repository.Ref, error) {
	ref, err := repository.Parse(s)
	if err != nil {
		return repository.Ref{}, usageError(fmt.Sprintf("%q is not a repository: give HOST/OWNER/NAME, e.g. github.com/acme/web", s))
	}
	return ref, nil
}

// onOff is a flag.Func reading on/off (or true/false) into *dst.
func onOff(dst **bool) func(string) error {
	return func(v string) error {
		switch strings.ToLower(v) {
		case "on", "true":
			*dst = ptr(true)
		case "off", "false":
			*dst = ptr(false)
		default:
			return fmt.Errorf("must be on or off, got %q", v)
		}
		return nil
	}
}

func ptr[T any](v T) *T { return &v }

func onoff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// unreachable reports whether err is a dial error: nothing listens where
// the command went.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}

// dataDir is where the local server keeps its data: --data-dir, else
// $MAINGUARD_DATA_DIR, else .data (as `make run` uses).
func dataDirFlag(f *flags, e *env) *string {
	def := e.getenv("MAINGUARD_DATA_DIR")
	if def == "" {
		def = ".data"
	}
	return f.String("data-dir", def, "the local server's data folder, holding its DynamoDB address (default $MAINGUARD_DATA_DIR or .data)")
}

// cmdOf is the command of the table with this name, for its usage.
func cmdOf(name string) command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	panic("mainguard: no command " + name)
}
