package failures

import (
	"regexp"
	"strings"
	"testing"
)

// BenchmarkNormalize normalises the failure texts of every fixture report;
// one op is the whole set (71 texts). "regexp-baseline" is the smallest
// regexp normaliser (digits to <n>, whitespace folded) over the same texts,
// for scale: it does a fraction of the work.
func BenchmarkNormalize(b *testing.B) {
	var texts []string
	size := 0
	for _, f := range readFixtureFailures(b) {
		t := Text(f.message, f.body)
		texts = append(texts, t)
		size += min(len(t), MaxInput)
	}
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, t := range texts {
				Normalize(t)
			}
		}
	})
	digits, spaces := regexp.MustCompile(`[0-9]+`), regexp.MustCompile(`\s+`)
	b.Run("regexp-baseline", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, t := range texts {
				t = cutRunes(t, MaxInput)
				spaces.ReplaceAllString(digits.ReplaceAllString(t, "<n>"), " ")
			}
		}
	})
	b.Run("key", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, t := range texts {
				Key(t)
			}
		}
	})
}

// BenchmarkNormalizeAdversarial compares MaxInput bytes of prose with
// MaxInput bytes built to make a naive scanner quadratic: quote openers
// with no closer, path tokens that almost form a position, time-like and
// uuid-like prefixes. Similar figures mean linear time.
func BenchmarkNormalizeAdversarial(b *testing.B) {
	inputs := []struct{ name, text string }{
		{"prose", strings.Repeat("the quick brown fox jumps over the lazy dog ", MaxInput/44+1)},
		{"open-quotes", strings.Repeat(" 'a", MaxInput/3+1)},
		{"quotes-word-closers", strings.Repeat(" \"a\"b", MaxInput/5+1)},
		{"long-path", "/" + strings.Repeat("a.b/", MaxInput/4)},
		{"near-times", strings.Repeat("1:2:", MaxInput/4+1)},
		{"near-uuids", strings.Repeat("deadbeef-dead-", MaxInput/14+1)},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(MaxInput)
			for b.Loop() {
				Normalize(in.text)
			}
		})
	}
}
