// Package testkit holds what the repository's tests share: the real JUnit
// reports under testdata/junit, found from any package directory, and a
// buffer safe to read while a server writes it.
package testkit
