// Package secrets owns how a copy of a function reads the deployment's
// secrets from AWS Secrets Manager: by the ARN (or name) its configuration
// gives, never from its environment; each value kept for a while (TTL) and
// read again after it, or sooner when something it verifies fails (a
// rotation: Renew). A secret that cannot be read is an errs.Unavailable
// sentence for the request that needed it, not a failure of the copy.
package secrets
