package codeowners

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mainguard/mainguard/shared/errs"
)

// Bounds on what Parse reads: a CODEOWNERS file is a short hand-written
// list, and GitHub itself ignores files over 3 MB; anything near these sizes
// is a mistake or an attack, and refusing it keeps Parse's memory bounded.
const (
	MaxFileBytes = 1 << 20  // the largest file Parse reads: 1 MiB
	MaxLineBytes = 64 << 10 // the longest line Parse reads: 64 KiB
	// MaxPatternBytes bounds one pattern and MaxPathBytes the paths Owners
	// accepts (Linux's PATH_MAX): glob matching with several stars costs
	// up to len(pattern)·len(path), and these keep that under a millisecond
	// for any input while far exceeding real patterns and paths.
	MaxPatternBytes = 1024 // longer patterns are skipped as an Issue
	MaxPathBytes    = 4096 // longer paths have no owners
)

// File is a parsed CODEOWNERS file. It is immutable after Parse and safe
// for concurrent use.
type File struct {
	rules  []rule           // in file order; rule.line increases
	byLit  map[string][]int // literal segment -> indexes into rules, descending
	noLit  []int            // rules with no literal segment, descending
	issues []Issue
}

// Issue is a line Parse skipped, with the reason, so a user can be told why
// a line of their CODEOWNERS has no effect.
type Issue struct {
	Line   int    // 1-based line number
	Reason string // a sentence naming the problem
}

// rule is one pattern line, compiled.
type rule struct {
	line    int
	pattern string // as written, for messages and debugging
	owners  []string
	elems   []elem
	// must is the longest literal text the pattern holds: a path without it
	// cannot match, and strings.Contains rejects most paths far faster
	// than match would (e.g. ".js" for "*.js").
	must string
}

// Parse reads a CODEOWNERS file. It refuses a file over MaxFileBytes or a
// line over MaxLineBytes with an errs.Invalid error; a read failure is
// wrapped as errs.Invalid too, since the file comes from a client's upload.
// Lines it cannot use are skipped and listed by Issues.
func Parse(r io.Reader) (*File, error) {
	f := &File{byLit: map[string][]int{}}
	lr := &io.LimitedReader{R: r, N: MaxFileBytes + 1}
	sc := bufio.NewScanner(lr)
	// The buffer must hold the longest line plus its "\r\n".
	sc.Buffer(make([]byte, 0, 4096), MaxLineBytes+2)
	var sectionOwners []string // default owners of the current GitLab section
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if len(line) > MaxLineBytes {
			return nil, errs.E(errs.Invalid, "CODEOWNERS line %d is longer than %d bytes", n, MaxLineBytes)
		}
		if owners, ok, reason := sectionHeader(line); ok {
			if reason != "" {
				f.issues = append(f.issues, Issue{Line: n, Reason: reason})
				sectionOwners = nil
				continue
			}
			sectionOwners = owners
			continue
		}
		toks, reason := tokenize(line)
		if reason == "" && len(toks) == 0 {
			continue // blank or comment
		}
		if reason != "" {
			f.issues = append(f.issues, Issue{Line: n, Reason: reason})
			continue
		}
		var elems []elem
		if len(toks[0]) > MaxPatternBytes {
			reason = fmt.Sprintf("a pattern cannot be longer than %d bytes", MaxPatternBytes)
		} else {
			elems, reason = compile(toks[0])
		}
		if reason == "" {
			reason = checkOwners(toks[1:])
		}
		if reason != "" {
			f.issues = append(f.issues, Issue{Line: n, Reason: reason})
			continue
		}
		owners := toks[1:]
		if len(owners) == 0 {
			owners = sectionOwners
		}
		f.rules = append(f.rules, rule{line: n, pattern: toks[0], owners: slices.Clip(owners), elems: elems, must: longestLiteral(elems)})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errs.E(errs.Invalid, "CODEOWNERS line %d is longer than %d bytes", n+1, MaxLineBytes)
		}
		return nil, errs.Wrap(errs.Invalid, err, "CODEOWNERS could not be read")
	}
	if lr.N <= 0 {
		return nil, errs.E(errs.Invalid, "CODEOWNERS is larger than %d bytes", MaxFileBytes)
	}
	f.index()
	return f, nil
}

// index files every rule under one literal segment it requires, or under
// noLit when it has none, newest line first.
func (f *File) index() {
	for i := len(f.rules) - 1; i >= 0; i-- {
		if lit, ok := requiredLiteral(f.rules[i].elems); ok {
			f.byLit[lit] = append(f.byLit[lit], i)
		} else {
			f.noLit = append(f.noLit, i)
		}
	}
}

// Issues lists the lines Parse skipped, in file order.
func (f *File) Issues() []Issue { return slices.Clone(f.issues) }

// Len is the number of pattern lines in effect.
func (f *File) Len() int { return len(f.rules) }

// longestLiteral returns the longest literal fragment of a pattern.
func longestLiteral(elems []elem) string {
	best := ""
	for _, e := range elems {
		if len(e.lit) > len(best) {
			best = e.lit
		}
		for _, g := range e.glob {
			if len(g.lit) > len(best) {
				best = g.lit
			}
		}
	}
	return best
}

// Owners returns the owners of a repository-relative path: those of the
// last line whose pattern matches it, nil when no line matches or the
// matching line names no owners. The path may start with "./" or "/";
// empty and "." segments are ignored. A path over MaxPathBytes has no
// owners. The slice is the caller's to keep.
func (f *File) Owners(p string) []string {
	if f == nil || len(p) > MaxPathBytes {
		return nil
	}
	var buf [64]string
	segs := splitPath(p, buf[:0])
	if len(segs) == 0 {
		return nil
	}
	best := f.scan(f.noLit, p, segs, -1)
	for _, s := range segs {
		if list, ok := f.byLit[s]; ok {
			best = f.scan(list, p, segs, best)
		}
	}
	if best < 0 {
		return nil
	}
	return slices.Clone(f.rules[best].owners)
}

// scan returns the newest rule of list (indexes in descending order) that
// matches segs and is newer than best, else best.
func (f *File) scan(list []int, p string, segs []string, best int) int {
	for _, i := range list {
		if i <= best {
			return best
		}
		r := &f.rules[i]
		if strings.Contains(p, r.must) && match(r.elems, segs) {
			return i
		}
	}
	return best
}

// ownersLinear is Owners without the index: the reference the index is
// tested and benchmarked against.
func (f *File) ownersLinear(p string) []string {
	if len(p) > MaxPathBytes {
		return nil
	}
	var buf [64]string
	segs := splitPath(p, buf[:0])
	if len(segs) == 0 {
		return nil
	}
	for i := len(f.rules) - 1; i >= 0; i-- {
		if match(f.rules[i].elems, segs) {
			return slices.Clone(f.rules[i].owners)
		}
	}
	return nil
}

// splitPath appends the non-empty, non-"." segments of p to segs.
func splitPath(p string, segs []string) []string {
	for p != "" {
		i := strings.IndexByte(p, '/')
		var s string
		if i < 0 {
			s, p = p, ""
		} else {
			s, p = p[:i], p[i+1:]
		}
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	return segs
}

// tokenize splits a line into whitespace-separated fields, honouring "\"
// escapes (kept in the field for compile to read) and dropping a comment
// that starts at a field beginning with "#". A line whose first field is a
// comment yields no fields.
func tokenize(line string) ([]string, string) {
	var toks []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) || line[i] == '#' {
			return toks, ""
		}
		start := i
		for i < len(line) && !isSpace(line[i]) {
			if line[i] == '\\' {
				if i+1 >= len(line) {
					return nil, "a pattern cannot end with an unescaped backslash"
				}
				i++
			}
			i++
		}
		toks = append(toks, line[start:i])
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' }

// sectionHeader recognises a GitLab section header: "[Name]", "^[Name]",
// "[Name][2]", each optionally followed by default owners and a comment.
// ok reports a header; reason is set when its owners are not valid.
func sectionHeader(line string) (owners []string, ok bool, reason string) {
	s := strings.TrimLeft(line, " \t")
	s = strings.TrimPrefix(s, "^")
	if !strings.HasPrefix(s, "[") {
		return nil, false, ""
	}
	end := strings.IndexByte(s, ']')
	if end < 2 { // no "]" or an empty name
		return nil, false, ""
	}
	rest := s[end+1:]
	if strings.HasPrefix(rest, "[") { // approvals count: [2]
		j := strings.IndexByte(rest, ']')
		if j < 2 || strings.Trim(rest[1:j], "0123456789") != "" {
			return nil, false, ""
		}
		rest = rest[j+1:]
	}
	if rest != "" && !isSpace(rest[0]) {
		// "[id]/page.tsx" is a pattern with literal brackets, not a header.
		return nil, false, ""
	}
	toks, reason := tokenize(rest)
	if reason == "" {
		reason = checkOwners(toks)
	}
	if reason != "" {
		return nil, true, "section header: " + reason
	}
	return toks, true, ""
}

// checkOwners reports why a list of owner fields is not valid, or "".
func checkOwners(owners []string) string {
	for _, o := range owners {
		if !validOwner(o) {
			return "owner " + quote(o) + " is not an @user, an @org/team or an e-mail address"
		}
	}
	return ""
}

// validOwner accepts @user, @org/team (and GitLab's @group/sub/team) and
// local@domain e-mail addresses.
func validOwner(o string) bool {
	if name, ok := strings.CutPrefix(o, "@"); ok {
		if name == "" || name[0] == '/' || name[len(name)-1] == '/' || strings.Contains(name, "//") {
			return false
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
				return false
			}
		}
		return true
	}
	at := strings.IndexByte(o, '@')
	if at <= 0 || at == len(o)-1 {
		return false
	}
	domain := o[at+1:]
	return !strings.ContainsAny(domain, "@/\\") && strings.Contains(domain, ".") &&
		!strings.ContainsAny(o[:at], "/\\")
}

func quote(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}
