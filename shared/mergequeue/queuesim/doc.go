// Package queuesim is a simulator that drives the real merge-queue engine. It is
// a discrete-event loop on a virtual clock: it submits pull requests with
// mergequeue.Submit, steps the queue with mergequeue.Step, performs the
// effects the engine returns on a simulated GitHub and CI (the world), and
// feeds their outcomes back as mergequeue.Observations, as the driver does
// in production. There is no GitHub, no store, no goroutine and no wall
// clock: a run is a function of its Config, seed included.
//
// # The world
//
// Pull requests arrive saturated (the queue always holds plenty of PRs not
// yet tested) or as a Poisson process. Each is bad with probability p:
// exactly round(p·N) of the N PRs, at random places, so that the share of
// bad PRs does not vary from run to run (see badPRs). Each belongs to one
// of K impacted-target groups drawn at random, or impacts ALL without
// groups; its targets are set when it is opened, and the observations
// carry them while the queue is PARALLEL, as the driver reads them. A PR
// is opened mergeable on the target branch as it then is, its own checks
// failing when it is bad (direct merge reads them), then submitted; every
// step observes the submitted PRs, so the engine can move them from
// NOT_READY to PENDING.
//
// A StartRun builds its test branch at once (the BuildResult comes with the
// next step). The CI run then takes the test time T, or a time uniform in
// T·[1−s, 1+s] with a spread s, and reports the required statuses at its
// end: failure if a test failed. Each bad PR in the run's heads breaks a
// test of its own, one test health holds healthy; and CI has a few flaky
// tests, each failing a run on its own in 1 to 10% of runs, as many as
// make a good run fail with the flake probability f (see flakyRates).
// Test health knows them as flaky but for a share of them, which it holds
// healthy. The same run id asked for again (the engine retries builds it
// heard nothing of) is the same CI run. A MergePR merges at once, pinned to
// the head it names, and moves the target branch; DeleteBranches removes a
// run's branch, so its checks never come. Statuses and events are counted.
//
// A run's failed tests reach test health with its checks, or an upload
// delay later. The world answers the engine's EvidenceWanted with them, as
// a driver must, so the queue's anti-flake retries (flakyRetries) read
// them, or give up waiting for them.
//
// # The clock
//
// The engine is stepped at every event (an arrival, a build, a run ending,
// or an upload the engine waits for), again at the same instant while the
// world holds what it has not seen (a build or a merge to answer, test
// results it waits for; merges cascade: the next PR of the line may merge
// at the same instant), and on the deployed scheduler's one-minute tick,
// so rules of time (timeouts, retries, batching waits, waits for test
// results) fire as they would in production.
// Most ticks change nothing, and stepping them all would cost thirty steps
// per half-hour run, so the loop skips them when a probe proves them quiet
// (see next in clock.go).
//
// # The model
//
// In SINGLE mode with C test runs at once, no batching, a fixed T and a
// saturated queue, the runs start and end together: each such generation
// merges the PRs ahead of the first failing run, at most C. With each run
// passing with probability a = (1−p)(1−f), a generation merges on average
// Σ_{k=1..C} a^k = a(1−a^C)/(1−a) PRs per T, which with f = 0 is the
// q(1−q^C)/p of the merge-queue literature (q = 1−p). In PARALLEL mode
// with K groups, the runs go to the groups' lanes by submit order
// (SharedLanesBound). Result holds the model's figure beside the measured
// throughput.
package queuesim
