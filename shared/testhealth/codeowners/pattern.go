package codeowners

import (
	"strings"
	"unicode/utf8"
)

// elemKind is what one element of a compiled pattern matches.
type elemKind uint8

const (
	kLit   elemKind = iota // exactly the segment text
	kGlob                  // one segment, by a glob with * and ?
	kAny                   // any one segment (a lone "*")
	kDStar                 // zero or more segments ("**")
)

// elem is one element of a compiled pattern; a pattern matches a path when
// its elements match the path's segments in order.
type elem struct {
	kind elemKind
	lit  string  // kLit: unescaped text
	glob []gpart // kGlob
}

// gpart is one part of a glob segment: a literal run, "*" or "?".
type gpart struct {
	star, qmark bool
	lit         string
}

// compile turns a pattern as written (escapes included) into elements, or
// returns why GitHub would reject it.
func compile(p string) ([]elem, string) {
	switch {
	case strings.HasPrefix(p, "!"):
		return nil, "negated patterns (!) are not supported in CODEOWNERS"
	case strings.Contains(p, "***"):
		return nil, "a pattern cannot contain three consecutive asterisks"
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && escapedAt(p, i) {
			return nil, "a slash cannot be escaped in a pattern"
		}
	}
	anchored := strings.HasPrefix(p, "/")
	p = strings.TrimLeft(p, "/")
	dirOnly := strings.HasSuffix(p, "/")
	p = strings.TrimRight(p, "/")
	if p == "" {
		// "/" alone names the root, which is no file: a line that matches
		// nothing, as GitHub treats it.
		return []elem{}, ""
	}
	var parts []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" { // "a//b" reads as "a/b"
			parts = append(parts, s)
		}
	}
	var elems []elem
	if !anchored && len(parts) == 1 && parts[0] != "**" {
		elems = append(elems, elem{kind: kDStar}) // matches at any depth
	}
	for _, s := range parts {
		elems = append(elems, compileSegment(s))
	}
	last := elems[len(elems)-1].kind
	switch {
	case dirOnly || last == kDStar && len(parts) > 0 && parts[len(parts)-1] == "**":
		// "dir/" and "dir/**" match what is under dir, never dir itself:
		// at least one more segment, then any number.
		if last == kDStar {
			elems = elems[:len(elems)-1]
		}
		elems = append(elems, elem{kind: kAny}, elem{kind: kDStar})
	case last == kLit || last == kGlob:
		// A name also owns everything below a directory of that name.
		elems = append(elems, elem{kind: kDStar})
	}
	// A lone "*" last matches one level only (GitHub's "docs/*" example).
	return elems, ""
}

// escapedAt reports whether the byte at i is escaped by an odd run of
// backslashes before it.
func escapedAt(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// compileSegment compiles one "/"-free segment of a pattern.
func compileSegment(s string) elem {
	switch s {
	case "**":
		return elem{kind: kDStar}
	case "*":
		return elem{kind: kAny}
	}
	var parts []gpart
	var lit strings.Builder
	wild := false
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, gpart{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			// tokenize and compile guarantee a following byte that is not
			// a slash; the guard keeps a stray input from panicking.
			if i+1 < len(s) {
				i++
			}
			lit.WriteByte(s[i])
		case '*':
			flush()
			wild = true
			if n := len(parts); n > 0 && parts[n-1].star {
				continue // "**" inside a segment is one "*"
			}
			parts = append(parts, gpart{star: true})
		case '?':
			flush()
			wild = true
			parts = append(parts, gpart{qmark: true})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	if !wild {
		text := ""
		if len(parts) == 1 {
			text = parts[0].lit
		}
		return elem{kind: kLit, lit: text}
	}
	return elem{kind: kGlob, glob: parts}
}

// requiredLiteral returns a literal segment every path the pattern matches
// must contain, for indexing.
func requiredLiteral(elems []elem) (string, bool) {
	for _, e := range elems {
		if e.kind == kLit {
			return e.lit, true
		}
	}
	return "", false
}

// match reports whether the elements match the path segments. kDStar works
// like "*" over a string, one segment per character, so the classic
// backtrack-to-the-last-star loop applies: O(len(elems)·len(segs)) at worst,
// never exponential however many "**" a pattern holds.
func match(elems []elem, segs []string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(segs) {
		if pi < len(elems) {
			e := &elems[pi]
			if e.kind == kDStar {
				starP, starS = pi, si
				pi++
				continue
			}
			if matchSegment(e, segs[si]) {
				pi++
				si++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		pi, si = starP+1, starS
	}
	for pi < len(elems) && elems[pi].kind == kDStar {
		pi++
	}
	return pi == len(elems)
}

func matchSegment(e *elem, s string) bool {
	switch e.kind {
	case kLit:
		return e.lit == s
	case kAny:
		return true
	default:
		return matchGlob(e.glob, s)
	}
}

// matchGlob matches one segment against glob parts: the same
// last-star backtracking, so linear in practice and quadratic at worst.
// "?" and a star's advance step over whole runes.
func matchGlob(parts []gpart, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(parts) {
			g := &parts[pi]
			switch {
			case g.star:
				starP, starS = pi, si
				pi++
				continue
			case g.qmark:
				_, w := utf8.DecodeRuneInString(s[si:])
				pi++
				si += w
				continue
			case strings.HasPrefix(s[si:], g.lit):
				pi++
				si += len(g.lit)
				continue
			}
		}
		if starP < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		pi, si = starP+1, starS
	}
	for pi < len(parts) && parts[pi].star {
		pi++
	}
	return pi == len(parts)
}
