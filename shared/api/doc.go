// Package api owns the HTTP surface shared by every function: the adapter
// between API Gateway HTTP API (payload 2.0) events and net/http handlers,
// the middleware every request passes (request id, log line, method, body
// limit, token, rate limit), JSON decoding with field-naming errors, and the
// one table that turns error codes into statuses and plain-text bodies.
package api
