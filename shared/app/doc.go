// Package app is the whole service in one process, for the local server
// and the end-to-end tests: one lambdafn.Base, and from it every endpoint
// group and event handler, built by the same constructors each Lambda
// function's main calls for its own (so what is tested is what ships),
// served under /v1 through the Lambda adapter.
package app
