package junit

import (
	"bytes"
	"fmt"
	"io"
)

// boundReader sits between the raw report and xml.Decoder and keeps every
// token the decoder will build small. encoding/xml buffers a whole text run,
// CDATA section, comment or attribute value before returning it, so a single
// 2 GiB <system-out> would cost 2 GiB of memory no matter how carefully the
// tokens are consumed. The reader therefore knows just enough XML lexing to
// find those runs and drops the bytes of a run past limit, and it refuses
// tags, processing instructions and declarations that grow past a fixed cap
// (those cannot be cut without changing what the document means).
//
// A cut never breaks a well-formed document: it is made only between
// characters (never inside a UTF-8 sequence or an &entity; reference) and
// the terminator of a CDATA section or comment is always written out, even
// when some of its bytes fell in the dropped part.
type boundReader struct {
	src   io.Reader
	limit int // bytes of one text-like run that are kept
	// tagCap bounds one start or end tag with all its attributes, and one
	// processing instruction; declCap bounds a <!...> declaration.
	tagCap  int
	declCap int
	err     error // sticky error of src or of a cap

	in   []byte // raw bytes read from src
	out  []byte // filtered bytes not yet handed out
	pend []byte // the unread part of out

	state  lexState
	run    int  // bytes kept in the current text-like run
	drop   bool // the rest of the current run is being dropped
	refLen int  // >0 while inside an &...; reference (bytes seen so far)
	seq    int  // CDATA: raw ']' in a row; comment: raw '-' in a row; PI: last byte was '?'
	tail   int  // CDATA/comment: ']' or '-' in a row at the end of the kept bytes
	bang   int  // bytes seen after "<!" while telling comment, CDATA and declaration apart
	quote  byte // quote character of the current attribute value
	markup int  // bytes kept of the current tag, PI or declaration

	// Line bookkeeping so that errors can name the line of the original
	// report even though newlines inside dropped text never reach the
	// decoder.
	outLines int        // newlines handed to the decoder
	marks    []lineMark // one per dropped region that held newlines
	markOpen bool       // the current dropped region already has a mark
}

// lineMark records that dropped newlines (cumulative) disappeared after the
// decoder's line afterLine+1 began.
type lineMark struct {
	afterLine int
	cum       int
}

type lexState uint8

const (
	stText    lexState = iota // character data between tags
	stLT                      // just after '<'
	stBang                    // after "<!": comment, CDATA or declaration?
	stComment                 // inside <!-- -->
	stCDATA                   // inside <![CDATA[ ]]>
	stDecl                    // inside <!DOCTYPE ...> or another declaration; never left
	stPI                      // inside <? ?>
	stTag                     // inside a start or end tag, outside quotes
	stAttr                    // inside a quoted attribute value
)

// maxCutDelay bounds how far past limit a cut may wait for a safe place:
// the end of a reference (at most a few bytes in any valid report) or the
// start of a UTF-8 sequence (at most 3 bytes; longer runs of 0x80-0xBF
// happen only in ISO-8859-1 text where any place is safe).
const maxCutDelay = 1024

// boundError is a cap the report broke; Parse turns it into a sentence
// with the line number.
type boundError struct {
	what string
	cap  int
}

func (e *boundError) Error() string { return fmt.Sprintf("%s is longer than %d bytes", e.what, e.cap) }

func newBoundReader(src io.Reader, limit int) *boundReader {
	return &boundReader{
		src:     src,
		limit:   limit,
		tagCap:  4*limit + 64<<10,
		declCap: 64 << 10,
	}
}

// Read implements io.Reader for the decoder.
func (b *boundReader) Read(p []byte) (int, error) {
	for {
		if len(b.pend) > 0 {
			n := copy(p, b.pend)
			b.pend = b.pend[n:]
			return n, nil
		}
		if b.err != nil {
			return 0, b.err
		}
		if cap(b.in) < len(p) {
			b.in = make([]byte, len(p))
		}
		n, err := b.src.Read(b.in[:len(p)])
		b.out = b.filter(b.in[:n], b.out[:0])
		b.pend = b.out
		if err != nil && b.err == nil {
			b.err = err
		}
		if n == 0 && err == nil {
			// The source made no progress; report that instead of
			// spinning, as bufio does.
			return 0, nil
		}
	}
}

// realLine turns a line number counted by the decoder into the line of the
// original report, adding back the newlines of dropped text before it.
func (b *boundReader) realLine(line int) int {
	add := 0
	for _, m := range b.marks {
		if line < m.afterLine+1 {
			break
		}
		add = m.cum
	}
	return line + add
}

func (b *boundReader) resetRun() {
	b.run, b.drop, b.refLen, b.seq, b.tail, b.markOpen = 0, false, 0, 0, 0, false
}

func (b *boundReader) dropNewlines(n int) {
	if n == 0 {
		return
	}
	cum := n
	if len(b.marks) > 0 {
		cum += b.marks[len(b.marks)-1].cum
	}
	if b.markOpen {
		b.marks[len(b.marks)-1].cum = cum
		return
	}
	b.marks = append(b.marks, lineMark{afterLine: b.outLines, cum: cum})
	b.markOpen = true
}

// keep decides for one byte of a text-like run whether it is kept (true)
// or dropped, and updates the run state. refs says whether '&' starts a
// reference here (text and attribute values, not CDATA or comments).
func (b *boundReader) keep(c byte, refs bool) bool {
	if !b.drop {
		safe := b.refLen == 0 && c&0xC0 != 0x80
		if b.run < b.limit || (!safe && b.run < b.limit+maxCutDelay) {
			b.run++
			switch {
			case b.refLen > 0:
				if c == ';' {
					b.refLen = 0
				} else {
					b.refLen++
				}
			case refs && c == '&':
				b.refLen = 1
			}
			if c == '\n' {
				b.outLines++
			}
			return true
		}
		b.drop = true
	}
	if c == '\n' {
		b.dropNewlines(1)
	}
	return false
}

// keepSpan appends a span of a text or attribute run that stays below the
// limit, so no byte of it needs a decision.
func (b *boundReader) keepSpan(out, seg []byte) []byte {
	out = append(out, seg...)
	b.run += len(seg)
	b.outLines += bytes.Count(seg, []byte{'\n'})
	if k := bytes.LastIndexByte(seg, '&'); k >= 0 {
		if bytes.IndexByte(seg[k:], ';') < 0 {
			b.refLen = len(seg) - k
		} else {
			b.refLen = 0
		}
	} else if b.refLen > 0 {
		if bytes.IndexByte(seg, ';') >= 0 {
			b.refLen = 0
		} else {
			b.refLen += len(seg)
		}
	}
	return out
}

// scanRun handles text or an attribute value up to (not including) term.
// It returns the new position and whether term was reached.
func (b *boundReader) scanRun(in []byte, i int, out []byte, term byte) (int, []byte, bool) {
	for i < len(in) {
		j := bytes.IndexByte(in[i:], term)
		end := len(in)
		if j >= 0 {
			end = i + j
		}
		if b.drop {
			b.dropNewlines(bytes.Count(in[i:end], []byte{'\n'}))
			return end, out, j >= 0
		}
		if room := b.limit - b.run; room > 0 && end > i {
			seg := in[i:end]
			if len(seg) > room {
				seg = seg[:room]
			}
			out = b.keepSpan(out, seg)
			if b.state == stAttr {
				b.markup += len(seg)
			}
			i += len(seg)
			continue
		}
		if i == end {
			return i, out, true
		}
		// At the limit: decide byte by byte until the cut is made.
		if c := in[i]; b.keep(c, true) {
			out = append(out, c)
			if b.state == stAttr {
				b.markup++
			}
		}
		i++
	}
	return i, out, false
}

// filter lexes in and appends what the decoder should see to out.
func (b *boundReader) filter(in []byte, out []byte) []byte {
	for i := 0; i < len(in) && b.err == nil; {
		switch b.state {
		case stText:
			i, out = b.text(in, i, out)
		case stTag:
			i, out = b.tag(in, i, out)
		case stAttr:
			i, out = b.attr(in, i, out)
		case stLT:
			i, out = b.afterLT(in, i, out)
		case stBang:
			out = b.bangByte(in[i], out)
			i++
		case stDecl:
			out = b.declByte(in[i], out)
			i++
		case stPI:
			out = b.piByte(in[i], out)
			i++
		case stCDATA, stComment:
			out = b.closableByte(in[i], out)
			i++
		}
	}
	return out
}

// text keeps character data from in[i:] up to the next '<', which starts
// a tag.
func (b *boundReader) text(in []byte, i int, out []byte) (int, []byte) {
	i, out, found := b.scanRun(in, i, out, '<')
	if found {
		out = append(out, '<')
		i++
		b.resetRun()
		b.state = stLT
	}
	return i, out
}

// tag keeps names and '=' up to the next quote or '>', in one span.
func (b *boundReader) tag(in []byte, i int, out []byte) (int, []byte) {
	j := indexTagStop(in[i:])
	end := len(in)
	if j >= 0 {
		end = i + j
	}
	seg := in[i:end]
	out = append(out, seg...)
	b.markup += len(seg)
	b.outLines += bytes.Count(seg, []byte{'\n'})
	i = end
	if j >= 0 {
		c := in[i]
		out = append(out, c)
		b.markup++
		i++
		b.resetRun()
		if c == '>' {
			b.state = stText
		} else {
			b.quote = c
			b.state = stAttr
		}
	}
	if b.markup > b.tagCap {
		b.err = &boundError{"an element tag", b.tagCap}
	}
	return i, out
}

// attr keeps an attribute value up to its closing quote. Kept value bytes
// count towards markup; tag enforces tagCap (one value alone, at most
// limit bytes, cannot exceed it).
func (b *boundReader) attr(in []byte, i int, out []byte) (int, []byte) {
	i, out, found := b.scanRun(in, i, out, b.quote)
	if found {
		out = append(out, b.quote)
		i++
		b.markup++
		b.state = stTag
	}
	return i, out
}

// afterLT tells from the byte after '<' a "<!", a "<?" or a tag; a tag's
// first byte is left for tag to see.
func (b *boundReader) afterLT(in []byte, i int, out []byte) (int, []byte) {
	switch c := in[i]; c {
	case '!':
		out = append(out, c)
		b.state, b.bang, b.markup = stBang, 0, 2
	case '?':
		out = append(out, c)
		b.state, b.seq, b.markup = stPI, 0, 2
	default:
		b.state, b.markup = stTag, 1
		return i, out
	}
	return i + 1, out
}

// markupByte keeps c, a byte of markup that cannot be cut, counting it
// towards its cap and the lines handed out.
func (b *boundReader) markupByte(c byte, out []byte) []byte {
	b.markup++
	if c == '\n' {
		b.outLines++
	}
	return append(out, c)
}

// bangByte keeps a byte after "<!" while telling a comment, a CDATA
// section and a declaration apart.
func (b *boundReader) bangByte(c byte, out []byte) []byte {
	out = b.markupByte(c, out)
	b.bang++
	switch {
	case b.bang == 1 && c == '-', b.bang == 1 && c == '[':
		b.quote = c // remembers which of the two this may become
	case b.quote == '-' && b.bang == 2 && c == '-':
		b.resetRun()
		b.state = stComment
	case b.quote == '[' && b.bang <= 7 && c == "[CDATA["[b.bang-1]:
		if b.bang == 7 {
			b.resetRun()
			b.state = stCDATA
		}
	default:
		// A declaration (<!DOCTYPE ...>) or malformed markup; the
		// decoder reports either, and Parse stops there.
		b.state = stDecl
	}
	return out
}

// declByte keeps a byte of a declaration, up to declCap.
func (b *boundReader) declByte(c byte, out []byte) []byte {
	out = b.markupByte(c, out)
	if b.markup > b.declCap {
		b.err = &boundError{"a <!...> declaration", b.declCap}
	}
	return out
}

// piByte keeps a byte of a processing instruction, up to tagCap, and sees
// its "?>".
func (b *boundReader) piByte(c byte, out []byte) []byte {
	out = b.markupByte(c, out)
	if b.seq == 1 && c == '>' {
		b.resetRun()
		b.state = stText
		return out
	}
	b.seq = 0
	if c == '?' {
		b.seq = 1
	}
	if b.markup > b.tagCap {
		b.err = &boundError{"a processing instruction", b.tagCap}
	}
	return out
}

// closableByte keeps a byte of a CDATA section or a comment while the run
// is within limit, and writes out the whole terminator ("]]>", "-->") even
// when some of its bytes fell in the dropped part.
func (b *boundReader) closableByte(c byte, out []byte) []byte {
	mark := byte(']')
	if b.state == stComment {
		mark = '-'
	}
	if b.seq >= 2 && c == '>' {
		if b.drop {
			// Write the part of the terminator that was dropped.
			for k := min(b.tail, 2); k < 2; k++ {
				out = append(out, mark)
			}
		}
		out = append(out, '>')
		b.resetRun()
		b.state = stText
		return out
	}
	if c == mark {
		b.seq++
	} else {
		b.seq = 0
	}
	if b.keep(c, false) {
		out = append(out, c)
		if c == mark {
			b.tail++
		} else {
			b.tail = 0
		}
	}
	return out
}

// indexTagStop returns the index of the first quote (of either kind) or
// '>' in s, or -1.
func indexTagStop(s []byte) int {
	for i, c := range s {
		if c == '"' || c == '\'' || c == '>' {
			return i
		}
	}
	return -1
}
