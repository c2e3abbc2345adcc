package api

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Limit is the bound of one request field: every string a client sends is
// checked against its entry when the body is decoded, so that nothing
// reaches a key (DynamoDB allows 2,048 bytes in a partition key and 1,024
// in a sort key, and our keys join several fields) or an item (400 KB) that
// the store would refuse, and no control character or invalid UTF-8 gets
// into an identifier or back out in an error.
type Limit struct {
	// Field is the request field: a JSON path ("repo.host"), where the
	// elements of a list of objects are "list[].field"; or the name of a
	// query parameter or header where an endpoint reads one.
	Field string
	// Max is the longest value, in bytes (UTF-8).
	Max int
	// Items bounds a list: its length, and Max each of its strings.
	Items int
	Chars Chars
	About string
}

// Chars is the set of values a field may hold, beyond its length.
type Chars struct {
	Name  string // what a value may hold, for errors and the documentation
	Valid func(string) bool
}

// Limits is the one table of request fields, in the order docs/api.md lists
// them (a test writes that section from it). The repository's parts and the
// branch bound the keys: org slug (63) + host (253) + owner (255) + name
// (255) + branch (255) and separators stay under DynamoDB's 1,024 bytes of
// a sort key; on merge queues the host is github.com or the configured
// GitHub Enterprise host.
var Limits = []Limit{
	{Field: "repo.host", Max: 253, Chars: hostChars, About: "repository host, a DNS name"},
	{Field: "repo.owner", Max: 255, Chars: ownerChars, About: "repository owner (GitHub: at most 39; GitLab groups nest with `/`, 255 in all)"},
	{Field: "repo.name", Max: 255, Chars: pathChars, About: "repository name (GitHub: at most 100; GitLab: 255)"},
	{Field: "org_url_slug", Max: 63, Chars: slugChars, About: "organization slug (test-health endpoints)"},
	{Field: "orgUrlSlug", Max: 63, Chars: slugChars, About: "organization slug (uploader endpoints)"},
	{Field: "test_id", Max: 36, Chars: uuidChars, About: "test id"},
	{Field: "test_case_id", Max: 36, Chars: uuidChars, About: "test id"},
	{Field: "upload_id", Max: 36, Chars: uuidChars, About: "upload id, as createBundleUpload answered it (label-failures)"},
	{Field: "test_ids", Max: 36, Items: 100, Chars: uuidChars, About: "test ids (label-failures)"},
	{Field: "external_ticket_id", Max: 64, Chars: ticketChars, About: "Jira key or Linear id, `PROJ-123`"},
	{Field: "status", Max: 32, Chars: enumChars, About: "list-unhealthy-tests filter, `FLAKY` or `BROKEN`"},
	{Field: "start_time", Max: 64, Chars: timeChars, About: "RFC 3339 timestamp"},
	{Field: "end_time", Max: 64, Chars: timeChars, About: "RFC 3339 timestamp"},
	{Field: "page_query.page_token", Max: 4096, Chars: tokenChars, About: "page token from a previous page"},
	{Field: "clientVersion", Max: 256, Chars: lineChars, About: "uploader version"},
	{Field: "testIdentifiers", Items: 500_000, About: "tests asked about (a bundle's most)"},
	{Field: "testIdentifiers[].name", Max: 65536, Chars: textChars, About: "JUnit `testcase@name`; only hashed into a test id"},
	{Field: "testIdentifiers[].parentName", Max: 65536, Chars: textChars, About: "JUnit `testsuite@name`; only hashed"},
	{Field: "testIdentifiers[].className", Max: 65536, Chars: textChars, About: "JUnit `testcase@classname`; only hashed"},
	{Field: "testIdentifiers[].file", Max: 4096, Chars: textChars, About: "test file path; only hashed"},
	{Field: "testIdentifiers[].id", Max: 1024, Chars: textChars, About: "explicit test id (`trunk:…` or a uuid); only hashed"},
	{Field: "testIdentifiers[].variant", Max: 256, Chars: textChars, About: "upload variant (a bundle's: 64 characters); only hashed"},
	{Field: "targetBranch", Max: 255, Chars: refChars, About: "queue's branch, a git branch name"},
	{Field: "pr.branch", Max: 255, Chars: refChars, About: "pull request's head branch"},
	{Field: "pr.sha", Max: 64, Chars: shaChars, About: "pull request's head commit"},
	{Field: "mode", Max: 32, Chars: enumChars, About: "`SINGLE` or `PARALLEL`"},
	{Field: "state", Max: 32, Chars: enumChars, About: "queue state (updateQueue) or pull request state (listPullRequests)"},
	{Field: "mergeMethod", Max: 32, Chars: enumChars, About: "merge method"},
	{Field: "directMergeMode", Max: 32, Chars: enumChars, About: "`OFF` or `ALWAYS`"},
	{Field: "optimizationMode", Max: 64, Chars: enumChars, About: "optimization mode"},
	{Field: "flakyRetryPolicy", Max: 32, Chars: enumChars, About: "`KNOWN_FLAKY` or `ANY_FAILURE`"},
	{Field: "requiredStatuses", Max: 255, Items: 100, Chars: lineChars, About: "status check contexts"},
	{Field: "enqueueingLabel", Max: 200, Chars: lineChars, About: "GitHub label name (GitHub allows 50 characters)"},
	{Field: "stateLabelPrefix", Max: 200, Chars: lineChars, About: "start of the state labels, ours (GitHub allows 50 characters a label)"},
	{Field: "priority", Max: 32, Chars: enumChars, About: "priority, when a string: a name or digits"},
	{Field: "impactedTargets", Max: 1024, Items: 100_000, Chars: lineChars, About: "targets a pull request impacts (or the string `ALL`)"},
	{Field: "testRunId", Max: 36, Chars: uuidChars, About: "test run id"},
	{Field: "since", Max: 64, Chars: timeChars, About: "RFC 3339 timestamp"},
	{Field: "until", Max: 64, Chars: timeChars, About: "RFC 3339 timestamp (getQueueHistory, ours)"},
	{Field: "cursor", Max: 256, Chars: tokenChars, About: "cursor from a previous page"},
	{Field: "repo", Max: 511, Chars: ownerChars, About: "getMergeQueueMetrics query parameter, `OWNER/NAME`"},
	{Field: "repoHost", Max: 253, Chars: hostChars, About: "getMergeQueueMetrics query parameter"},
	{Field: "X-GitHub-Delivery", Max: 64, Chars: tokenChars, About: "GitHub webhook header, a delivery's id"},
}

var limitByField = func() map[string]Limit {
	m := make(map[string]Limit, len(Limits))
	for _, l := range Limits {
		m[l.Field] = l
	}
	return m
}()

// LimitOf is the limit of a field of the table; it panics for a field the
// table lacks, a bug every test of that endpoint meets.
func LimitOf(field string) Limit {
	l, ok := limitByField[field]
	if !ok {
		panic("api: no limit for request field " + field)
	}
	return l
}

// Check checks v, the value of the field called name (the table's field,
// or one element of it: "requiredStatuses[3]"). An empty value passes:
// whether a field is required is the handler's rule.
func (l Limit) Check(name, v string) error {
	if v == "" {
		return nil
	}
	if len(v) > l.Max {
		return badRequest("%s must be at most %d bytes, got %d", name, l.Max, len(v))
	}
	if !l.Chars.Valid(v) {
		return badRequest("%s must be %s, got %s", name, l.Chars.Name, Quote(v))
	}
	return nil
}

// CheckItems checks the length of a list field.
func (l Limit) CheckItems(name string, n int) error {
	if n > l.Items {
		return badRequest("%s must hold at most %d items, got %d", name, l.Items, n)
	}
	return nil
}

func only(ok func(r rune) bool) func(string) bool {
	return func(s string) bool {
		for _, r := range s {
			if !ok(r) {
				return false
			}
		}
		return true
	}
}

func asciiAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// printable is a visible character or a space: no control or format
// character (a bidirectional override, a zero-width joiner) and no U+FFFD,
// which is what the JSON decoder makes of invalid UTF-8 and lone
// surrogates.
func printable(r rune) bool {
	return r != utf8.RuneError && (r == ' ' || unicode.IsGraphic(r) && !unicode.Is(unicode.Cf, r))
}

var (
	hostChars   = Chars{"a host name: ASCII letters, digits, '.' and '-'", only(func(r rune) bool { return asciiAlnum(r) || r == '.' || r == '-' })}
	pathChars   = Chars{"ASCII letters, digits, '.', '_' and '-'", only(func(r rune) bool { return asciiAlnum(r) || strings.ContainsRune("._-", r) })}
	ownerChars  = Chars{"ASCII letters, digits, '.', '_', '-' and '/'", only(func(r rune) bool { return asciiAlnum(r) || strings.ContainsRune("._-/", r) })}
	slugChars   = Chars{"ASCII letters, digits, '-' and '_'", only(func(r rune) bool { return asciiAlnum(r) || r == '-' || r == '_' })}
	enumChars   = Chars{"ASCII letters, digits, '_', '-' and spaces", only(func(r rune) bool { return asciiAlnum(r) || strings.ContainsRune("_- ", r) })}
	timeChars   = Chars{"an RFC 3339 timestamp: digits, letters and ':', '.', '+', '-'", only(func(r rune) bool { return asciiAlnum(r) || strings.ContainsRune(":.+-", r) })}
	tokenChars  = Chars{"ASCII letters, digits, '-', '_', '.' and '='", only(func(r rune) bool { return asciiAlnum(r) || strings.ContainsRune("-_.=", r) })}
	ticketChars = Chars{"a Jira key or a Linear id like PROJ-123", ticketKey}
	// refChars follows git check-ref-format's character rules.
	refChars = Chars{"a git branch name: printable characters but spaces and ~ ^ : ? * [ \\", only(func(r rune) bool {
		return printable(r) && r != ' ' && !strings.ContainsRune(`~^:?*[\`, r)
	})}
	shaChars = Chars{"a commit sha: 40 or 64 hex digits", func(s string) bool {
		return (len(s) == 40 || len(s) == 64) && only(func(r rune) bool { return '0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F' })(s)
	}}
	uuidChars = Chars{"a uuid like 01234567-0123-0123-0123-0123456789ab", func(s string) bool {
		_, err := uuid.Parse(s)
		return len(s) == 36 && err == nil
	}}
	lineChars = Chars{"printable text: no control or format characters", only(printable)}
	// textChars are test names and paths as JUnit reports carry them: only
	// hashed, never stored or echoed, so anything but control characters
	// other than tab and newlines.
	textChars = Chars{"text without control characters", only(func(r rune) bool {
		return r == '\t' || r == '\n' || r == '\r' || !unicode.IsControl(r)
	})}
)

// Quote is v as an error message may show it: cut to 64 bytes on a
// character boundary and quoted in ASCII, every other byte or character
// escaped (\x00, \u202e), so that an error body never carries a control
// character, a bidirectional override or invalid UTF-8 from the input.
func Quote(v string) string {
	if c := cut(v); len(c) < len(v) {
		return strconv.QuoteToASCII(c) + "…"
	}
	return strconv.QuoteToASCII(v)
}

// ticketKey reports whether key has the shape of Jira keys and Linear ids
// alike, PROJ-123: ^[A-Z][A-Z0-9_]+-[0-9]+$. It is checked byte by byte
// because a package-level regexp is compiled at every cold start of every
// function that links this package.
func ticketKey(key string) bool {
	project, number, ok := strings.Cut(key, "-")
	if !ok || len(project) < 2 || number == "" || project[0] < 'A' || project[0] > 'Z' {
		return false
	}
	for _, c := range []byte(project[1:]) {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	for _, c := range []byte(number) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
