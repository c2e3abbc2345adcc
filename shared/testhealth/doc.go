// Package testhealth is the domain of test health: a test case and its
// history (runs, hourly and daily counters, failure clusters, flake
// evidence, streaks), a repository's health settings with their defaults,
// the status rules (healthy, flaky, broken, with the evidence as reason),
// quarantine candidacy, the hour and day buckets every figure is counted
// in, and the figures read off a test (failure rates, most common
// failures, pull requests impacted). It does no I/O: package store keeps
// these types in DynamoDB, and the other packages of this tree are
// adapters around it.
package testhealth
