// Package access owns the vocabulary of API access that the store keeps and
// package api enforces: a token's stored form (HashToken) and the shared token
// buckets that limit callers (Bucket, Lease). It sits below both so that api
// declares the few store methods it calls as interfaces of its own without
// importing the store.
package access
