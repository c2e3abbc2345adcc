// Package testkit holds what the repository's tests share: the real JUnit
// reports under testdata/junit, found from any package directory.
package testkit
