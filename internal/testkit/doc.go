// Package testkit holds what the repository's tests share: the real JUnit
// reports under testdata/junit, found from any package directory; a clock
// the test drives and numbered uuids; one golden-file comparison with
// -update; a buffer safe to read while a server writes it; an
// S3-compatible server with a bucket; a free loopback address for a
// server a test starts (FreeAddr); and the programs tests run as their
// own processes, built once per state of the code (Built). The whole
// service over DynamoDB Local for end-to-end tests is internal/testkit/
// service.
package testkit
