// Package healthview renders test cases as clients see them: the test case
// object of contract 2.1 that every test endpoint and every test-health
// webhook event shares, and those events' payloads. It neither reads nor
// writes anything; the endpoints (testsapi) and the health service
// (healthsvc) both render through it.
package healthview
