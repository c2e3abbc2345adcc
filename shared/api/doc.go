// Package api owns the HTTP surface shared by every function: the adapter
// between API Gateway HTTP API (payload 2.0) events and net/http handlers,
// the middleware every request passes (request id, log line, method, body
// limit, token, rate limit), JSON decoding with field-naming errors, and the
// one table that turns error codes into statuses and plain-text bodies.
//
// It imports no storage: the few store methods its limiters and token
// cache call are interfaces declared here (OrgBuckets, FailureBuckets,
// TokenStore), which *store.Store implements, on the vocabulary both share
// in package access.
package api
