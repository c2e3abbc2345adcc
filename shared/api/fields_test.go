package api

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/errs"
)

// limitsDoc is the section of docs/api.md that lists Limits, written from
// the table itself.
func limitsDoc() string {
	var b strings.Builder
	b.WriteString("| field | at most (bytes) | items | characters | what |\n|---|---|---|---|---|\n")
	for _, l := range Limits {
		max, items, chars := fmt.Sprint(l.Max), "", l.Chars.Name
		if l.Items > 0 {
			items = fmt.Sprint(l.Items)
		}
		if l.Max == 0 {
			max, chars = "", "a list of objects"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", l.Field, max, items, chars, l.About)
	}
	return b.String()
}

// TestAPIDocListsLimits: docs/api.md lists the table of request fields
// exactly as Limits holds it (go test -update rewrites it).
func TestAPIDocListsLimits(t *testing.T) {
	const path = "../../docs/api.md"
	const begin, end = "<!-- request field limits: generated from shared/api/fields.go -->\n", "<!-- end of request field limits -->\n"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	i, j := strings.Index(md, begin), strings.Index(md, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no section between %q and %q", path, begin, end)
	}
	got := md[:i+len(begin)] + limitsDoc() + md[j:]
	testkit.GoldenText(t, path, []byte(got))
}

func TestLimitsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range Limits {
		if seen[l.Field] {
			t.Errorf("%s is listed twice", l.Field)
		}
		seen[l.Field] = true
		if l.Max == 0 && l.Items == 0 || l.Max > 0 && l.Chars.Valid == nil || l.About == "" {
			t.Errorf("%s: incomplete entry %+v", l.Field, l)
		}
	}
}

func TestClipCutsOnACharacterBoundary(t *testing.T) {
	s := strings.Repeat("é", 40) // 80 bytes, 2 each
	got := Clip(s)
	if !utf8.ValidString(got) || got != strings.Repeat("é", 32)+"…" {
		t.Errorf("Clip = %q", got)
	}
	if Clip("short") != "short" {
		t.Error("a short string must be kept")
	}
}

func TestQuoteEscapesWhatItShows(t *testing.T) {
	for in, want := range map[string]string{
		"a\x00b\x1b[31m":         `"a\x00b\x1b[31m"`,
		"x\u202ey":               `"x\u202ey"`,
		"\xff\xfe":               `"\xff\xfe"`,
		"café":                   `"caf\u00e9"`,
		strings.Repeat("a", 100): `"` + strings.Repeat("a", 64) + `"…`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestDecodeSpeaksItsOwnSentences: decoding errors name the field or the
// byte, in our words, and never show the body.
func TestDecodeSpeaksItsOwnSentences(t *testing.T) {
	type req struct {
		Repo *struct {
			Host string `json:"host"`
		} `json:"repo"`
		Concurrency *int     `json:"concurrency"`
		Statuses    []string `json:"requiredStatuses"`
		Tests       []struct {
			Name string `json:"name"`
		} `json:"testIdentifiers"`
	}
	for body, want := range map[string]string{
		`{"repo":{"host":nul}}`:                                             "request body is not valid JSON: unexpected character at byte 20",
		"{\"repo\":{\"host\":\"a\xffb\"}}":                                  "request body is not valid UTF-8 at byte 19",
		`{"concurrency":1e999}`:                                             "concurrency must be a number, not a number",
		`{"concurrency":"` + strings.Repeat("9", 99) + `"}`:                 "concurrency must be a number, not a string",
		`{"repo":{"host":"` + strings.Repeat("h", 254) + `"}}`:              "repo.host must be at most 253 bytes, got 254",
		`{"repo":{"host":"a\u0000b"}}`:                                      `repo.host must be a host name: ASCII letters, digits, '.' and '-', got "a\x00b"`,
		`{"repo":{"host":"a\ud800"}}`:                                       `repo.host must be a host name: ASCII letters, digits, '.' and '-', got "a\ufffd"`,
		`{"requiredStatuses":["ci","a` + "\u202e" + `b"]}`:                  `requiredStatuses[1] must be printable text: no control or format characters, got "a\u202eb"`,
		`{"requiredStatuses":[` + strings.Repeat(`"s",`, 100) + `"s"]}`:     "requiredStatuses must hold at most 100 items, got 101",
		`{"testIdentifiers":[{"name":"ok"},{"name":"a` + "\\u0007" + `"}]}`: `testIdentifiers[1].name must be text without control characters, got "a\a"`,
		`{"repo":{"host":"github.com"}} {}`:                                 "request body must hold exactly one JSON object",
	} {
		r, _ := http.NewRequest("POST", "/", strings.NewReader(body))
		err := Decode(r, new(req))
		if got := errs.MessageOf(err); got != want || !errs.Is(err, errs.Invalid) {
			t.Errorf("%.60q: got %q (%v), want %q", body, got, errs.CodeOf(err), want)
		}
	}
}

// TestDecodeNamesAnEmbeddedField: a field of an embedded struct is named
// as JSON flattens it, without the struct's name.
func TestDecodeNamesAnEmbeddedField(t *testing.T) {
	type Inner struct {
		Concurrency *int `json:"concurrency"`
	}
	type Middle struct {
		Inner
		Batch *bool `json:"batch"`
	}
	var req struct {
		Middle
	}
	for body, want := range map[string]string{
		`{"concurrency":"2"}`: "concurrency must be a number, not a string",
		`{"batch":1}`:         "batch must be a boolean, not a number",
	} {
		r, _ := http.NewRequest("POST", "/", strings.NewReader(body))
		if got := errs.MessageOf(Decode(r, &req)); got != want {
			t.Errorf("%s: got %q, want %q", body, got, want)
		}
	}
}

// TestDecodeRefusesAFieldWithoutALimit: a request type with a string
// field the table lacks fails (500) whatever the body, so a new field
// cannot ship unchecked.
func TestDecodeRefusesAFieldWithoutALimit(t *testing.T) {
	var req struct {
		Fresh *string `json:"freshField"`
	}
	r, _ := http.NewRequest("POST", "/", strings.NewReader(`{}`))
	if err := Decode(r, &req); !errs.Is(err, errs.Internal) {
		t.Errorf("got %v", err)
	}
}
