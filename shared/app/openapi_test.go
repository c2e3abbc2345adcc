package app_test

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mainguard/mainguard/docs"
)

// loadOpenAPI parses and validates docs/openapi.yaml as the service embeds
// and serves it.
func loadOpenAPI(tb testing.TB) *openapi3.T {
	tb.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
	if err != nil {
		tb.Fatalf("docs/openapi.yaml does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		tb.Fatalf("docs/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// operation finds the path item of a concrete path (templates such as
// /bundles/{org}/{upload} match any segment) and its operation for method.
func operation(doc *openapi3.T, path, method string) (string, *openapi3.PathItem, *openapi3.Operation) {
	for tmpl, item := range doc.Paths.Map() {
		re := "^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(tmpl), `[^/]+`) + "$"
		if regexp.MustCompile(re).MatchString(path) {
			return tmpl, item, item.GetOperation(method)
		}
	}
	return "", nil, nil
}

// mediaSchema is the schema of content for contentType, matched exactly or
// by media type without parameters.
func mediaSchema(content openapi3.Content, contentType string) *openapi3.Schema {
	if mt := content.Get(contentType); mt != nil && mt.Schema != nil {
		return mt.Schema.Value
	}
	base, _, _ := mime.ParseMediaType(contentType)
	for key, mt := range content {
		if k, _, _ := mime.ParseMediaType(key); k == base && mt.Schema != nil {
			return mt.Schema.Value
		}
	}
	return nil
}

func visit(s *openapi3.Schema, v any) error {
	return s.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors())
}

// TestGoldenFilesMatchOpenAPI checks every golden request and response of
// every endpoint against docs/openapi.yaml, so the description cannot drift
// from the wire: each response's status and content type must be
// documented for its operation and its body must satisfy the schema (no
// field the document does not allow, none it requires missing); each
// request that succeeded must satisfy the operation's request schema; a
// request with another method must be one the document does not have.
func TestGoldenFilesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	reqs, _ := filepath.Glob("testdata/*/*.request.json")
	if len(reqs) == 0 {
		t.Fatal("no golden requests found")
	}
	covered := map[string]int{} // "METHOD template" → golden files
	for _, reqPath := range reqs {
		respPath := strings.TrimSuffix(reqPath, ".request.json") + ".response.json"
		t.Run(strings.TrimPrefix(strings.TrimSuffix(reqPath, ".request.json"), "testdata/"), func(t *testing.T) {
			var ev events.APIGatewayV2HTTPRequest
			var resp golden
			for path, v := range map[string]any{reqPath: &ev, respPath: &resp} {
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, v); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
			}
			path := strings.TrimPrefix(ev.RawPath, "/v1")
			method := ev.RequestContext.HTTP.Method
			tmpl, item, op := operation(doc, path, method)
			if item == nil {
				t.Fatalf("%s is not in docs/openapi.yaml", path)
			}
			if op == nil {
				// A method the document does not have is the 405 every
				// endpoint answers.
				if resp.StatusCode != http.StatusMethodNotAllowed {
					t.Fatalf("%s %s is not in the document, yet it answered %d", method, path, resp.StatusCode)
				}
				op = item.Operations()[sortedMethods(item)[0]]
			} else {
				covered[method+" "+tmpl]++
			}
			ref := op.Responses.Status(resp.StatusCode)
			if ref == nil || ref.Value == nil {
				t.Fatalf("%s %s: status %d is not documented", method, tmpl, resp.StatusCode)
			}
			ct := resp.Headers["content-type"]
			schema := mediaSchema(ref.Value.Content, ct)
			if schema == nil {
				t.Fatalf("%s %s %d: content type %q is not documented", method, tmpl, resp.StatusCode, ct)
			}
			if err := visit(schema, resp.Body); err != nil {
				t.Errorf("%s %s %d: the response body does not match the document: %v", method, tmpl, resp.StatusCode, err)
			}
			if resp.StatusCode != http.StatusOK || op.RequestBody == nil {
				return
			}
			var body any
			if err := json.Unmarshal([]byte(ev.Body), &body); err != nil {
				t.Fatalf("%s %s: a request that succeeded is not JSON: %v", method, tmpl, err)
			}
			reqSchema := mediaSchema(op.RequestBody.Value.Content, "application/json")
			if reqSchema == nil {
				t.Fatalf("%s %s: no JSON request body in the document", method, tmpl)
			}
			if err := visit(reqSchema, body); err != nil {
				t.Errorf("%s %s: a request the service accepted does not match the document: %v", method, tmpl, err)
			}
		})
	}
	// Every operation of the document has golden files, but the local
	// bundle PUT, whose addresses are signed per run (its own tests cover
	// it), and the document itself (TestOpenAPIServed).
	for tmpl, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			key := method + " " + tmpl
			if covered[key] == 0 && tmpl != "/bundles/{org}/{upload}" && tmpl != "/openapi.yaml" {
				t.Errorf("%s has no golden files", key)
			}
		}
	}
	t.Logf("golden files per operation: %v", covered)
}

// TestOpenAPICoversEveryRoute: each route of the route table is an
// operation of the document, and the document has no other.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	h := newHarness(t, nil)
	documented := map[string]bool{}
	for tmpl, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+tmpl] = true
		}
	}
	for _, ep := range h.app.Endpoints() {
		path := ep.Path
		if strings.HasSuffix(path, "/") { // a prefix route: the local bundle PUT
			path += "x/y"
		}
		tmpl, _, op := operation(doc, path, ep.Method)
		if op == nil {
			t.Errorf("route %s %s (%s) is not in docs/openapi.yaml", ep.Method, ep.Path, ep.Name)
			continue
		}
		delete(documented, ep.Method+" "+tmpl)
	}
	// The local PUT is a route of the local server only (deployed, the
	// address is S3's), and the harness builds the deployed shape.
	delete(documented, "PUT /bundles/{org}/{upload}")
	for op := range documented {
		t.Errorf("docs/openapi.yaml describes %s, which no route serves", op)
	}
}

// TestOpenAPIServed: GET /v1/openapi.yaml answers the document, without a
// token.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ev := event("/openapi.yaml", nil)
	ev.RequestContext.HTTP.Method, ev.Body = http.MethodGet, ""
	delete(ev.Headers, "x-api-token")
	resp := h.call(t, "openapi", ev)
	if resp.StatusCode != http.StatusOK || resp.Headers["content-type"] != "application/yaml" || resp.Body != string(docs.OpenAPI) {
		t.Errorf("GET /v1/openapi.yaml: %d %q, %d bytes", resp.StatusCode, resp.Headers["content-type"], len(resp.Body))
	}
}

// TestOpenAPILicence: the document's licence is the repository's, named
// by its SPDX identifier, which OpenAPI 3.1 validators stricter than
// kin-openapi (swagger-parser) require beside the name; url, which 3.1
// makes exclusive with it, is not given.
func TestOpenAPILicence(t *testing.T) {
	t.Parallel()
	l := loadOpenAPI(t).Info.License
	if l == nil || l.Name == "" || l.Identifier != "Apache-2.0" || l.URL != "" {
		t.Fatalf("info.license %+v: want a name and identifier Apache-2.0, no url", l)
	}
	licence, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(licence), "Apache License") || !strings.Contains(string(licence), "Version 2.0, January 2004") {
		t.Errorf("LICENSE is not the Apache License 2.0 that info.license names")
	}
}

func sortedMethods(item *openapi3.PathItem) []string {
	var ms []string
	for m := range item.Operations() {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return ms
}

// TestAPIDocListsErrorSentences: every error sentence a golden file pins is
// in docs/api.md, so the prose description cannot drift from the wire
// either.
func TestAPIDocListsErrorSentences(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	resps, _ := filepath.Glob("testdata/*/*.response.json")
	n := 0
	for _, path := range resps {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var g golden
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatal(err)
		}
		body, ok := g.Body.(string)
		if !ok || g.StatusCode < 400 {
			continue
		}
		n++
		want := "`" + strings.ReplaceAll(strings.TrimSpace(body), "|", `\|`) + "`"
		if !strings.Contains(string(md), want) {
			t.Errorf("docs/api.md does not list the error of %s: %s", path, want)
		}
	}
	if n == 0 {
		t.Error("no error sentences found in the golden files")
	}
}
