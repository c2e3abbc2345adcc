// Package docs holds the API's description: api.md in prose, and
// openapi.yaml, which this package embeds so the service can serve it at
// GET /v1/openapi.yaml and the tests can check the wire against it.
package docs

import (
	_ "embed"
	"net/http"
)

// OpenAPI is openapi.yaml, the OpenAPI 3.1 document of the API.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Handler answers the OpenAPI document (the openapi function).
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(OpenAPI)
	})
}
