// Package healthsvc is the test-health service: it ingests upload bundles
// into each test's counters (and an item per failed run), reclassifies
// tests from the counters each ingest gets back and on
// a schedule, and sets quarantine overrides, writing the test_case.* events
// in the same transaction as each change. The decisions themselves are
// package testhealth's pure functions (the domain); this package applies
// them to the store. The deployment's own /status check is package app's.
package healthsvc
