package lambdatest

import (
	"testing"

	"github.com/mainguard/mainguard/internal/testkit"
)

// rieModule is AWS's Runtime Interface Emulator, built from the Go module
// proxy (nothing of it is in the repository).
const rieModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// binaries are the folders of the emulator and of every function's
// bootstrap.
type binaries struct{ rie, functions string }

// build builds them with this machine's own settings, not lambda.mk's
// static arm64 ones: the packages compiled are then those the other
// tests' plain builds (the README tour's) compile too, and the build cache
// serves both. The wiring tested is the same. testkit keeps both folders
// between runs and clones: linking the 29 functions afresh is about 27 s
// of CPU.
func build(tb testing.TB) binaries {
	tb.Helper()
	return binaries{
		rie:       testkit.Installed(tb, rieModule),
		functions: testkit.Built(tb, []string{"-tags", "lambda.norpc", "-ldflags=-s -w"}, "./functions/..."),
	}
}
