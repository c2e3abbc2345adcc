// Package health applies test-health decisions to the store: it ingests
// upload bundles into run items and aggregates, reclassifies tests after
// each ingest and on a schedule, and sets quarantine overrides, writing the
// test_case.* events in the same transaction as each change. The decisions
// themselves are package testhealth's pure functions.
package health
