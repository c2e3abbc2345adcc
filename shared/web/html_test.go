package web

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriterEscapes: every value the pages write comes out as text, in
// an element and in a quoted attribute, whatever it holds, with the
// replacements html/template makes (&#34; &#39; &#43;, NUL as U+FFFD); the
// code's own markup is written as it is.
func TestWriterEscapes(t *testing.T) {
	t.Parallel()
	var h writer
	h.f(`<td title="%s">%s</td>`, `"><script>alert('x')</script>`, "<script>alert(\"x\")</script> & a+b\x00")
	got := h.b.String()
	want := `<td title="&#34;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; a&#43;b` + "\uFFFD" + `</td>`
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("escaped (-got +want):\n%s", diff)
	}
	if strings.Contains(got, "<script") {
		t.Errorf("a script element got through: %s", got)
	}
}

// TestWriterURLs: a URL in href or action keeps only the schemes
// html/template keeps (http, https, mailto, or none: relative), any other
// is "#ZgotmplZ", however spelled; what a URL may not hold is
// percent-encoded, the escapes in it kept, and quotes cannot leave the
// attribute.
func TestWriterURLs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"javascript:alert(1)", "#ZgotmplZ"},
		{"JavaScript:alert(1)", "#ZgotmplZ"},
		{" javascript:alert(1)", "#ZgotmplZ"},
		{"data:text/html,<script>alert(1)</script>", "#ZgotmplZ"},
		{"vbscript:msgbox", "#ZgotmplZ"},
		{"https://ci.example/run/1?a=b&c=d", "https://ci.example/run/1?a=b&amp;c=d"},
		{"HTTP://ci.example/", "HTTP://ci.example/"},
		{"mailto:ops@example.com", "mailto:ops@example.com"},
		{"/acme/merge-queue/acme/web/feature%2Fx", "/acme/merge-queue/acme/web/feature%2Fx"},
		{`/a b/é?q="x"&y='+'#f`, "/a%20b/%c3%a9?q=%22x%22&amp;y=%27&#43;%27#f"},
		{`/x"><script>alert(1)</script>`, "/x%22%3e%3cscript%3ealert%281%29%3c/script%3e"},
		{"//evil.example/p:x", "//evil.example/p:x"}, // a slash before the colon: no scheme, as html/template reads it
		{"100%", "100%25"},
	} {
		var h writer
		h.f(`<a href="%u">`, c.in)
		if got, want := h.b.String(), `<a href="`+c.want+`">`; got != want {
			t.Errorf("%q: got %s, want %s", c.in, got, want)
		}
	}
	var h writer
	h.f(`<a href="/signin/github?next=%q">`, "/acme/flaky-tests?repo=acme/web&x=\"<")
	if got, want := h.b.String(), `<a href="/signin/github?next=%2facme%2fflaky-tests%3frepo%3dacme%2fweb%26x%3d%22%3c">`; got != want {
		t.Errorf("a query value: got %s, want %s", got, want)
	}
}

// TestWriterVerbs: numbers, a literal percent sign, and an argument of the
// wrong type or a missing one, which shows in the page rather than panic.
func TestWriterVerbs(t *testing.T) {
	t.Parallel()
	var h writer
	h.f(`%d of %d, 80%% <b>%s</b>`, 3, 7, "x")
	h.f(` %s|%d|%u`, 4, "four")
	h.raw(`<i>a&b</i>`)
	if got, want := h.b.String(), `3 of 7, 80% <b>x</b> %!s(BAD)|%!d(BAD)|%!u(BAD)<i>a&b</i>`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
