package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
)

func badRequest(format string, args ...any) error { return errs.E(errs.Invalid, format, args...) }

// Decode reads the JSON object body of r into v and checks every string
// field of v against Limits. Errors are our own sentences naming the field
// ("test_id must be a string, not a number") or the byte where the body
// went wrong; they never carry the decoder's text or the body's bytes.
func Decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return errTooLarge()
	case err != nil:
		return badRequest("request body could not be read")
	}
	if !utf8.Valid(body) {
		return badRequest("request body is not valid UTF-8 at byte %d", invalidUTF8At(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	err = dec.Decode(v)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		if _, err := dec.Token(); err != io.EOF {
			return badRequest("request body must hold exactly one JSON object")
		}
		return checkFields(reflect.ValueOf(v))
	case errors.Is(err, io.EOF):
		return badRequest("request body must be a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("request body is not valid JSON: it ends too early")
	case errors.As(err, &syn):
		return badRequest("request body is not valid JSON: unexpected character at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("request body must be a JSON object, not %s", article(typ.Value))
		}
		return badRequest("%s must be %s, not %s", fieldPath(reflect.TypeOf(v), typ.Field), jsonKind(typ.Type.Kind().String()), article(typ.Value))
	}
	return badRequest("request body is not valid JSON")
}

// fieldPath is the field the decoder names in path (the Go names of the
// embedded structs it went through, then JSON names) as the request spells
// it: JSON flattens an embedded struct of request type t, so its name is
// left out ("QueuePatch.concurrency" is "concurrency").
func fieldPath(t reflect.Type, path string) string {
	embedded := map[string]bool{}
	embeddedNames(t, embedded, map[reflect.Type]bool{})
	return strings.Join(slices.DeleteFunc(strings.Split(path, "."), func(p string) bool { return embedded[p] }), ".")
}

// embeddedNames adds to names the name of every struct that t embeds
// without a JSON name, at any depth.
func embeddedNames(t reflect.Type, names map[string]bool, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.Anonymous && tag == "" {
			names[f.Name] = true
		}
		embeddedNames(f.Type, names, seen)
	}
}

// invalidUTF8At is the position of the first byte of b that is not valid
// UTF-8, counting from 1 as the JSON decoder's offsets do.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i + 1
		}
		i += n
	}
	return len(b)
}

// checkFields checks every string that v, a decoded request, holds
// against its field's limit. It visits every field of the type, set or
// not, so that a request field missing from the table fails every call of
// its endpoint (a 500 its tests meet), not only those that set it.
func checkFields(v reflect.Value) error {
	return walkFields(v, "", "", func(field, name string, v reflect.Value) error {
		l, ok := limitByField[field]
		if !ok {
			return errs.E(errs.Internal, "api: no limit for request field %s", field)
		}
		switch v.Kind() {
		case reflect.String:
			return l.Check(name, v.String())
		case reflect.Interface: // a field of several types (priority)
			s, _ := v.Interface().(string)
			return l.Check(name, s)
		}
		if err := l.CheckItems(name, v.Len()); err != nil {
			return err
		}
		if v.Type().Elem().Kind() == reflect.String {
			for i := range v.Len() {
				if err := l.Check(fmt.Sprintf("%s[%d]", name, i), v.Index(i).String()); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// walkFields calls leaf for every string, interface and list that v
// holds, with its field's name in Limits ("testIdentifiers[].name") and
// the name an error shows ("testIdentifiers[3].name"); a list of objects
// is a leaf, then its objects are walked. A nil pointer or an empty list
// is walked as a zero value, so every field of the type is met.
func walkFields(v reflect.Value, field, name string, leaf func(field, name string, v reflect.Value) error) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return walkFields(reflect.Zero(v.Type().Elem()), field, name, leaf)
		}
		return walkFields(v.Elem(), field, name, leaf)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() && !f.Anonymous || tag == "-" || f.Type == rawMessage {
				continue // a raw field is read, and checked, by its handler
			}
			sub, subName := field, name
			if !f.Anonymous || tag != "" {
				if tag == "" {
					tag = f.Name
				}
				sub, subName = join(field, tag), join(name, tag)
			}
			if err := walkFields(v.Field(i), sub, subName, leaf); err != nil {
				return err
			}
		}
		return nil
	case reflect.String, reflect.Interface:
		return leaf(field, name, v)
	case reflect.Slice:
		if err := leaf(field, name, v); err != nil || v.Type().Elem().Kind() == reflect.String {
			return err
		}
		if v.Len() == 0 {
			return walkFields(reflect.Zero(v.Type().Elem()), field+"[]", name+"[]", leaf)
		}
		for i := range v.Len() {
			if err := walkFields(v.Index(i), field+"[]", fmt.Sprintf("%s[%d]", name, i), leaf); err != nil {
				return err
			}
		}
	}
	return nil // numbers and booleans: their range is the handler's rule
}

// RequestFields are the fields of Limits that a request of type Req
// holds, for the tests that drive every field of every endpoint.
func RequestFields[Req any]() []string {
	var out []string
	_ = walkFields(reflect.ValueOf(new(Req)), "", "", func(field, _ string, _ reflect.Value) error {
		out = append(out, field)
		return nil
	})
	return out
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// article names the kind of a JSON value the decoder reports: "number",
// or "number 1e999" for one that does not fit (the value is input, not
// shown).
func article(v string) string {
	v, _, _ = strings.Cut(v, " ")
	switch v {
	case "array", "object":
		return "an " + v
	case "number", "string", "bool":
		return "a " + v
	}
	return "a value"
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
	if err := (Limit{Max: 36, Chars: uuidChars}).Check(field, v); err != nil {
		return "", err
	}
	return strings.ToLower(v), nil
}

// Clip keeps text shown in a message or kept as a note short: at most 64
// bytes, cut on a character boundary.
func Clip(s string) string {
	if c := cut(s); len(c) < len(s) {
		return c + "…"
	}
	return s
}

// cut is s cut to at most 64 bytes without splitting a UTF-8 sequence.
func cut(s string) string {
	if len(s) <= 64 {
		return s
	}
	i := 64
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// JSON serves fn: it decodes the body into a fresh Req, and answers fn's
// result as 200 JSON or its error through WriteError.
func JSON[Req any](fn func(r *http.Request, req *Req) (any, error)) http.Handler {
	return jsonHandler[Req](fn)
}

type jsonHandler[Req any] func(r *http.Request, req *Req) (any, error)

func (fn jsonHandler[Req]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
}

// RequestFields are the fields of Limits its requests hold.
func (jsonHandler[Req]) RequestFields() []string { return RequestFields[Req]() }

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
