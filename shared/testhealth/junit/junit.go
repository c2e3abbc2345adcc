package junit

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Status of one run. Errored is kept apart from Failed because a JUnit
// <error> usually means the test could not run to its assertion (a crash,
// a setup failure, a build error), which the service shows differently,
// although both count as failures when rates are computed.
type Status string

// The four outcomes a run can have.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Errored Status = "errored"
	Skipped Status = "skipped"
)

// Run is one execution of one test case as read from a report. A
// <testcase> element usually yields one Run; Surefire's <flakyFailure>,
// <flakyError>, <rerunFailure> and <rerunError> add one Run each, because
// the service measures flakiness over executions, not over elements.
type Run struct {
	// Name is the testcase name attribute, or its classname when the name
	// is missing. Classname is the classname attribute as written.
	Name, Classname string
	// Parent is the name of the innermost <testsuite> around the case, ""
	// when the case is not inside one.
	Parent string
	// File is the case's file attribute, else that of the nearest
	// enclosing <testsuite> that has one; %XX escapes are decoded and a
	// leading "./" is removed so that the same file reads the same from
	// every generator.
	File string
	// ID is the case's id attribute (xcresult writes stable UUIDv5 ids).
	ID     string
	Status Status
	// Message is the failure text: the message attribute of the <failure>
	// or <error>, else the first non-empty line of its body, trimmed, and
	// cut to 4096 bytes of valid UTF-8. It is "" for passed and skipped
	// runs.
	Message string
	// Duration is the time attribute; 0 when missing, unreadable or
	// negative.
	Duration time.Duration
	// Timestamp is when the run started as far as the report says (the
	// case's timestamp, else its suite's); zero when unknown.
	Timestamp time.Time
	// Attempt is 0 for the first run of an identity (File, Classname,
	// Parent, Name, ID) in this report, 1 for the next one (a retry), and
	// so on.
	Attempt int
}

// Summary counts what a report held, so that callers can show the user
// what was ingested and spot reports that held nothing useful.
type Summary struct {
	// Runs = Passed + Failed + Errored + Skipped.
	Runs, Passed, Failed, Errored, Skipped int
	// Retries counts runs with Attempt > 0.
	Retries int
	// Cases counts distinct (File, Classname, Parent, Name, ID) identities.
	Cases int
	// SuiteErrors counts <error> and <failure> elements placed directly in
	// a <testsuite> (or <testsuites>): a suite that failed as a whole, for
	// which no test case can be blamed, so no Run is emitted.
	SuiteErrors int
	// Unnamed counts <testcase> elements with neither name nor classname;
	// they are skipped because a run of nothing cannot be tracked.
	Unnamed int
}

// Limits bound what one report may use, so that a hostile or broken
// upload cannot exhaust the service. Zero or negative fields take the
// defaults.
type Limits struct {
	// MaxRuns is the most runs one report may yield; beyond it Parse
	// fails. Default 500,000.
	MaxRuns int
	// MaxDepth is the deepest element nesting allowed; beyond it Parse
	// fails. Default 64.
	MaxDepth int
	// MaxTextBytes is the longest character data, CDATA section, comment
	// or attribute value kept, default 1 MiB. Longer text is truncated,
	// not refused: huge <system-out> blocks are common and harmless. A
	// single tag with all its attributes may hold at most 4×MaxTextBytes +
	// 64 KiB, and a <!...> declaration at most 64 KiB.
	MaxTextBytes int
}

const (
	defaultMaxRuns      = 500_000
	defaultMaxDepth     = 64
	defaultMaxTextBytes = 1 << 20
	maxMessageBytes     = 4096
)

func (l Limits) withDefaults() Limits {
	if l.MaxRuns <= 0 {
		l.MaxRuns = defaultMaxRuns
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = defaultMaxDepth
	}
	if l.MaxTextBytes <= 0 {
		l.MaxTextBytes = defaultMaxTextBytes
	}
	// Far beyond any real need; keeps 4×MaxTextBytes and friends from
	// overflowing.
	l.MaxTextBytes = min(l.MaxTextBytes, 1<<40)
	return l
}

// Parse reads one report from r and calls fn for each run in document
// order, without holding the whole document or all runs in memory: only
// the current element stack, the current test case and a hash of each
// identity seen (for Attempt) are kept. It stops at the first error of fn,
// which it returns unchanged, or of the report, which it returns as a
// sentence fit to show the user ("junit: line 12: ..."); a truncated
// report's error also matches errors.Is(err, io.ErrUnexpectedEOF). The
// Summary counts what was read up to that point. fn may be nil to only
// count.
//
// Because runs are streamed, fn may already have seen runs of a report
// that then fails (a truncated upload is only known to be truncated at
// its end): a caller that must not ingest part of a refused report has to
// buffer the runs, or stage them, until Parse returns nil.
//
// Parse never resolves entities or fetches anything: a report with a
// <!DOCTYPE> is refused outright.
func Parse(r io.Reader, lim Limits, fn func(Run) error) (Summary, error) {
	lim = lim.withDefaults()
	p := &parser{
		lim:   lim,
		fn:    fn,
		seen:  make(map[identKey]int),
		seed1: maphash.MakeSeed(),
		seed2: maphash.MakeSeed(),
	}
	err := p.parse(r)
	p.sum.Cases = len(p.seen)
	return p.sum, err
}

type kind uint8

const (
	kOther      kind = iota
	kSuites          // <testsuites>
	kSuite           // <testsuite>
	kCase            // <testcase>
	kResult          // <failure>, <error>, Surefire's flaky*/rerun* in a case
	kStackTrace      // <stackTrace> in a result (Surefire puts flaky/rerun text there)
)

// suiteInfo is what a case inherits from the suites around it, resolved
// once per suite.
type suiteInfo struct {
	parent string // name of the innermost <testsuite>
	file   string // nearest file attribute, normalised
	ts     time.Time
}

type resultKind uint8

const (
	rFailure resultKind = iota
	rError
	rFlakyFailure
	rFlakyError
	rRerunFailure
	rRerunError
)

var resultKinds = map[string]resultKind{
	"failure":      rFailure,
	"error":        rError,
	"flakyFailure": rFlakyFailure,
	"flakyError":   rFlakyError,
	"rerunFailure": rRerunFailure,
	"rerunError":   rRerunError,
}

func (k resultKind) status() Status {
	switch k {
	case rError, rFlakyError, rRerunError:
		return Errored
	}
	return Failed
}

// caseState is the <testcase> being read.
type caseState struct {
	run      Run // identity, duration and timestamp filled at the start
	unnamed  bool
	skipped  bool // <skipped> child or a gtest/bazel/ctest skip status
	hasFail  bool
	hasError bool
	failMsg  string
	errorMsg string
}

// resultState is the <failure>/<error>/flaky/rerun element being read.
type resultState struct {
	kind  resultKind
	msg   string // from the message attribute, or the body once found
	found bool   // msg is final
	body  []byte // the current line of the body, while looking for one
	dur   time.Duration
}

type identKey [2]uint64

type parser struct {
	lim Limits
	fn  func(Run) error // its errors are returned unchanged
	sum Summary

	dec   *xml.Decoder
	bound *boundReader

	stack  []kind
	suites []suiteInfo
	cur    *caseState
	res    *resultState
	// reruns are Surefire rerun runs of the current case, written after
	// its final result, so they wait for it.
	reruns []Run

	sawRoot bool
	tokLine int // decoder line where the current token starts

	seen         map[identKey]int
	seed1, seed2 maphash.Seed
	keyBuf       []byte

	lastTS    string // cache: consecutive cases often share one timestamp
	lastTSVal time.Time

	caseBuf caseState
	resBuf  resultState
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func (p *parser) parse(r io.Reader) error {
	br := bufio.NewReader(r)
	head, err := br.Peek(3)
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return fmt.Errorf("junit: reading the report: %w", err)
		}
		return errors.New("junit: the report is empty")
	}
	switch {
	case bytes.HasPrefix(head, utf8BOM):
		br.Discard(len(utf8BOM))
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return errors.New("junit: the report is encoded in UTF-16; only UTF-8, US-ASCII and ISO-8859-1 reports are accepted")
	}

	p.bound = newBoundReader(br, p.lim.MaxTextBytes)
	p.dec = xml.NewDecoder(p.bound)
	p.dec.Strict = true
	p.dec.Entity = nil // only the five predefined entities, never a declared one
	p.dec.CharsetReader = charsetReader

	for {
		// Errors about a token name the line where it starts, not where
		// the decoder finished reading it (a DOCTYPE spans many lines).
		p.tokLine, _ = p.dec.InputPos()
		tok, err := p.dec.Token()
		if err != nil {
			if err == io.EOF {
				break
			}
			return p.decodeError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			err = p.start(t)
		case xml.EndElement:
			err = p.end()
		case xml.CharData:
			err = p.text(t)
		case xml.Directive:
			err = p.directive(t)
		}
		if err != nil {
			return err // already a sentence, or fn's own error
		}
	}
	if !p.sawRoot {
		return errors.New("junit: the report holds no XML element, so it is not a JUnit report")
	}
	return nil
}

func (p *parser) line() int {
	return p.bound.realLine(p.tokLine)
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("junit: line %d: "+format, append([]any{p.line()}, args...)...)
}

// truncatedError is returned for a report that ends inside an element.
type truncatedError struct{ line int }

func (e *truncatedError) Error() string {
	return fmt.Sprintf("junit: line %d: unexpected EOF: the report ends in the middle of an element, so it is truncated", e.line)
}

func (e *truncatedError) Unwrap() error { return io.ErrUnexpectedEOF }

// decodeError turns an error of the decoder into a sentence for the user.
func (p *parser) decodeError(err error) error {
	var syn *xml.SyntaxError
	var bnd *boundError
	var cs *charsetError
	switch {
	case errors.As(err, &syn):
		line := p.bound.realLine(syn.Line)
		if strings.HasPrefix(syn.Msg, "unexpected EOF") {
			return &truncatedError{line: line}
		}
		return fmt.Errorf("junit: line %d: the report is not well-formed XML: %s", line, syn.Msg)
	case errors.Is(err, io.ErrUnexpectedEOF):
		l, _ := p.dec.InputPos()
		return &truncatedError{line: p.bound.realLine(l)}
	case errors.As(err, &bnd):
		return p.errorf("%v, so the report is refused", bnd)
	case errors.As(err, &cs):
		return fmt.Errorf("junit: the report is encoded as %q; only UTF-8, US-ASCII and ISO-8859-1 reports are accepted", cs.label)
	case strings.HasPrefix(err.Error(), "xml: "):
		// Other decoder complaints, e.g. an unsupported XML version.
		return p.errorf("the report is not a supported XML document: %s", strings.TrimPrefix(err.Error(), "xml: "))
	}
	return fmt.Errorf("junit: reading the report: %w", err)
}

func (p *parser) directive(d xml.Directive) error {
	// Refused without looking further: a DOCTYPE can declare entities that
	// expand enormously or name files and URLs (XXE); encoding/xml would
	// not resolve them, but nothing downstream should ever see them.
	word := strings.ToUpper(firstWord(d))
	if word == "DOCTYPE" {
		return p.errorf("the report declares a DOCTYPE (document type and entities), which is not allowed; nothing in it was resolved")
	}
	return p.errorf("the report holds a <!%s ...> declaration; DOCTYPE and entity declarations are not allowed", word)
}

func firstWord(b []byte) string {
	end := 0
	for end < len(b) && end < 16 && b[end] > ' ' && b[end] != '[' {
		end++
	}
	return string(b[:end])
}

func (p *parser) top() kind {
	if len(p.stack) == 0 {
		return kOther
	}
	return p.stack[len(p.stack)-1]
}

func (p *parser) start(se xml.StartElement) error {
	if len(p.stack) >= p.lim.MaxDepth {
		return p.errorf("elements are nested more than %d deep, so the report is refused", p.lim.MaxDepth)
	}
	local := se.Name.Local
	k := kOther
	switch top := p.top(); {
	case len(p.stack) == 0:
		switch local {
		case "testsuites":
			k = kSuites
		case "testsuite":
			k = kSuite
		case "testcase":
			k = kCase
		default:
			return p.errorf("the root element is <%s>, not <testsuites> or <testsuite>, so this is not a JUnit report", cut(local, 64))
		}
		p.sawRoot = true
	case top == kCase:
		if rk, ok := resultKinds[local]; ok {
			k = kResult
			p.startResult(rk, se.Attr)
		} else if local == "skipped" {
			p.cur.skipped = true
		}
	case top == kResult:
		if local == "stackTrace" {
			k = kStackTrace
		}
	case p.cur != nil:
		// Anything deeper inside a test case (properties, nested oddities)
		// carries nothing we use.
	default:
		switch local {
		case "testsuites":
			k = kSuites
		case "testsuite":
			k = kSuite
		case "testcase":
			k = kCase
		case "error", "failure":
			if top == kSuite || top == kSuites {
				p.sum.SuiteErrors++
			}
		}
	}
	switch k {
	case kSuites, kSuite:
		p.startSuite(k, se.Attr)
	case kCase:
		p.startCase(se.Attr)
	}
	p.stack = append(p.stack, k)
	return nil
}

func (p *parser) outerSuite() suiteInfo {
	if len(p.suites) == 0 {
		return suiteInfo{}
	}
	return p.suites[len(p.suites)-1]
}

func (p *parser) startSuite(k kind, attrs []xml.Attr) {
	info := p.outerSuite()
	var name, file, ts string
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "name":
			name = a.Value
		case "file":
			file = a.Value
		case "timestamp":
			ts = a.Value
		}
	}
	if k == kSuite {
		// Parent and file come from <testsuite> only: <testsuites> names
		// the whole run ("jest tests", "Mocha Tests"), not a group.
		info.parent = p.cut(name)
		if f := normFile(file); f != "" {
			info.file = p.cut(f)
		}
	}
	if t := p.timestamp(ts); !t.IsZero() {
		info.ts = t
	}
	p.suites = append(p.suites, info)
}

func (p *parser) startCase(attrs []xml.Attr) {
	suite := p.outerSuite()
	c := &p.caseBuf
	*c = caseState{}
	var name, file, ts string
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "name":
			name = a.Value
		case "classname":
			c.run.Classname = p.cut(a.Value)
		case "file":
			file = a.Value
		case "id":
			c.run.ID = p.cut(a.Value)
		case "time":
			c.run.Duration, _ = parseSeconds(a.Value)
		case "timestamp":
			ts = a.Value
		case "status":
			// gtest writes status="notrun" for disabled tests, ctest
			// "notrun"/"disabled"; status="run" is a test that ran.
			switch strings.ToLower(strings.TrimSpace(a.Value)) {
			case "notrun", "disabled", "skipped", "ignored":
				c.skipped = true
			}
		case "result":
			// gtest: result="skipped" (GTEST_SKIP) or "suppressed".
			switch strings.ToLower(strings.TrimSpace(a.Value)) {
			case "skipped", "suppressed":
				c.skipped = true
			}
		}
	}
	if strings.TrimSpace(name) == "" {
		name = c.run.Classname
	}
	if strings.TrimSpace(name) == "" {
		c.unnamed = true
		p.sum.Unnamed++
	}
	c.run.Name = p.cut(name)
	c.run.Parent = suite.parent
	c.run.File = suite.file
	if f := normFile(file); f != "" {
		c.run.File = p.cut(f)
	}
	c.run.Timestamp = suite.ts
	if t := p.timestamp(ts); !t.IsZero() {
		c.run.Timestamp = t
	}
	p.cur = c
	p.reruns = p.reruns[:0]
}

func (p *parser) startResult(k resultKind, attrs []xml.Attr) {
	r := &p.resBuf
	body := r.body[:0]
	*r = resultState{kind: k, body: body}
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "message":
			if m := strings.TrimSpace(a.Value); m != "" {
				r.msg, r.found = cut(m, maxMessageBytes), true
			}
		case "time":
			r.dur, _ = parseSeconds(a.Value)
		}
	}
	p.res = r
}

func (p *parser) text(cd xml.CharData) error {
	if len(p.stack) == 0 {
		if len(bytes.TrimSpace(cd)) > 0 {
			return p.errorf("the report holds text outside any element, so it is not an XML report")
		}
		return nil
	}
	top := p.top()
	if (top != kResult && top != kStackTrace) || p.res == nil || p.res.found {
		return nil
	}
	p.res.addBody(cd)
	return nil
}

// lineRoom is how much of a line's text is gathered before it is taken as
// the message: the message limit plus some slack for trailing spaces.
const lineRoom = maxMessageBytes + 64

// addBody looks for the first non-empty line of a result's body, keeping
// only the current line (at most lineRoom bytes): a 100 MB stack trace
// costs no memory, and each byte is looked at once however the decoder
// splits the text into tokens.
func (r *resultState) addBody(cd []byte) {
	for len(cd) > 0 && !r.found {
		chunk := cd
		nl := bytes.IndexByte(cd, '\n')
		if nl >= 0 {
			chunk, cd = cd[:nl], cd[nl+1:]
		} else {
			cd = nil
		}
		if len(r.body) == 0 {
			chunk = bytes.TrimLeft(chunk, " \t\r\v\f")
		}
		if room := lineRoom - len(r.body); len(chunk) > room {
			for room > 0 && !utf8.RuneStart(chunk[room]) {
				room-- // never split a character
			}
			chunk = chunk[:room]
		}
		r.body = append(r.body, chunk...)
		line := bytes.TrimSpace(r.body)
		switch {
		case nl >= 0 && len(line) == 0:
			r.body = r.body[:0] // a blank line: start over
		case nl >= 0 || len(line) >= maxMessageBytes:
			r.msg, r.found = cut(string(line), maxMessageBytes), true
		}
	}
}

func (p *parser) end() error {
	k := p.top()
	p.stack = p.stack[:len(p.stack)-1]
	switch k {
	case kSuites, kSuite:
		p.suites = p.suites[:len(p.suites)-1]
	case kResult:
		return p.endResult()
	case kCase:
		return p.endCase()
	}
	return nil
}

func (p *parser) endResult() error {
	r, c := p.res, p.cur
	p.res = nil
	if !r.found {
		// The body ended inside its first non-empty line.
		r.msg = cut(string(bytes.TrimSpace(r.body)), maxMessageBytes)
	}
	switch r.kind {
	case rFailure:
		if !c.hasFail {
			c.failMsg = r.msg
		}
		c.hasFail = true
	case rError:
		if !c.hasError {
			c.errorMsg = r.msg
		}
		c.hasError = true
	case rFlakyFailure, rFlakyError:
		// A failed attempt before the final result: it is a run of its
		// own, emitted now so that it comes first.
		if c.unnamed {
			return nil
		}
		run := c.run
		run.Status, run.Message, run.Duration = r.kind.status(), r.msg, r.dur
		return p.emit(run)
	case rRerunFailure, rRerunError:
		// A further failed attempt after the final failure: it has to
		// wait until the final result is known and emitted.
		if c.unnamed {
			return nil
		}
		if p.sum.Runs+len(p.reruns)+1 > p.lim.MaxRuns {
			return p.tooManyRuns()
		}
		run := c.run
		run.Status, run.Message, run.Duration = r.kind.status(), r.msg, r.dur
		p.reruns = append(p.reruns, run)
	}
	return nil
}

func (p *parser) endCase() error {
	c := p.cur
	p.cur = nil
	if c.unnamed {
		return nil
	}
	run := c.run
	// One outcome per case: an error beats a failure beats a skip, since
	// a case that both failed an assertion and crashed in teardown did
	// not pass, and "skipped" next to a failure is a reporter's leftover.
	switch {
	case c.hasError:
		run.Status, run.Message = Errored, c.errorMsg
	case c.hasFail:
		run.Status, run.Message = Failed, c.failMsg
	case c.skipped:
		run.Status = Skipped
	default:
		run.Status = Passed
	}
	if err := p.emit(run); err != nil {
		return err
	}
	for _, rr := range p.reruns {
		if err := p.emit(rr); err != nil {
			return err
		}
	}
	p.reruns = p.reruns[:0]
	return nil
}

func (p *parser) tooManyRuns() error {
	return p.errorf("the report holds more than %d test runs, the most one report may hold", p.lim.MaxRuns)
}

func (p *parser) key(r *Run) identKey {
	b := p.keyBuf[:0]
	for _, s := range [...]string{r.File, r.Classname, r.Parent, r.Name, r.ID} {
		// Length-prefixed so that ("ab","c") and ("a","bc") differ.
		n := len(s)
		b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		b = append(b, s...)
	}
	p.keyBuf = b
	return identKey{maphash.Bytes(p.seed1, b), maphash.Bytes(p.seed2, b)}
}

func (p *parser) emit(r Run) error {
	if p.sum.Runs >= p.lim.MaxRuns {
		return p.tooManyRuns()
	}
	k := p.key(&r)
	r.Attempt = p.seen[k]
	p.seen[k] = r.Attempt + 1
	p.sum.Runs++
	switch r.Status {
	case Passed:
		p.sum.Passed++
	case Failed:
		p.sum.Failed++
	case Errored:
		p.sum.Errored++
	case Skipped:
		p.sum.Skipped++
	}
	if r.Attempt > 0 {
		p.sum.Retries++
	}
	if p.fn == nil {
		return nil
	}
	return p.fn(r)
}

func (p *parser) timestamp(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if s != p.lastTS {
		p.lastTS, p.lastTSVal = s, parseTimestamp(s)
	}
	return p.lastTSVal
}

// cut limits a stored attribute to MaxTextBytes (ISO-8859-1 input can
// double in size when converted to UTF-8, after the raw cut).
func (p *parser) cut(s string) string { return cut(s, p.lim.MaxTextBytes) }

// cut shortens s to at most n bytes without splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
