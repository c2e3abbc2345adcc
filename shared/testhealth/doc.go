// Package testhealth owns the pure logic of test health: test identity,
// and the figures read off a test's aggregate (failure rates, failure
// clusters, pull requests impacted). It does no I/O.
package testhealth
