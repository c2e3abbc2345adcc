package codeowners

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"testing"
)

// generate builds a CODEOWNERS file of n pattern lines in the shapes real
// files use (a default, root directories, nested directories, extensions,
// "**" patterns, names anywhere) and m repository paths, some under the
// named directories and some not, from a fixed seed.
func generate(n, m int, seed uint64) (string, []string) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	words := make([]string, 60)
	for i := range words {
		words[i] = fmt.Sprintf("w%02d", i)
	}
	exts := []string{"go", "js", "ts", "py", "md", "java", "rs", "tsx"}
	pick := func() string { return words[r.IntN(len(words))] }
	var b strings.Builder
	b.WriteString("# generated\n* @org/everyone\n")
	for i := 1; i < n; i++ {
		owner := fmt.Sprintf("@org/team-%d", r.IntN(50))
		switch r.IntN(10) {
		case 0:
			fmt.Fprintf(&b, "*.%s %s\n", exts[r.IntN(len(exts))], owner)
		case 1:
			fmt.Fprintf(&b, "**/%s/ %s\n", pick(), owner)
		case 2:
			fmt.Fprintf(&b, "/%s/**/%s/*.%s %s\n", pick(), pick(), exts[r.IntN(len(exts))], owner)
		case 3:
			fmt.Fprintf(&b, "%s/ %s\n", pick(), owner)
		case 4:
			fmt.Fprintf(&b, "/%s/%s/*\n", pick(), pick()) // no owners
		default:
			fmt.Fprintf(&b, "/%s/%s/ %s user%d@example.com\n", pick(), pick(), owner, i)
		}
	}
	paths := make([]string, m)
	for i := range paths {
		depth := 1 + r.IntN(6)
		segs := make([]string, depth)
		for j := range segs {
			segs[j] = pick()
		}
		segs[depth-1] = fmt.Sprintf("file%d.%s", r.IntN(100), exts[r.IntN(len(exts))])
		paths[i] = strings.Join(segs, "/")
	}
	return b.String(), paths
}

// BenchmarkOwners matches 100,000 paths against a 500-line file. One op is
// one path. "indexed" is Owners; "linear" is the same compiled patterns
// scanned newest-first without the index; "path.Match" is the naive
// baseline of path.Match over every line's pattern (which does not even
// implement CODEOWNERS semantics, so it only bounds the cost from below for
// an unindexed approach).
func BenchmarkOwners(b *testing.B) {
	text, paths := generate(500, 100_000, 1)
	f, err := Parse(strings.NewReader(text))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("indexed", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			f.Owners(paths[i%len(paths)])
		}
	})
	b.Run("linear", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			f.ownersLinear(paths[i%len(paths)])
		}
	})
	b.Run("path.Match", func(b *testing.B) {
		type line struct {
			pattern string
			owners  []string
		}
		var lines []line
		for l := range strings.Lines(text) {
			fields := strings.Fields(l)
			if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			lines = append(lines, line{strings.TrimPrefix(fields[0], "/"), fields[1:]})
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			p := paths[i%len(paths)]
			for j := len(lines) - 1; j >= 0; j-- {
				if ok, _ := path.Match(lines[j].pattern, p); ok {
					break
				}
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(strings.NewReader(text)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOwnersWorstCase is the costliest input the bounds allow: a
// maximal pattern of stars against a maximal path that almost matches.
// "typical" is a short path against the same file, for scale.
func BenchmarkOwnersWorstCase(b *testing.B) {
	pattern := strings.Repeat("*a", MaxPatternBytes/2-1) + "*b"
	f, err := Parse(strings.NewReader(pattern + " @o\n"))
	if err != nil || f.Len() != 1 {
		b.Fatalf("Parse: %v, %d rules", err, f.Len())
	}
	long := "b" + strings.Repeat("a", MaxPathBytes-1) // holds "b": passes the prefilter
	short := "src/app/aaaa.txt"
	for _, bc := range []struct{ name, path string }{{"worst", long}, {"typical", short}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if f.Owners(bc.path) != nil {
					b.Fatal("matched")
				}
			}
		})
	}
}
