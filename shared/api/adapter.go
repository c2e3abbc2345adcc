package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// LambdaHandler is what lambda.Start runs for an HTTP API function.
type LambdaHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Lambda adapts h to API Gateway HTTP API (payload format 2.0) events. It is
// the one adapter: every function runs through it, and so does the local
// server (see Bridge), so what runs locally is what ships.
func Lambda(h http.Handler) LambdaHandler {
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		req, err := requestFromEvent(ctx, ev)
		rec := &recorder{header: http.Header{}}
		if err != nil {
			WriteError(rec, req, err)
		} else {
			h.ServeHTTP(rec, req)
		}
		return rec.response(), nil
	}
}

func requestFromEvent(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (*http.Request, error) {
	ctx = withRequestID(ctx, ev.RequestContext.RequestID)
	var body []byte
	var decodeErr error
	if ev.IsBase64Encoded {
		body, decodeErr = base64.StdEncoding.DecodeString(ev.Body)
	} else {
		body = []byte(ev.Body)
	}
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	u := &url.URL{Path: path, RawQuery: ev.RawQueryString}
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		// Only a malformed method or path gets here; answer on a safe request.
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "/", http.NoBody)
		return req, badRequest("the request line is malformed")
	}
	for k, v := range ev.Headers {
		// API Gateway joins repeated headers with commas; keep them as one.
		req.Header.Set(k, v)
	}
	if len(ev.Cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	req.ContentLength = int64(len(body))
	// The local bridge reports a body it refused to buffer by its length.
	if cl, err := strconv.ParseInt(ev.Headers["content-length"], 10, 64); err == nil && cl > req.ContentLength {
		req.ContentLength = cl
	}
	// A body larger in the event than a deployed function can receive is
	// reported by that size, unread, for the middleware's 413: the same
	// answer here as wherever such an event still reaches a function.
	if size := BodySizeInEvent(ev.Body, ev.IsBase64Encoded); size > MaxBody {
		req.Body, req.ContentLength = http.NoBody, size
	}
	req.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	req.Host = ev.RequestContext.DomainName
	req.RequestURI = u.RequestURI()
	if decodeErr != nil {
		return req, badRequest("the request body is not valid base64")
	}
	return req, nil
}

// recorder collects a handler's response for the event reply.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}

func (r *recorder) response() events.APIGatewayV2HTTPResponse {
	r.WriteHeader(http.StatusOK)
	resp := events.APIGatewayV2HTTPResponse{StatusCode: r.status, Headers: map[string]string{}}
	for k, vs := range r.header {
		if http.CanonicalHeaderKey(k) == "Set-Cookie" {
			resp.Cookies = append(resp.Cookies, vs...)
			continue
		}
		resp.Headers[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	if b := r.body.Bytes(); utf8.Valid(b) {
		resp.Body = string(b)
	} else {
		resp.Body, resp.IsBase64Encoded = base64.StdEncoding.EncodeToString(b), true
	}
	return resp
}

// textMedia reports whether API Gateway passes a body of this Content-Type
// to a function as text; any other (or none) it base64-encodes. Text is
// text/* and the JSON, XML and JavaScript types, as its HTTP APIs infer.
func textMedia(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript":
		return true
	}
	return false
}

// Bridge serves plain HTTP by turning each request into the API Gateway
// event Lambda would receive and running it through fn. It buffers at most
// maxBody+1 bytes: a larger body is passed on by its length alone, so the
// shared middleware answers 413 exactly as deployed.
func Bridge(fn LambdaHandler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev := events.APIGatewayV2HTTPRequest{
			Version:        "2.0",
			RouteKey:       "$default",
			RawPath:        r.URL.EscapedPath(),
			RawQueryString: r.URL.RawQuery,
			Headers:        map[string]string{},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				RequestID:  NewRequestID(),
				DomainName: r.Host,
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
					Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: r.RemoteAddr, UserAgent: r.UserAgent(),
				},
			},
		}
		for k, vs := range r.Header {
			ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
		}
		if r.ContentLength > maxBody {
			ev.Headers["content-length"] = strconv.FormatInt(r.ContentLength, 10)
		} else {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			if err != nil {
				http.Error(w, "could not read the request body", http.StatusBadRequest)
				return
			}
			if int64(len(body)) > maxBody {
				ev.Headers["content-length"] = strconv.FormatInt(int64(len(body)), 10)
				body = nil
			} else {
				delete(ev.Headers, "content-length")
			}
			if textMedia(r.Header.Get("Content-Type")) && utf8.Valid(body) {
				ev.Body = string(body)
			} else {
				ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
			}
		}
		resp, _ := fn(r.Context(), ev)
		for k, v := range resp.Headers {
			w.Header().Set(k, v)
		}
		for _, c := range resp.Cookies {
			w.Header().Add("Set-Cookie", c)
		}
		body := []byte(resp.Body)
		if resp.IsBase64Encoded {
			body, _ = base64.StdEncoding.DecodeString(resp.Body)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	})
}
