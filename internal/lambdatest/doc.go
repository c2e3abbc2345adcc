// Package lambdatest runs every function as Lambda runs it: each
// functions/<name> built as a linux bootstrap, started under AWS's Runtime
// Interface Emulator with the environment template.yaml gives it and AWS
// credentials that may read only the secrets its policies name (from the
// Secrets Manager stand-in), driven with API Gateway HTTP API 2.0, S3,
// DynamoDB stream and schedule events, and answering as the local server
// does for the same events. It has no code outside its tests: it is a
// package of its own so that its slow build runs beside the other
// packages' tests.
package lambdatest
