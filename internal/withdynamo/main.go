// Command withdynamo runs a command beside one DynamoDB Local, whose address
// it passes in DYNAMODB_ENDPOINT, and stops it when the command ends:
//
//	go run ./internal/withdynamo go test ./...
//
// `make test` runs the suite so. Every package's tests would otherwise start
// a DynamoDB Local of their own (storetest.Main), and on a small machine
// the JVMs' starts and warm-ups cost more CPU than the tests; each test
// still gets a fresh table of its own, so sharing the server shares no data.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/mainguard/mainguard/shared/dynamolocal"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: withdynamo COMMAND [ARG...]")
		return 2
	}
	// As long as the JVM needs on a loaded machine, saying so on stderr.
	ctx, cancel := context.WithTimeout(context.Background(), dynamolocal.HangGuard)
	in, err := dynamolocal.Start(ctx, dynamolocal.Options{Progress: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "withdynamo:", err)
		return 2
	}
	defer in.Stop()

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "DYNAMODB_ENDPOINT="+in.Endpoint)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "withdynamo:", err)
		return 2
	}
	// An interrupt reaches the command through the terminal's process group;
	// wait for it to end, then stop DynamoDB Local.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "withdynamo:", err)
		return 2
	}
}
