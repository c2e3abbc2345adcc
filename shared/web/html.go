package web

import (
	"bytes"
	"strconv"
	"strings"
)

// writer writes a page: its markup as the code spells it, every value
// escaped for where it goes, as html/template escapes it there. The pages
// are Go code (html_*.go), not templates: text/template's evaluator calls
// reflect.Value.MethodByName with names known only at run time, which
// makes the linker keep every exported method of every type in the binary
// (the whole GitHub and AWS clients): the function web was 8 MB larger and
// started half again as slowly. importrules keeps templates out of every
// function.
type writer struct{ b bytes.Buffer }

// raw writes markup as it is: the code's own, never a value.
func (h *writer) raw(markup string) { h.b.WriteString(markup) }

// f writes format, markup as it is, with each verb replaced by the next
// argument:
//
//	%s  a string as text or in a quoted attribute: & < > " ' + and NUL escaped
//	%d  an int
//	%u  a whole URL, in href, action or a refresh: only http, https, mailto
//	    or a relative address, anything else "#ZgotmplZ" (urlFilter), then
//	    percent-encoded where a URL may not hold the byte, and escaped
//	%q  a value in a URL's query: percent-encoded but for letters, digits
//	    and - . _ ~ (queryEscape)
//	%%  a percent sign
//
// An argument of the wrong type, or a missing one, is written as
// "%!s(BAD)" in the page, as fmt would, rather than panic mid-page.
func (h *writer) f(format string, args ...any) {
	for {
		i := strings.IndexByte(format, '%')
		if i < 0 || i == len(format)-1 {
			h.b.WriteString(format)
			return
		}
		h.b.WriteString(format[:i])
		verb := format[i+1]
		format = format[i+2:]
		if verb == '%' {
			h.b.WriteByte('%')
			continue
		}
		var arg any
		if len(args) > 0 {
			arg, args = args[0], args[1:]
		}
		s, isString := arg.(string)
		n, isInt := arg.(int)
		switch {
		case verb == 's' && isString:
			h.b.WriteString(escape(s))
		case verb == 'd' && isInt:
			h.b.WriteString(strconv.Itoa(n))
		case verb == 'u' && isString:
			h.b.WriteString(escape(normalizeURL(urlFilter(s))))
		case verb == 'q' && isString:
			h.b.WriteString(queryEscape(s))
		default:
			h.b.WriteString("%!" + string(verb) + "(BAD)")
		}
	}
}

// escape makes s safe as text and inside a quoted attribute value, with
// html/template's replacements: a NUL becomes U+FFFD (browsers would drop
// or replace it), + is escaped as it is there (UTF-7 sniffing).
func escape(s string) string {
	if !strings.ContainsAny(s, "\x00\"&'+<>") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteString("\uFFFD")
		case '"':
			b.WriteString("&#34;")
		case '&':
			b.WriteString("&amp;")
		case '\'':
			b.WriteString("&#39;")
		case '+':
			b.WriteString("&#43;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unsafeURL is what a URL with another scheme becomes (html/template's
// filterFailsafe after "#"): a link to nowhere on the page.
const unsafeURL = "#ZgotmplZ"

// urlFilter is u when it is relative or its scheme is http, https or
// mailto, and unsafeURL otherwise (javascript:, data:, vbscript:…), as
// html/template's isSafeURL decides: a scheme is what comes before the
// first colon, unless a slash comes first.
func urlFilter(u string) string {
	if scheme, _, ok := strings.Cut(u, ":"); ok && !strings.Contains(scheme, "/") {
		if !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") && !strings.EqualFold(scheme, "mailto") {
			return unsafeURL
		}
	}
	return u
}

// normalizeURL percent-encodes the bytes a URL may not hold as they are
// (spaces, quotes, non-ASCII as UTF-8…), keeping its delimiters and the
// escapes already in it, as html/template's urlNormalizer does.
func normalizeURL(u string) string { return percentEncode(u, true) }

// queryEscape percent-encodes every byte of a query value but letters,
// digits and - . _ ~, as html/template's urlEscaper does (lower-case hex).
func queryEscape(v string) string { return percentEncode(v, false) }

func percentEncode(s string, keepDelims bool) string {
	var b strings.Builder
	written := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-._~", c) >= 0:
			continue
		case keepDelims && strings.IndexByte("!#$&*+,/:;=?@[]", c) >= 0:
			continue
		case keepDelims && c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			continue
		}
		b.WriteString(s[written:i])
		b.WriteByte('%')
		b.WriteByte("0123456789abcdef"[c>>4])
		b.WriteByte("0123456789abcdef"[c&15])
		written = i + 1
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
