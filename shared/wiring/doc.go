// Package wiring builds each function's graph from configuration: the
// Base every function shares (configuration, logger, DynamoDB store,
// middleware, the deployment's secrets) and one builder per service or
// endpoint group, each the only code that builds what it names. Every
// functions/<name>/main.go hands its builder to lambdafn, which starts the
// process; the local server (package app) calls the same builders on one
// Base, so what the end-to-end tests run is what ships.
//
// A builder builds its part once per Base (Build): the local server's
// graph shares one test-health service, one merge-queue service, one
// deliverer between its endpoints, event handlers, scheduler and web app,
// as each function shares them within its own copy.
//
// The builders live in subpackages, one per service or endpoint group
// (health, queues, delivery, webapp, tick; testendpoints, uploadendpoints,
// queueendpoints, metricendpoints), so that a function imports only those
// of its own graph: Go links, and runs at
// start, the initialisation of every package a binary imports, so one
// package of every builder would make every function link every service.
// This package itself imports no endpoint package and no SDK beyond
// DynamoDB's and Secrets Manager's (whose client is built only when a
// secret is first read), and builds only the light parts: the bundle store, the status and
// OpenAPI endpoints.
//
// Process start (reading the environment, lambda.Start) is lambdafn's, not
// this package's: the local server and the administration program build
// graphs here without starting a Lambda runtime.
package wiring
