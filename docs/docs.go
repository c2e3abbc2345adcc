// Package docs holds the API's description: api.md in prose, and
// openapi.yaml, which this package embeds so the service can serve it at
// GET /v1/openapi.yaml and the tests can check the wire against it.
package docs

import _ "embed"

// OpenAPI is openapi.yaml, the OpenAPI 3.1 document of the API.
//
//go:embed openapi.yaml
var OpenAPI []byte
