// Package uploadapi owns the endpoints the uploader speaks (contract 1):
//
//	POST /metrics/getQuarantineConfig  is quarantining on, and which named tests are quarantined
//	POST /metrics/createBundleUpload   an upload record and a pre-signed address to PUT the bundle to
//	PUT  /bundles/…                   the local server's stand-in for S3 (LocalUploads; not deployed)
//
// The bundle itself is ingested by package healthsvc when it lands.
package uploadapi
