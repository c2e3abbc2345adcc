// Command mainguard is the service's one program for people: the local
// server (`serve`), the administration commands that work straight on the
// table, and the uploader (`upload`).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const usage = `usage: mainguard <command> [flags]

commands:
  serve                         run every function behind one listener at /v1
  org create --slug S [--name N]
  token create --org S
  token list --org S
  token revoke --org S --token ID|SECRET
  repo set HOST/OWNER/NAME [--org S] [--jira-base-url U | --linear-workspace W] [--default-branch B]
           [--quarantine on|off] [--auto-quarantine on|off]
           [--pass-on-retry on|off] [--recovery-days N]
           [--failure-rate on|off] [--window-hours N] [--branches G,G] [--min-runs N]
           [--flaky-threshold F] [--broken-threshold F] [--flaky-resolution F] [--broken-resolution F]
           [--stale-hours N] [--infra-guard on|off] [--broken-streak on|off] [--streak N]
  test quarantine HOST/OWNER/NAME TEST_ID --always|--never|--unset [--org S] [--reason R]
  uploads list [--org S]        recent uploads, with why a refused one was refused
  webhook add --org S --url U [--events T,T]   prints the endpoint's signing secret, once
  webhook list [--org S]
  webhook remove --org S --endpoint ID
  webhook rotate-secret --org S --endpoint ID  prints the new secret, once
  webhook deliveries --org S --endpoint ID [--limit N]   recent attempts, most recent first
  webhook replay --org S --event ID            send an event again to its endpoints
  upload --token T --org S --repo HOST/OWNER/NAME --sha SHA --branch B [--pr N]
         [--variant V] [--codeowners PATH] [--url BASE] FILES...

Administration works on the table TABLE_NAME (default mainguard) at
DYNAMODB_ENDPOINT, or in AWS when that is unset.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run is the program, with its world passed in so tests drive it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr, getenv)
	case "org", "token", "repo", "test", "uploads":
		err = admin(ctx, args, stdout, getenv)
	case "webhook":
		err = webhook(ctx, args[1:], stdout, getenv)
	case "upload":
		err = upload(ctx, args[1:], stdout, getenv, time.Now)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "mainguard: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "mainguard:", err)
		if _, ok := err.(usageError); ok {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is a mistake in the command line.
type usageError string

func (u usageError) Error() string { return string(u) }
