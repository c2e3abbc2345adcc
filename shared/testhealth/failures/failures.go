package failures

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Bounds. Failure texts are untrusted and can be whole stack traces; the
// first few KiB tell failures apart, and a bound keeps clustering cheap.
const (
	MaxInput     = 4096 // bytes of a text Normalize reads, and of its result
	SummaryRunes = 256  // characters of a cluster's summary (contract 2.5)
	keyHexChars  = 16
)

// Text is the failure text of a JUnit <failure> or <error>: its message
// attribute, else the first non-empty line of its body, trimmed either way.
// It is "" when both are blank.
func Text(message, body string) string {
	if m := strings.TrimSpace(message); m != "" {
		return m
	}
	for line := range strings.Lines(body) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// Key is the cluster key of a failure text: the first 16 hex characters of
// the SHA-256 of its normalised form. Equal keys mean equal normalised
// forms, up to a 64-bit collision.
func Key(text string) string {
	sum := sha256.Sum256([]byte(Normalize(text)))
	return hex.EncodeToString(sum[:keyHexChars/2])
}

// Summary is text cut to SummaryRunes characters, as shown for a cluster.
// Invalid UTF-8 is replaced with U+FFFD, so the result is always valid.
func Summary(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	n := 0
	for i := range text {
		if n == SummaryRunes {
			return text[:i]
		}
		n++
	}
	return text
}

// Normalize returns the cluster form of a failure text; see the package
// documentation for what it replaces.
func Normalize(text string) string {
	s := prepare(text)
	out := scan(s)
	if len(out) > MaxInput {
		out = cutOutput(out)
	}
	return out
}

// prepare bounds the input to MaxInput bytes of valid UTF-8 and drops ANSI
// escape sequences, before scanning, so that the scanner's decisions never
// depend on bytes that the output does not keep.
func prepare(text string) string {
	text = cutRunes(text, MaxInput)
	if !utf8.ValidString(text) {
		text = cutRunes(strings.ToValidUTF8(text, "\uFFFD"), MaxInput)
	}
	if strings.IndexByte(text, 0x1b) < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		if text[i] != 0x1b {
			b.WriteByte(text[i])
			i++
			continue
		}
		i++
		if i < len(text) && text[i] == '[' {
			// CSI: parameters and intermediates, then one final byte in
			// 0x40..0x7e.
			i++
			for i < len(text) && text[i] >= 0x20 && text[i] <= 0x3f {
				i++
			}
			if i < len(text) && text[i] >= 0x40 && text[i] <= 0x7e {
				i++
			}
		}
	}
	return b.String()
}

// cutRunes returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// cutOutput shortens a normalised text longer than MaxInput (placeholders
// can be longer than what they replace) at a point where the prefix is
// still normalised: the last space, else just after a placeholder.
// Cutting inside a word could leave a prefix that normalises differently
// (half of "abcdef12x" is the hex run "abcdef1").
func cutOutput(out string) string {
	head := out[:MaxInput+1]
	if i := strings.LastIndexByte(head, ' '); i > 0 {
		return out[:i]
	}
	if i := strings.LastIndexByte(head[:MaxInput], '>'); i > 0 {
		return out[:i+1]
	}
	return cutRunes(out, MaxInput)
}
