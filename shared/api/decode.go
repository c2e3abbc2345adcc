package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
)

func badRequest(format string, args ...any) error { return errs.E(errs.Invalid, format, args...) }

// Decode reads the JSON object body of r into v. Errors name the field:
// "test_id must be a string, not a number".
func Decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	err := dec.Decode(v)
	if err == nil {
		if _, err := dec.Token(); err != io.EOF {
			return badRequest("request body must hold exactly one JSON object")
		}
		return nil
	}
	var tooBig *http.MaxBytesError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		return errTooLarge()
	case errors.Is(err, io.EOF):
		return badRequest("request body must be a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("request body is not valid JSON: it ends too early")
	case errors.As(err, &syn):
		return badRequest("request body is not valid JSON: %s at byte %d", syn.Error(), syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("request body must be a JSON object, not %s", article(typ.Value))
		}
		return badRequest("%s must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), article(typ.Value))
	}
	return badRequest("request body is not valid JSON: %v", err)
}

func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "number", "string", "bool":
		return "a " + v
	}
	return v
}

func jsonKind(goKind string) string {
	switch {
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "a boolean"
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"), strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "slice", goKind == "array":
		return "an array"
	}
	return "an object"
}

// RequireRepo checks a repository reference: present, every part a
// non-empty string.
func RequireRepo(r *repository.Ref, field string) (repository.Ref, error) {
	if r == nil {
		return repository.Ref{}, badRequest("%s is required", field)
	}
	for _, p := range []struct{ name, v string }{{"host", r.Host}, {"owner", r.Owner}, {"name", r.Name}} {
		if strings.TrimSpace(p.v) == "" {
			return repository.Ref{}, badRequest("%s.%s is required", field, p.name)
		}
	}
	return *r, nil
}

// RequireString checks a required string field.
func RequireString(v, field string) error {
	if strings.TrimSpace(v) == "" {
		return badRequest("%s is required", field)
	}
	return nil
}

// RequireUUID checks a required uuid field written in the canonical
// 8-4-4-4-12 form and returns it in lowercase.
func RequireUUID(v, field string) (string, error) {
	if err := RequireString(v, field); err != nil {
		return "", err
	}
	if len(v) != 36 {
		return "", badRequest("%s must be a uuid like 01234567-0123-0123-0123-0123456789ab, got %q", field, Clip(v))
	}
	u, err := uuid.Parse(v)
	if err != nil {
		return "", badRequest("%s must be a uuid like 01234567-0123-0123-0123-0123456789ab, got %q", field, Clip(v))
	}
	return u.String(), nil
}

// Clip keeps input echoed in an error message short.
func Clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// JSON serves fn: it decodes the body into a fresh Req, and answers fn's
// result as 200 JSON or its error through WriteError.
func JSON[Req any](fn func(r *http.Request, req *Req) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := new(Req)
		if err := Decode(r, req); err != nil {
			WriteError(w, r, err)
			return
		}
		resp, err := fn(r, req)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		WriteJSON(w, r, http.StatusOK, resp)
	})
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		WriteError(w, r, errs.Wrap(errs.Internal, fmt.Errorf("encode response: %w", err), "internal error"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
