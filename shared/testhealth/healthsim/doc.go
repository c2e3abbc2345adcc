// Package healthsim is a test-health simulator: it replays a generated CI
// history through the real classifier (testhealth.TallyRuns, the counting
// rule the store applies to a test's counter item, and testhealth.Decide,
// the decision an ingest and the scheduled reclassification make), as the
// merge queue's simulator (package mergequeue/queuesim) drives the real queue
// engine. There is no server, no table, no goroutine and no wall clock: a
// run is a function of its Config, seed included.
//
// # The history
//
// A repository has healthy tests, which never fail; flaky tests, each
// failing a run on its own with a rate drawn from a distribution (Rates);
// regressions, healthy tests that a commit of main breaks (every run fails)
// and a later commit fixes; and fixed tests, flaky tests whose flakiness a
// commit of main fixes. Main gets Commits commits spread over Days days;
// before each, its pull request's branch runs CI PRRuns times. The tests
// are split into CI jobs of JobSize tests, each job one upload; a job in
// which a test failed is retried Retries times on the same commit, as CI
// "re-run failed jobs" does. An attempt is an infrastructure outage with
// probability InfraRate: every test of the job fails in it.
//
// # The ingest
//
// Each upload goes through what healthsvc's ingest does, in memory: the
// infrastructure guard's share (testhealth.GuardCount), what the commit's
// earlier uploads showed of each failing test (its batch records), the
// counting of each test's runs, the pass-on-retry evidence of a test that
// failed in one upload of a commit and passed in another, and the decision
// of every test of the upload. The scheduled reclassification of the
// unhealthy tests runs every simulated hour (deployed, every minute:
// nothing it decides is finer than an hour). Each change of a test's
// status value is one test_case.status_changed event.
//
// # The figures
//
// Result holds, per classifier: recall at the end by rate bucket (the
// flaky tests that failed at least once in the history, not fixed, listed
// flaky at its end), the detection latency in runs (from a flaky test's
// first failure to its first listing as flaky), false positives (healthy
// tests ever listed unhealthy), broken/flaky mix-ups (flaky tests ever
// listed broken, and of those while pass-on-retry evidence was in its
// window; regressions ever listed flaky), status changes per flaky test and
// changes that went back on one commit, the commits a regression took to
// be listed broken, and the runs a fixed test took to be healthy again
// beside the clean runs its recovery asked (testhealth.RecoveryRuns).
// WriteTable prints them, one column per classifier, as `mainguard sim
// health` shows them.
package healthsim
