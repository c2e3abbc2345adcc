package junit

import (
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// parseSeconds reads a time attribute. Generators write "1.5", "",
// "-345345" (clock skew), "1,234.5" (locale thousands separators) and now
// and then "1.5s"; none of them may fail a report, so anything unreadable
// is reported as absent (ok false) and negative or non-finite values as 0.
func parseSeconds(s string) (d time.Duration, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if strings.IndexByte(s, ',') >= 0 {
		s = strings.ReplaceAll(s, ",", "")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		pd, err := time.ParseDuration(s)
		if err != nil {
			return 0, false
		}
		f = pd.Seconds()
	}
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0, true
	case f >= float64(math.MaxInt64)/float64(time.Second):
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(math.Round(f * float64(time.Second))), true
}

// timestampLayouts are tried in order. When parsing, Go accepts a
// fractional second after the seconds even if the layout has none, so
// each layout also covers its variants with fractions.
var timestampLayouts = []string{
	time.RFC3339,          // 2006-01-02T15:04:05Z07:00 (JUnit XSD, most generators)
	"2006-01-02T15:04:05", // Surefire, Gradle, jest-junit, pytest: local time without zone
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05 MST", // TestNG: 2021-03-07T10:36:56 UTC
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05 MST",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
	time.RFC1123Z,
	time.RFC1123,
}

// parseTimestamp reads a timestamp attribute in any of the layouts seen in
// the wild. Times without a zone are taken as UTC (the report does not say
// which zone the CI machine used). Unreadable values and the zero time
// gotestsum writes (0001-01-01T00:00:00Z) mean unknown: the zero Time.
func parseTimestamp(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	// "2024-01-03T 12:40:13" (seen in Jenkins' test data).
	if i := strings.Index(s, "T "); i >= 0 {
		s = s[:i+1] + strings.TrimLeft(s[i+1:], " ")
	}
	for _, layout := range timestampLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if t.Year() <= 1 {
			return time.Time{}
		}
		return t
	}
	return time.Time{}
}

// normFile normalises a file attribute so one source file reads the same
// from every generator: xcresult percent-encodes (%20), rspec prefixes
// "./". Backslashes are left alone: they are part of Windows paths and
// rewriting them would make a different name, not the same one.
func normFile(s string) string {
	if s == "" {
		return ""
	}
	if hasPercentEscape(s) {
		if u, err := url.PathUnescape(s); err == nil && utf8.ValidString(u) {
			s = u
		}
	}
	for strings.HasPrefix(s, "./") {
		s = s[2:]
	}
	return s
}

func hasPercentEscape(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0 && i+2 < len(s); {
		if isHex(s[i+1]) && isHex(s[i+2]) {
			return true
		}
		j := strings.IndexByte(s[i+1:], '%')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// charsetError names an encoding Parse does not read.
type charsetError struct{ label string }

func (e *charsetError) Error() string { return "unsupported encoding " + strconv.Quote(e.label) }

// charsetReader is the decoder's CharsetReader. UTF-8 is handled by the
// decoder itself; US-ASCII is a subset of it; ISO-8859-1 (which older Ant
// and Jenkins reports declare) is converted. Anything else is refused
// rather than misread.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii", "ansi_x3.4-1968":
		return input, nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1":
		return &latin1Reader{r: input}, nil
	}
	return nil, &charsetError{label: label}
}

// latin1Reader converts ISO-8859-1 bytes to UTF-8.
type latin1Reader struct {
	r    io.Reader
	in   []byte
	pend []byte // converted bytes that did not fit the caller's buffer
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(l.pend) > 0 {
		n := copy(p, l.pend)
		l.pend = l.pend[n:]
		return n, nil
	}
	want := max(len(p)/2, 1)
	if cap(l.in) < want {
		l.in = make([]byte, want)
	}
	n, err := l.r.Read(l.in[:want])
	out := p[:0:len(p)] // never write past len(p)
	for _, c := range l.in[:n] {
		if c < utf8.RuneSelf {
			out = append(out, c)
		} else {
			out = utf8.AppendRune(out, rune(c))
		}
	}
	if len(out) > len(p) {
		// Only when len(p) == 1: append reallocated, keep the rest.
		l.pend = append(l.pend[:0], out[len(p):]...)
		copy(p, out)
		return len(p), err
	}
	return len(out), err
}
