// Package testhealth is the domain of test health: a test case and its
// history (runs, hourly and daily counters, failure clusters, flake
// evidence, commit streaks, flaky episodes), how an upload's runs count
// into it (Tally) and how the infrastructure guard counts an upload
// (GuardCount), a repository's health settings with their defaults, the
// status rules and the decision made on them (Classify, Decide: healthy,
// flaky, broken, with the evidence as reason; recovery by evidence,
// RecoveryRuns), quarantine candidacy and overrides that end (Expire), the
// hour and day buckets every figure is counted in, and the figures read off
// a test (failure rates, most common failures, pull requests impacted). It
// does no I/O: package store keeps these types in DynamoDB, package
// healthsim replays histories through them, and the other packages of this
// tree are adapters around it.
package testhealth
