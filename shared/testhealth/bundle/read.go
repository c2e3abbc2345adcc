package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/mainguard/mainguard/shared/testhealth/junit"
)

// Limits bound what one bundle may hold, so that a hostile or broken
// upload cannot exhaust the service. Zero or negative fields take the
// defaults.
type Limits struct {
	// MaxCompressed is the largest bundle accepted as uploaded, default
	// 20 MiB (the contract's upload limit).
	MaxCompressed int64
	// MaxUncompressed bounds the total bytes after decompression, default
	// 256 MiB. It is checked against the sizes the tar headers declare
	// (before reading an entry) and against the bytes actually
	// decompressed (tar headers, padding and anything after the archive
	// included), so a compression bomb is stopped at the limit.
	MaxUncompressed int64
	// MaxRatio bounds how many times larger than the compressed bytes read
	// so far the decompressed bytes may be, default 250, checked once
	// RatioFloor bytes have been decompressed. Real reports compress about
	// 30-75× (a suite of 500,000 near-identical passing cases: 73×); a
	// bundle that expands far more is a bomb, and is refused after its
	// first megabytes instead of after expanding to MaxUncompressed
	// (an XML comment that expands 25,000× cost 2.3 s of CPU to reach
	// 512 MiB).
	MaxRatio int64
	// MaxEntry is the largest single entry, default 256 MiB.
	MaxEntry int64
	// MaxMeta is the largest meta.json, default 1 MiB.
	MaxMeta int64
	// MaxCodeowners is the largest CODEOWNERS file, default 1 MiB.
	MaxCodeowners int64
	// MaxEntries is the most tar entries of any kind, default 10,000.
	MaxEntries int
	// MaxRuns is the most runs the whole bundle may hold, all its JUnit
	// files together, default 500,000 (the contract's limit). Each file is
	// also bounded by JUnit.MaxRuns.
	MaxRuns int
	// JUnit bounds each JUnit file; see junit.Limits for its defaults.
	JUnit junit.Limits
}

// Defaults of Limits.
const (
	DefaultMaxCompressed   = 20 << 20
	DefaultMaxUncompressed = 256 << 20
	DefaultMaxRatio        = 250
	DefaultMaxEntry        = 256 << 20
	DefaultMaxMeta         = 1 << 20
	DefaultMaxCodeowners   = 1 << 20
	DefaultMaxEntries      = 10_000
	DefaultMaxRuns         = 500_000
)

// maxWindow bounds the zstd window the decoder accepts, and so the
// history it keeps. The uploader compresses at level 15, whose window is
// at most 8 MiB; 64 MiB leaves room for other writers while keeping one
// Read's memory bounded whatever the frame header claims.
const maxWindow = 64 << 20

// RatioFloor is how many bytes are decompressed before MaxRatio applies:
// small archives are mostly tar's zero padding and compress far beyond
// any bound, and below it a bomb has cost nothing yet.
const RatioFloor = 4 << 20

func (l Limits) withDefaults() Limits {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxCompressed, DefaultMaxCompressed)
	def(&l.MaxUncompressed, DefaultMaxUncompressed)
	def(&l.MaxRatio, DefaultMaxRatio)
	def(&l.MaxEntry, DefaultMaxEntry)
	def(&l.MaxMeta, DefaultMaxMeta)
	def(&l.MaxCodeowners, DefaultMaxCodeowners)
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxRuns <= 0 {
		l.MaxRuns = DefaultMaxRuns
	}
	return l
}

// Handler receives what Read finds, in archive order. Any field may be
// nil. An error returned by a Handler function stops Read, which returns
// that error unchanged (not as *Error), so that a caller can tell its own
// failures (a storage error worth retrying) from a bad bundle.
type Handler struct {
	// Meta is called once, when meta.json has been read and checked. It is
	// always called before any JUnit file: a bundle holding a junit/ entry
	// before meta.json is refused.
	Meta func(Meta) error
	// JUnitFile is called when a junit/ entry starts, with its name in the
	// bundle (e.g. "junit/0").
	JUnitFile func(name string) error
	// Run is called for each run of each JUnit file as it is parsed; file
	// is the entry name in the bundle.
	Run func(file string, r junit.Run) error
	// Codeowners is called with the text of the first CODEOWNERS entry.
	// It may come before or after the JUnit files, and before Meta.
	Codeowners func(text []byte) error
}

// Summary counts what Read found. Run counts are the sums of those
// package junit reported for each file.
type Summary struct {
	// Files counts the JUnit files parsed, the refused one included.
	Files int
	// Runs = Passed + Failed + Errored + Skipped; Retries counts runs that
	// were a retry of an earlier run in the same file.
	Runs, Passed, Failed, Errored, Skipped, Retries int
	// Refused names the JUnit file that made Read refuse the bundle, if
	// that is why it was refused. It is a list so that the shape survives
	// a future lenient mode recording several; today it holds at most one.
	Refused []FileError
}

// FileError names a JUnit file that was refused and why.
type FileError struct {
	// File is the entry name in the bundle, e.g. "junit/2".
	File string
	// Reason is the parser's sentence.
	Reason string
}

// Error is why Read refused a bundle. Reason is a sentence fit to show the
// user who uploaded it; Err, when not nil, is the underlying error.
type Error struct {
	// Reason is the sentence to show, e.g. "the bundle has no meta.json".
	Reason string
	// Err is the error that led to the refusal (from the decoder, the tar
	// reader, encoding/json or package junit), nil when there is none.
	Err error
}

// Error returns "bundle: " and the reason.
func (e *Error) Error() string { return "bundle: " + e.Reason }

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

func refusef(err error, format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...), Err: err}
}

// handlerError marks an error that came from the caller's Handler, so that
// it can be returned unchanged even after passing through junit.Parse.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }

// zstdMagic and the skippable-frame magics (0x184D2A50..5F, little
// endian) are the only ways a zstd stream can begin.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

func isZstd(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	if bytes.Equal(b[:4], zstdMagic) {
		return true
	}
	return b[0]&0xf0 == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18
}

// Read reads a bundle from r as a stream and reports what it holds to h,
// in archive order. It never holds the uncompressed archive: entries are
// read one at a time, skipped entries are discarded as they are
// decompressed, and the runs of each JUnit file are passed to h.Run while
// the file is being parsed.
//
// Entry names are matched after removing any leading "./": meta.json;
// junit/<anything> (JUnit files, parsed with package junit and lim.JUnit);
// CODEOWNERS, .github/CODEOWNERS, docs/CODEOWNERS or .gitlab/CODEOWNERS.
// Other entries (internal.bin, internal/*, bazel_bep.json, ...) are
// skipped, their bytes still counting toward MaxUncompressed; so are
// directories, symbolic and hard links and device entries. A name that is
// absolute or climbs with ".." refuses the bundle.
//
// Read refuses (returns an *Error) a bundle that is not zstd-compressed,
// is not a tar archive inside, passes one of lim's bounds, has no valid
// meta.json (JSON with org, repo.repo.host, owner and name, and
// bundle_upload_id), holds a JUnit file before meta.json, or holds a JUnit
// file that package junit refuses (truncated, with a DOCTYPE, not XML).
// Errors returned by h are returned unchanged.
//
// A refused bundle must change nothing: the contract records it as a
// failed upload and nothing else. Because runs are streamed, h.Run may
// already have been called for earlier files (or the early part of the
// refused file) when Read refuses, so callers must stage what h receives
// and commit it only once Read has returned a nil error. Refusals that
// come from meta.json or the archive's framing before the first JUnit
// file are always found before h.Run is first called.
func Read(r io.Reader, lim Limits, h Handler) (Summary, error) {
	lim = lim.withDefaults()
	rd := &reader{lim: lim, h: h}
	err := rd.read(r)
	if err != nil {
		var he *handlerError
		if errors.As(err, &he) {
			err = he.err
		}
	}
	return rd.sum, err
}

type reader struct {
	lim      Limits
	h        Handler
	runs     int // runs of all JUnit files so far
	sum      Summary
	in       *countReader // compressed bytes
	out      *countReader // decompressed bytes
	meta     bool
	orig     map[string]string
	owners   bool
	declared int64
}

func (rd *reader) read(r io.Reader) error {
	// Counting hides any Bytes()/Len() methods of r as well, which keeps
	// zstd from decoding a bytes.Buffer whole instead of streaming it.
	rd.in = &countReader{r: r, max: rd.lim.MaxCompressed}
	br := bufio.NewReaderSize(rd.in, 64<<10)
	head, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return rd.fail(err)
	}
	if !isZstd(head) {
		return &Error{Reason: "the bundle is not zstd-compressed"}
	}
	zr, err := zstd.NewReader(br,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(maxWindow),
		zstd.WithDecoderMaxWindow(maxWindow),
	)
	if err != nil {
		return refusef(err, "the bundle's zstd stream cannot be opened: %v", err)
	}
	defer zr.Close()
	rd.out = &countReader{r: zr, max: rd.lim.MaxUncompressed, per: rd.in, ratio: rd.lim.MaxRatio}
	tr := tar.NewReader(rd.out)

	for entries := 0; ; entries++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if entries == 0 && !rd.in.over && !rd.out.over && !rd.out.bomb && rd.out.err == nil {
				return refusef(err, "the bundle is zstd-compressed but does not hold a tar archive")
			}
			return rd.fail(err)
		}
		if entries+1 > rd.lim.MaxEntries {
			return refusef(nil, "the bundle holds more than %d entries", rd.lim.MaxEntries)
		}
		if err := rd.entry(hdr, tr); err != nil {
			return rd.fail(err)
		}
	}
	if !rd.meta {
		return &Error{Reason: "the bundle has no meta.json"}
	}
	// Read to the end of the zstd stream so that its checksum is verified
	// and trailing data is counted against the limits too: a bundle is
	// accepted only if all of it is sound.
	if _, err := io.Copy(io.Discard, rd.out); err != nil {
		return rd.fail(err)
	}
	return nil
}

// fail turns a read error into the refusal that explains it, giving the
// limits precedence: an error caused by a limit (however the decoder or
// the tar reader chose to report it) is reported as that limit.
func (rd *reader) fail(err error) error {
	var e *Error
	var he *handlerError
	switch {
	case errors.As(err, &he):
		return err
	case rd.in.over:
		return refusef(err, "the bundle is larger than %s compressed", size(rd.lim.MaxCompressed))
	case rd.out != nil && rd.out.over:
		return refusef(err, "the bundle is larger than %s uncompressed", size(rd.lim.MaxUncompressed))
	case rd.out != nil && rd.out.bomb:
		return refusef(err, "the bundle expands more than %d times its compressed size (%d bytes from %d); a bundle this compressible is refused as a compression bomb",
			rd.lim.MaxRatio, rd.out.n, rd.in.n)
	case errors.As(err, &e):
		return err
	case rd.in.err != nil:
		return refusef(rd.in.err, "the bundle could not be read: %v", rd.in.err)
	case rd.out != nil && rd.out.err != nil:
		return refusef(rd.out.err, "the bundle's zstd stream is corrupt or truncated: %v", rd.out.err)
	default:
		return refusef(err, "the bundle's tar archive is corrupt or truncated: %v", err)
	}
}

// cleanName removes the "./" prefixes tar writers like to add.
func cleanName(name string) string {
	for strings.HasPrefix(name, "./") {
		name = strings.TrimLeft(name[2:], "/")
	}
	return name
}

// unsafeName reports names that would escape a directory if anything ever
// extracted the bundle: such a name is never written by the uploader, so
// it means a forged bundle.
func unsafeName(name string) bool {
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) ||
		len(name) >= 2 && name[1] == ':' {
		return true
	}
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return true
		}
	}
	return false
}

func isCodeowners(name string) bool {
	switch name {
	case "CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS":
		return true
	}
	return false
}

func (rd *reader) entry(hdr *tar.Header, tr *tar.Reader) error {
	name := cleanName(hdr.Name)
	if unsafeName(name) {
		return refusef(nil, "the bundle holds an entry with an unsafe path %q", hdr.Name)
	}
	// Only regular files carry data the service reads; links and devices
	// are skipped rather than refused because they are harmless when never
	// followed, and tar writers add directory entries freely.
	if hdr.Typeflag != tar.TypeReg && hdr.Typeflag != '\x00' {
		return nil
	}
	if hdr.Size > rd.lim.MaxEntry {
		return refusef(nil, "the bundle entry %q is larger than %s uncompressed", name, size(rd.lim.MaxEntry))
	}
	// Declared sizes are checked before reading so that a bomb is refused
	// from its header, without decompressing anything.
	rd.declared += hdr.Size
	if rd.declared > rd.lim.MaxUncompressed {
		return refusef(nil, "the bundle is larger than %s uncompressed", size(rd.lim.MaxUncompressed))
	}
	switch {
	case name == "meta.json":
		return rd.readMeta(hdr, tr)
	case strings.HasPrefix(name, "junit/") && len(name) > len("junit/"):
		return rd.readJUnit(name, tr)
	case isCodeowners(name):
		if rd.owners {
			return nil
		}
		rd.owners = true
		if hdr.Size > rd.lim.MaxCodeowners {
			return refusef(nil, "the bundle's %s is larger than %s", name, size(rd.lim.MaxCodeowners))
		}
		text, err := io.ReadAll(io.LimitReader(tr, rd.lim.MaxCodeowners+1))
		if err != nil {
			return err
		}
		if rd.h.Codeowners != nil {
			if err := rd.h.Codeowners(text); err != nil {
				return &handlerError{err}
			}
		}
	}
	return nil
}

func (rd *reader) readMeta(hdr *tar.Header, tr *tar.Reader) error {
	if rd.meta {
		return &Error{Reason: "the bundle holds more than one meta.json"}
	}
	if hdr.Size > rd.lim.MaxMeta {
		return refusef(nil, "the bundle's meta.json is larger than %s", size(rd.lim.MaxMeta))
	}
	b, err := io.ReadAll(io.LimitReader(tr, rd.lim.MaxMeta+1))
	if err != nil {
		return err
	}
	m, orig, err := parseMeta(b)
	if err != nil {
		return err
	}
	rd.meta, rd.orig = true, orig
	if rd.h.Meta != nil {
		if err := rd.h.Meta(m); err != nil {
			return &handlerError{err}
		}
	}
	return nil
}

func (rd *reader) readJUnit(name string, tr *tar.Reader) error {
	if !rd.meta {
		return refusef(nil, "the bundle holds the JUnit file %s before its meta.json", name)
	}
	rd.sum.Files++
	if rd.h.JUnitFile != nil {
		if err := rd.h.JUnitFile(name); err != nil {
			return &handlerError{err}
		}
	}
	fn := func(r junit.Run) error {
		if rd.runs++; rd.runs > rd.lim.MaxRuns {
			// Refused as a whole, before anything of it counts: the
			// limit is the bundle's, not each file's.
			return &handlerError{refusef(nil, "the bundle holds more than %d test runs", rd.lim.MaxRuns)}
		}
		if rd.h.Run == nil {
			return nil
		}
		if err := rd.h.Run(name, r); err != nil {
			return &handlerError{err}
		}
		return nil
	}
	s, err := junit.Parse(tr, rd.lim.JUnit, fn)
	rd.sum.Runs += s.Runs
	rd.sum.Passed += s.Passed
	rd.sum.Failed += s.Failed
	rd.sum.Errored += s.Errored
	rd.sum.Skipped += s.Skipped
	rd.sum.Retries += s.Retries
	if err == nil {
		return nil
	}
	var he *handlerError
	if errors.As(err, &he) || rd.in.over || rd.out.over || rd.out.bomb || rd.in.err != nil || rd.out.err != nil {
		// Not the report's fault: the handler, a limit or the stream.
		return err
	}
	shown := name
	if o := rd.orig[name]; o != "" {
		shown = fmt.Sprintf("%s (%s)", name, o)
	}
	rd.sum.Refused = append(rd.sum.Refused, FileError{File: name, Reason: err.Error()})
	return refusef(err, "the JUnit file %s was refused: %v", shown, err)
}

// errLimit is what countReader returns past its bound; the reader that
// sees it may wrap or replace it, so Read looks at countReader.over.
var errLimit = errors.New("size limit reached")

// countReader counts the bytes read through it, stops just past max, and
// remembers the first real error of the reader beneath. With per set, it
// also stops (bomb) once past RatioFloor it has read more than ratio times
// what per has: per counts the compressed bytes, which it reads ahead of
// the decoder (so the ratio measured is, if anything, lower than the
// true one).
type countReader struct {
	r     io.Reader
	n     int64
	max   int64
	over  bool
	per   *countReader
	ratio int64
	bomb  bool
	err   error
}

func (c *countReader) Read(p []byte) (int, error) {
	if c.over || c.bomb {
		return 0, errLimit
	}
	// Never ask for more than one byte past the limit: that is enough to
	// know the limit was passed, and it keeps the work done bounded.
	if rem := c.max - c.n + 1; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		c.over = true
		return n, errLimit
	}
	if c.per != nil && c.n > RatioFloor && c.n > c.ratio*c.per.n {
		c.bomb = true
		return n, errLimit
	}
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// size formats a limit for a user: "20 MiB", or bytes when not whole MiB.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
