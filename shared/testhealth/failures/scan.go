package failures

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Placeholders.
const (
	phNum  = "<n>"
	phHex  = "<hex>"
	phAddr = "<addr>"
	phUUID = "<uuid>"
	phStr  = "<str>"
	phPos  = "<pos>"
	phTime = "<time>"
	phTmp  = "<tmp>"
)

// scanner holds the state of one pass over a prepared text.
//
// Every decision looks at the previous *output* rune (prev) and at the
// input ahead, never at input already consumed. Running the scanner on its
// own output then meets the same previous runes and makes the same
// decisions, which is what keeps Normalize idempotent. The boundary classes
// are chosen so that a placeholder is in the same class as what it
// replaced where it matters: it starts with '<' and ends with '>', which
// count as word characters for quotes (a digit would have too).
type scanner struct {
	s       string
	b       strings.Builder
	prev    rune // last rune written; ' ' after whitespace; 0 at the start
	pending bool // whitespace seen since the last rune written
	// noClose[q] is an index from which the text holds no valid closing
	// quote q: once a search fails it is never repeated, so quotes cost
	// linear time however many unmatched openers there are.
	noClose [3]int
}

func scan(s string) string {
	sc := scanner{s: s, noClose: [3]int{len(s) + 1, len(s) + 1, len(s) + 1}}
	sc.b.Grow(len(s) + len(s)/8)
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			sc.pending = true
			i += w
			continue
		}
		if n := sc.special(i, r); n > 0 {
			i = n
			continue
		}
		sc.emitRune(r)
		i += w
	}
	return sc.b.String()
}

// special tries every replacement that can start at i and returns the index
// after what it consumed, or 0 when none applies.
func (sc *scanner) special(i int, r rune) int {
	if q := quoteIndex(r); q >= 0 && !quoteWordRune(sc.lastRune()) {
		if end := sc.closeQuote(i, byte(r), q); end > 0 {
			sc.emit(phStr)
			return end
		}
	}
	if sc.tokenStart() {
		if end, ph := pathToken(sc.s, i); end > 0 {
			sc.emit(ph)
			return end
		}
	}
	if isAlnum(r) && !isAlnum(sc.lastRune()) {
		return sc.word(i)
	}
	return 0
}

// lastRune is the previous output rune, with pending whitespace as ' '.
func (sc *scanner) lastRune() rune {
	if sc.pending {
		return ' '
	}
	return sc.prev
}

// tokenStart reports whether a path token may start here: at the start,
// after whitespace, or after an opening bracket, a quote, '=' or ','.
func (sc *scanner) tokenStart() bool {
	switch sc.lastRune() {
	case 0, ' ', '(', '[', '{', '"', '\'', '`', '=', ',':
		return true
	}
	return false
}

func (sc *scanner) emit(s string) {
	sc.flushSpace()
	sc.b.WriteString(s)
	r, _ := utf8.DecodeLastRuneInString(s)
	sc.prev = r
}

func (sc *scanner) emitRune(r rune) {
	sc.flushSpace()
	sc.b.WriteRune(r)
	sc.prev = r
}

// flushSpace writes one space for a run of whitespace between two tokens;
// leading and trailing whitespace is dropped.
func (sc *scanner) flushSpace() {
	if sc.pending && sc.b.Len() > 0 {
		sc.b.WriteByte(' ')
	}
	sc.pending = false
}

func quoteIndex(r rune) int {
	switch r {
	case '\'':
		return 0
	case '"':
		return 1
	case '`':
		return 2
	}
	return -1
}

// quoteWordRune reports whether r, next to a quote character, makes it
// part of a word (don't, O'Brien, x'1') rather than a quote.
func quoteWordRune(r rune) bool {
	return r == '_' || r == '<' || r == '>' || isAlnum(r)
}

// closeQuote finds the closing quote for an opening quote q at i: the next
// unescaped q that is not followed by a word rune. It returns the index
// after it, or 0. Quoted strings may span lines (whitespace folding would
// otherwise join the lines of an unmatched pair on the next pass).
func (sc *scanner) closeQuote(i int, q byte, qi int) int {
	s := sc.s
	if i+1 >= sc.noClose[qi] {
		return 0
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++ // skip the escaped byte; a multi-byte rune is never q
		case q:
			next, _ := utf8.DecodeRuneInString(s[j+1:])
			if j+1 < len(s) && quoteWordRune(next) {
				continue
			}
			return j + 1
		}
	}
	sc.noClose[qi] = i + 1
	return 0
}

func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// word handles an alphanumeric run starting at a word boundary: uuids,
// timestamps, times, 0x numbers, hex runs, numbers, and words with long
// digit runs inside. It always consumes at least one rune.
func (sc *scanner) word(i int) int {
	s := sc.s
	if end := uuidAt(s, i); end > 0 {
		sc.emit(phUUID)
		return end
	}
	if end := timestampAt(s, i); end > 0 {
		sc.emit(phTime)
		return end
	}
	if end := timeAt(s, i); end > 0 {
		sc.emit(phTime)
		return end
	}
	if s[i] == '0' && i+2 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') && isHex(s[i+2]) {
		j := i + 2
		for j < len(s) && isHex(s[j]) {
			j++
		}
		if j-(i+2) >= 8 {
			sc.emit(phAddr)
		} else {
			sc.emit(phHex)
		}
		return j
	}
	end := i
	for end < len(s) {
		r, w := utf8.DecodeRuneInString(s[end:])
		if !isAlnum(r) {
			break
		}
		end += w
	}
	if hexRun(s[i:end]) {
		sc.emit(phHex)
		return end
	}
	if isDigit(s[i]) {
		sc.emit(phNum)
		return numberEnd(s, i)
	}
	if end2 := lineNumberAt(s, i, end); end2 > 0 {
		sc.emit(phPos)
		return end2
	}
	// A word. A digit run of 3 or more inside it ends it and becomes <n>;
	// what follows is then scanned as a new word, and what precedes is
	// judged as a word of its own (it may be a hex run), exactly as the
	// next pass will see them once the placeholder separates them.
	k := i
	for k < end {
		if isDigit(s[k]) {
			d := digitsEnd(s, k)
			if d-k >= 3 {
				break
			}
			k = d
			continue
		}
		_, w := utf8.DecodeRuneInString(s[k:])
		k += w
	}
	if k == end {
		sc.emit(s[i:end])
		return end
	}
	if hexRun(s[i:k]) {
		sc.emit(phHex)
	} else {
		sc.emit(s[i:k])
	}
	sc.emit(phNum)
	return digitsEnd(s, k)
}

// hexRun reports an ASCII run of 7 or more hex digits with at least one
// digit and one letter: a commit sha or an object id, never an English
// word (which has no digit) or a plain number.
func hexRun(w string) bool {
	if len(w) < 7 {
		return false
	}
	digit, letter := false, false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case isDigit(c):
			digit = true
		case isHex(c):
			letter = true
		default:
			return false
		}
	}
	return digit && letter
}

// numberEnd returns the end of a number starting with a digit at i:
// digits, an optional fraction, an optional exponent.
func numberEnd(s string, i int) int {
	j := digitsEnd(s, i)
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		j = digitsEnd(s, j+1)
	}
	if j+1 < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			j = digitsEnd(s, k)
		}
	}
	return j
}

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// fixedDigits reports whether s[i:i+n] are n digits.
func fixedDigits(s string, i, n int) bool {
	if i+n > len(s) {
		return false
	}
	for k := i; k < i+n; k++ {
		if !isDigit(s[k]) {
			return false
		}
	}
	return true
}

// alnumAt reports whether an alphanumeric rune starts at i.
func alnumAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isAlnum(r)
}

// uuidAt matches 8-4-4-4-12 hex digits at i, not followed by an
// alphanumeric rune, and returns the end or 0.
func uuidAt(s string, i int) int {
	j := i
	for g, n := range [5]int{8, 4, 4, 4, 12} {
		if g > 0 {
			if j >= len(s) || s[j] != '-' {
				return 0
			}
			j++
		}
		for k := 0; k < n; k++ {
			if j >= len(s) || !isHex(s[j]) {
				return 0
			}
			j++
		}
	}
	if alnumAt(s, j) {
		return 0
	}
	return j
}

// timestampAt matches a date YYYY-MM-DD at i, optionally followed by a
// time ('T' or one space, HH:MM, optional :SS and fraction) and a zone
// ('Z' or ±HH[:]MM), not followed by an alphanumeric rune.
func timestampAt(s string, i int) int {
	if !(fixedDigits(s, i, 4) && i+10 <= len(s) && s[i+4] == '-' && fixedDigits(s, i+5, 2) &&
		s[i+7] == '-' && fixedDigits(s, i+8, 2)) {
		return 0
	}
	j := i + 10
	if j < len(s) && (s[j] == 'T' || s[j] == 't' || s[j] == ' ') {
		if end := clockAt(s, j+1, 2); end > 0 {
			j = end
			j = zoneEnd(s, j)
		}
	}
	if alnumAt(s, j) {
		return 0
	}
	return j
}

// timeAt matches a time of day at i: H:MM or HH:MM, optional :SS, optional
// fraction, optional 'Z', not followed by an alphanumeric rune.
func timeAt(s string, i int) int {
	var end int
	if end = clockAt(s, i, 2); end == 0 {
		end = clockAt(s, i, 1)
	}
	if end == 0 {
		return 0
	}
	if end < len(s) && s[end] == 'Z' {
		end++
	}
	if alnumAt(s, end) {
		return 0
	}
	return end
}

// clockAt matches hour digits (hourDigits of them), ":MM", optional ":SS"
// and optional ".fraction" at i, returning the end or 0.
func clockAt(s string, i, hourDigits int) int {
	if !fixedDigits(s, i, hourDigits) {
		return 0
	}
	j := i + hourDigits
	if j >= len(s) || s[j] != ':' || !fixedDigits(s, j+1, 2) {
		return 0
	}
	j += 3
	if j < len(s) && s[j] == ':' && fixedDigits(s, j+1, 2) {
		j += 3
	}
	if j+1 < len(s) && (s[j] == '.' || s[j] == ',') && isDigit(s[j+1]) {
		j = digitsEnd(s, j+1)
	}
	if isDigit(byteAt(s, j)) {
		return 0 // 12:345 is no time
	}
	return j
}

func zoneEnd(s string, j int) int {
	switch {
	case j < len(s) && (s[j] == 'Z' || s[j] == 'z'):
		return j + 1
	case j < len(s) && (s[j] == '+' || s[j] == '-') && fixedDigits(s, j+1, 2):
		k := j + 3
		if k < len(s) && s[k] == ':' {
			k++
		}
		if fixedDigits(s, k, 2) {
			return k + 2
		}
	}
	return j
}

func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// lineNumberAt matches "line 3" (any case, spaces or tabs between) for a
// word s[i:wordEnd] that is "line", returning the end or 0.
func lineNumberAt(s string, i, wordEnd int) int {
	if wordEnd-i != 4 || !strings.EqualFold(s[i:wordEnd], "line") {
		return 0
	}
	j := wordEnd
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j == wordEnd || !isDigit(byteAt(s, j)) {
		return 0
	}
	j = digitsEnd(s, j)
	if alnumAt(s, j) {
		return 0
	}
	return j
}

// tmpRoots are path prefixes of temporary directories: a failure that
// names a file under one names a different file on every run.
var tmpRoots = []string{"/tmp/", "/var/folders/", "/private/var/folders/", "/private/tmp/", "/var/tmp/", "/dev/shm/"}

// tmpInside are markers of a temporary directory inside a path: Windows'
// %TEMP% and GitHub Actions' runner temp.
var tmpInside = []string{`\appdata\local\temp\`, `/appdata/local/temp/`, `/_temp/`, `\_temp\`}

// pathToken matches a path-like token at i. With an extension and a
// ":line" (":line:col") after it, it is a position; under a temporary
// directory it is a temporary path; otherwise nothing (0).
func pathToken(s string, i int) (int, string) {
	j := i
	if j+2 < len(s) && isLetterByte(s[j]) && s[j+1] == ':' && (s[j+2] == '\\' || s[j+2] == '/') {
		j += 3 // a Windows drive
	}
	lastSep, lastDot := -1, -1
	for j < len(s) {
		c := s[j]
		switch {
		case c == '/' || c == '\\':
			lastSep = j
		case c == '.':
			lastDot = j
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(s[j:])
			if !isAlnum(r) {
				goto done
			}
			j += w
			continue
		case isAlnum(rune(c)) || strings.IndexByte("_-~@+$%", c) >= 0:
		default:
			goto done
		}
		j++
	}
done:
	if j == i {
		return 0, ""
	}
	if lastDot > lastSep && lastDot+1 < j && isLetterByte(s[lastDot+1]) &&
		j+1 < len(s) && s[j] == ':' && isDigit(s[j+1]) {
		end := digitsEnd(s, j+1)
		if end+1 < len(s) && s[end] == ':' && isDigit(s[end+1]) {
			end = digitsEnd(s, end+1)
		}
		return end, phPos
	}
	tok := s[i:j]
	for _, root := range tmpRoots {
		if strings.HasPrefix(tok, root) && len(tok) > len(root) {
			return j, phTmp
		}
	}
	// Every marker ends in "temp" before its last separator; checking for
	// "emp"/"EMP" first spares lowering (and copying) every other token.
	if len(tok) > 6 && (strings.Contains(tok, "emp") || strings.Contains(tok, "EMP")) {
		lower := strings.ToLower(tok)
		for _, mark := range tmpInside {
			if strings.Contains(lower, mark) {
				return j, phTmp
			}
		}
	}
	return 0, ""
}

func isLetterByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
