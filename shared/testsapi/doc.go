// Package testsapi owns the test-health endpoints of the API, each a POST
// with a JSON body:
//
//	/flaky-tests/get-test-details          one test case (contract 2.1)
//	/flaky-tests/link-ticket-to-test-case  link a Jira or Linear ticket (2.2)
//	/flaky-tests/list-quarantined-tests    quarantined tests, paged (2.5)
//	/flaky-tests/list-unhealthy-tests      flaky and broken tests, paged (2.6)
//	/flaky-tests/list-failing-tests        tests that failed in a time range, paged (2.7)
//	/flaky-tests/label-failures            "was this failure mine?": failed tests labelled (ours)
//
// It validates requests with the contract's sentences and renders tests
// through package healthview; the uploader's endpoints are package uploadapi's.
package testsapi
