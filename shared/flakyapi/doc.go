// Package flakyapi owns the /flaky-tests endpoints of the API: reading a
// test case and linking a ticket to it, and the JSON shape of the test case
// object that every test endpoint and test webhook shares.
package flakyapi
