package codeowners

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mainguard/mainguard/shared/errs"
)

func mustParse(t testing.TB, text string) *File {
	t.Helper()
	f, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

// TestGitHubDocumentedExamples checks the example CODEOWNERS of GitHub's
// "About code owners" page line by line: each case is the page's default
// line ("*" with two global owners) followed by one documented line (two for
// the /apps examples), and the paths its comment says it does or does not
// cover. Paths a line does not cover fall back to the global owners.
func TestGitHubDocumentedExamples(t *testing.T) {
	const defaults = "# This is a comment.\n*       @global-owner1 @global-owner2\n"
	global := []string{"@global-owner1", "@global-owner2"}
	tests := []struct {
		name  string
		lines string
		path  string
		want  []string
	}{
		{"default owners own everything", "", "README.md", global},
		{"default owners own nested files", "", "a/b/c/d.go", global},

		// "*.js @js-owner #This is an inline comment."
		{"js owner for js", "*.js    @js-owner #This is an inline comment.\n", "src/app/index.js", []string{"@js-owner"}},
		{"js owner not for ts", "*.js    @js-owner #This is an inline comment.\n", "src/app/index.ts", global},

		// "*.go docs@example.com": e-mail owners.
		{"e-mail owner", "*.go docs@example.com\n", "cmd/main.go", []string{"docs@example.com"}},

		// "*.txt @octo-org/octocats": team owners.
		{"team owner", "*.txt @octo-org/octocats\n", "notes/todo.txt", []string{"@octo-org/octocats"}},

		// "/build/logs/": the build/logs directory at the root and any of
		// its subdirectories.
		{"build/logs file", "/build/logs/ @doctocat\n", "build/logs/a.log", []string{"@doctocat"}},
		{"build/logs subdirectory", "/build/logs/ @doctocat\n", "build/logs/2026/07/a.log", []string{"@doctocat"}},
		{"build/logs not below root", "/build/logs/ @doctocat\n", "web/build/logs/a.log", global},

		// "docs/*": docs/getting-started.md but not further nested files
		// like docs/build-app/troubleshooting.md.
		{"docs/* direct child", "docs/*  docs@example.com\n", "docs/getting-started.md", []string{"docs@example.com"}},
		{"docs/* not nested", "docs/*  docs@example.com\n", "docs/build-app/troubleshooting.md", global},

		// "apps/": any file in an apps directory anywhere.
		{"apps/ at root", "apps/ @octocat\n", "apps/web/main.js", []string{"@octocat"}},
		{"apps/ anywhere", "apps/ @octocat\n", "services/apps/main.js", []string{"@octocat"}},
		{"apps/ not a file named apps", "apps/ @octocat\n", "bin/apps", global},

		// "/docs/": the /docs directory at the root and its subdirectories.
		{"/docs/ file", "/docs/ @doctocat\n", "docs/index.md", []string{"@doctocat"}},
		{"/docs/ nested", "/docs/ @doctocat\n", "docs/build-app/troubleshooting.md", []string{"@doctocat"}},
		{"/docs/ not below root", "/docs/ @doctocat\n", "site/docs/index.md", global},

		// "/scripts/": approval from @doctocat or @octocat.
		{"two owners", "/scripts/ @doctocat @octocat\n", "scripts/deploy.sh", []string{"@doctocat", "@octocat"}},

		// "**/logs": /build/logs, /scripts/logs and /deeply/nested/logs.
		{"**/logs build", "**/logs @octocat\n", "build/logs/out.txt", []string{"@octocat"}},
		{"**/logs scripts", "**/logs @octocat\n", "scripts/logs/out.txt", []string{"@octocat"}},
		{"**/logs deeply nested", "**/logs @octocat\n", "deeply/nested/logs/out.txt", []string{"@octocat"}},
		{"**/logs root", "**/logs @octocat\n", "logs/out.txt", []string{"@octocat"}},
		{"**/logs not logsx", "**/logs @octocat\n", "build/logsx/out.txt", global},

		// "/apps/ @octocat" then "/apps/github": the subdirectory has no
		// owners.
		{"apps owned", "/apps/ @octocat\n/apps/github\n", "apps/web/main.js", []string{"@octocat"}},
		{"apps/github unowned", "/apps/ @octocat\n/apps/github\n", "apps/github/main.js", nil},

		// "/apps/ @octocat" then "/apps/github @doctocat".
		{"apps/github own owner", "/apps/ @octocat\n/apps/github @doctocat\n", "apps/github/main.js", []string{"@doctocat"}},
		{"apps others keep octocat", "/apps/ @octocat\n/apps/github @doctocat\n", "apps/gitlab/main.js", []string{"@octocat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, defaults+tt.lines)
			if issues := f.Issues(); len(issues) != 0 {
				t.Fatalf("unexpected issues: %v", issues)
			}
			if diff := cmp.Diff(f.Owners(tt.path), tt.want, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Owners(%q) (-got +want):\n%s", tt.path, diff)
			}
		})
	}
}

// TestPatterns is a table of single patterns against paths: the gitignore
// rules as GitHub applies them.
func TestPatterns(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"foo", []string{"foo", "foo/bar", "bar/foo", "bar/foo/baz"}, []string{"foo.txt", "bar/foo.txt", "bar/baz", "food"}},
		{"/foo", []string{"foo", "foo/bar", "foo/bar/baz"}, []string{"bar/foo", "fool.txt"}},
		{"foo/", []string{"foo/bar", "foo/bar/baz", "bar/foo/baz"}, []string{"foo", "bar/foo"}},
		{"/foo/", []string{"foo/bar", "foo/bar/baz"}, []string{"foo", "bar/foo/baz"}},
		{"foo/bar", []string{"foo/bar", "foo/bar/baz"}, []string{"foo/bart", "baz/foo/bar"}},
		{"foo/bar/", []string{"foo/bar/baz"}, []string{"foo/bar", "baz/foo/bar/qux"}},
		{"*", []string{"foo", "foo/bar", "a/b/c/d"}, nil},
		{"f*", []string{"foo", "foo/bar", "bar/foo", "bar/foo/baz"}, []string{"bar/baz", "xfoo"}},
		{"/*", []string{"foo", "bar.md"}, []string{"foo/bar", "foo/bar/baz"}},
		{"/f*", []string{"foo", "foo/bar"}, []string{"bar/foo", "xfoo"}},
		{"f*/", []string{"foo/bar", "bar/foo/baz"}, []string{"foo", "bar/foo"}},
		{"/*/", []string{"foo/bar", "bar/foo/baz"}, []string{"foo"}},
		{"foo/*", []string{"foo/bar"}, []string{"foo", "foo/bar/baz", "bar/foo/baz"}},
		{"foo/*.txt", []string{"foo/bar.txt"}, []string{"foo/bar/baz.txt", "qux/foo/bar.txt"}},
		{"foo/*/baz", []string{"foo/bar/baz", "foo/bar/baz/qux"}, []string{"foo/baz", "foo/bar"}},
		{"f?o", []string{"foo", "fxo/bar", "féo"}, []string{"fo", "fooo", "f/o"}},
		{`f\?o`, []string{"f?o"}, []string{"foo"}},
		{`f\*o`, []string{"f*o"}, []string{"foo", "fo"}},
		{"**/foo/bar", []string{"foo/bar", "qux/foo/bar", "qux/foo/bar/baz"}, []string{"foo/baz/bar"}},
		{"**/*bar*", []string{"bar", "foo/bar", "foo/rebar", "foo/barrio", "foo/qux/bar"}, []string{"foo/baz"}},
		{"foo/bar/**", []string{"foo/bar/baz", "foo/bar/baz/qux"}, []string{"foo/bar", "qux/foo/bar/baz"}},
		{"foo/**/bar", []string{"foo/bar", "foo/bar/baz", "foo/qux/bar/baz", "foo/qux/quux/bar/baz"}, []string{"qux/foo/bar", "foo/barn"}},
		{"foo/**/", []string{"foo/bar", "foo/bar/baz"}, []string{"foo"}},
		{"foo/**/bar/b*", []string{"foo/bar/baz", "foo/qux/bar/baz"}, []string{"foo/bar", "foo/bar/qux"}},
		{"a/**/**/b", []string{"a/b", "a/x/b", "a/x/y/z/b"}, []string{"b", "x/a/b"}},
		{"**", []string{"a", "a/b"}, nil},
		{"*.js", []string{"a.js", "src/a.js", "x.js/y"}, []string{"a.jsx", "js"}},
		{`\#notes`, []string{"#notes", "a/#notes"}, []string{"notes"}},
		{`My\ Documents/`, []string{"My Documents/a.txt"}, []string{"My/a.txt", "Documents/a.txt"}},
		{"app/[id]/page.tsx", []string{"app/[id]/page.tsx"}, []string{"app/i/page.tsx"}},
		{"/", nil, []string{"a", "a/b"}},
		{"a//b", []string{"a/b"}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			f := mustParse(t, tt.pattern+" @o\n")
			if f.Len() != 1 {
				t.Fatalf("Len() = %d, want 1 (issues %v)", f.Len(), f.Issues())
			}
			for _, p := range tt.yes {
				if got := f.Owners(p); len(got) != 1 {
					t.Errorf("%q should match %q", tt.pattern, p)
				}
			}
			for _, p := range tt.no {
				if got := f.Owners(p); got != nil {
					t.Errorf("%q should not match %q", tt.pattern, p)
				}
			}
		})
	}
}

func TestLastMatchWins(t *testing.T) {
	f := mustParse(t, "/src/ @a\n*.go @b\n/src/vendor/ @c\n")
	tests := []struct {
		path string
		want []string
	}{
		{"src/x.js", []string{"@a"}},
		{"src/x.go", []string{"@b"}},
		{"src/vendor/x.go", []string{"@c"}},
		{"lib/x.go", []string{"@b"}},
		{"lib/x.js", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(f.Owners(tt.path), tt.want); diff != "" {
			t.Errorf("Owners(%q) (-got +want):\n%s", tt.path, diff)
		}
	}
}

func TestPathNormalisation(t *testing.T) {
	f := mustParse(t, "/src/a.go @a\n")
	for _, p := range []string{"src/a.go", "./src/a.go", "/src/a.go", "//src//a.go", "src/./a.go", "././src/a.go", "src/a.go/"} {
		if diff := cmp.Diff(f.Owners(p), []string{"@a"}); diff != "" {
			t.Errorf("Owners(%q) (-got +want):\n%s", p, diff)
		}
	}
	for _, p := range []string{"", "/", ".", "./", "SRC/a.go", "x/src/a.go", strings.Repeat("/", MaxPathBytes) + "src/a.go"} {
		if got := f.Owners(p); got != nil {
			t.Errorf("Owners(%q) = %v, want nil", p, got)
		}
	}
}

func TestOwnersReturnsACopy(t *testing.T) {
	f := mustParse(t, "* @a @b\n")
	got := f.Owners("x")
	got[0] = "@changed"
	if diff := cmp.Diff(f.Owners("x"), []string{"@a", "@b"}); diff != "" {
		t.Errorf("the caller's change leaked into the file (-got +want):\n%s", diff)
	}
	var nilFile *File
	if got := nilFile.Owners("x"); got != nil {
		t.Errorf("nil File: Owners = %v, want nil", got)
	}
}

// TestGitLabSections reads a GitLab file: headers are not patterns, the last
// match of the whole file wins, and a header's default owners fill pattern
// lines without owners in its section.
func TestGitLabSections(t *testing.T) {
	const text = `# GitLab style
* @everyone

[Documentation]
docs/ @docs-team

^[Optional Section]
*.md @writers

[Database][2] @gitlab-org/database
/db/
/migrations/ @dba

[Frontend] @fe-lead @fe-second # comment after owners
*.vue
/app/assets/ @design

[Empty]
/tmp/
`
	f := mustParse(t, text)
	if issues := f.Issues(); len(issues) != 0 {
		t.Fatalf("unexpected issues: %v", issues)
	}
	tests := []struct {
		path string
		want []string
	}{
		{"main.go", []string{"@everyone"}},
		{"docs/guide.txt", []string{"@docs-team"}},
		{"docs/guide.md", []string{"@writers"}}, // later line wins across sections
		{"db/schema.sql", []string{"@gitlab-org/database"}},
		{"migrations/001.sql", []string{"@dba"}},
		{"components/Button.vue", []string{"@fe-lead", "@fe-second"}},
		{"app/assets/logo.vue", []string{"@design"}},
		{"tmp/x", nil}, // a section without default owners: no owners
		{"Documentation", []string{"@everyone"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(f.Owners(tt.path), tt.want, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Owners(%q) (-got +want):\n%s", tt.path, diff)
		}
	}
	if got, want := f.Len(), 8; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
}

func TestEdgeCases(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		path       string
		want       []string
		wantIssues []int // line numbers
	}{
		{"trailing spaces", "*.go   @a   \t \n", "x.go", []string{"@a"}, nil},
		{"leading spaces", "   *.go @a\n", "x.go", []string{"@a"}, nil},
		{"tabs between fields", "*.go\t@a\t@b\n", "x.go", []string{"@a", "@b"}, nil},
		{"CRLF", "* @a\r\n*.go @b\r\n", "x.go", []string{"@b"}, nil},
		{"CRLF without owners", "* @a\r\n*.go\r\n", "x.go", nil, nil},
		{"BOM", "\ufeff*.go @a\n", "x.go", []string{"@a"}, nil},
		{"no final newline", "* @a\n*.go @b", "x.go", []string{"@b"}, nil},
		{"comment only", "# *.go @a\n", "x.go", nil, nil},
		{"inline comment", "*.go @a # @b\n", "x.go", []string{"@a"}, nil},
		{"hash inside a field is not a comment", "*.go @a b#c@example.com\n", "x.go", []string{"@a", "b#c@example.com"}, nil},
		{"negation skipped", "* @a\n!*.go @b\n", "x.go", []string{"@a"}, []int{2}},
		{"triple star skipped", "* @a\n***.go @b\n", "x.go", []string{"@a"}, []int{2}},
		{"bad owner skips the line", "* @a\n*.go @b nobody\n", "x.go", []string{"@a"}, []int{2}},
		{"bad e-mail skips the line", "* @a\n*.go b@\n", "x.go", []string{"@a"}, []int{2}},
		{"empty handle", "* @a\n*.go @\n", "x.go", []string{"@a"}, []int{2}},
		{"dangling backslash", "* @a\n*.go\\\n", "x.go", []string{"@a"}, []int{2}},
		{"escaped slash", "* @a\n*.go\\/ @b\n", "x.go", []string{"@a"}, []int{2}},
		{"bad section owner", "* @a\n[S] nobody\n*.go\n", "x.go", nil, []int{2}},
		{"pattern too long", "* @a\n/" + strings.Repeat("x", MaxPatternBytes) + " @b\n", "x" + strings.Repeat("x", MaxPatternBytes-1), []string{"@a"}, []int{2}},
		{"issue lines keep counting after skips", "\n\n!x @a\n", "x", nil, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, tt.text)
			if diff := cmp.Diff(f.Owners(tt.path), tt.want, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Owners(%q) (-got +want):\n%s", tt.path, diff)
			}
			var lines []int
			for _, is := range f.Issues() {
				if is.Reason == "" {
					t.Errorf("issue on line %d has no reason", is.Line)
				}
				lines = append(lines, is.Line)
			}
			if diff := cmp.Diff(lines, tt.wantIssues); diff != "" {
				t.Errorf("issue lines (-got +want):\n%s", diff)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	okLine := "/" + strings.Repeat("a", MaxLineBytes-len("/ @o")) + " @o"
	tests := []struct {
		name    string
		text    string
		wantErr string // "" for success
	}{
		{"longest line", okLine + "\r\n", ""},
		{"line too long", "* @a\n" + "/" + strings.Repeat("a", MaxLineBytes) + " @o\n", "line 2 is longer than"},
		{"file at the limit", strings.Repeat("#"+strings.Repeat("x", 1022)+"\n", MaxFileBytes/1024), ""},
		{"file too large", strings.Repeat("#"+strings.Repeat("x", 1022)+"\n", MaxFileBytes/1024) + "x", "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.text))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(errs.MessageOf(err), tt.wantErr) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.wantErr)
			}
			if !errs.Is(err, errs.Invalid) {
				t.Errorf("error code = %s, want %s", errs.CodeOf(err), errs.Invalid)
			}
		})
	}
}

func TestReadError(t *testing.T) {
	cause := errors.New("disk on fire")
	_, err := Parse(iotest.TimeoutReader(strings.NewReader(strings.Repeat("* @a\n", 2000))))
	if err == nil {
		t.Fatal("Parse succeeded on a failing reader")
	}
	_, err = Parse(iotest.ErrReader(cause))
	if !errors.Is(err, cause) || !errs.Is(err, errs.Invalid) {
		t.Errorf("Parse error = %v, want an Invalid error wrapping the cause", err)
	}
	if strings.Contains(errs.MessageOf(err), "fire") {
		t.Errorf("the client message %q leaks the cause", errs.MessageOf(err))
	}
}

// TestIndexAgreesWithLinearScan compares the indexed lookup with a plain
// newest-first scan over a generated file and many paths.
func TestIndexAgreesWithLinearScan(t *testing.T) {
	text, paths := generate(400, 20000, 7)
	f := mustParse(t, text)
	for _, p := range paths {
		if diff := cmp.Diff(f.Owners(p), f.ownersLinear(p)); diff != "" {
			t.Fatalf("Owners(%q) disagrees with the linear scan (-index +linear):\n%s", p, diff)
		}
	}
}

func FuzzOwners(f *testing.F) {
	f.Add("* @a\n*.go @b\n/docs/ @c\n", "docs/x.go")
	f.Add("**/logs @a\nfoo/**/bar/b* @b\n", "foo/x/bar/baz")
	f.Add("[S] @x\n/a/\n\\#x\\ y @q\n", "./a/#x y")
	f.Add("f?o*x/** x@example.com\n", "fé-x/y")
	f.Fuzz(func(t *testing.T, text, p string) {
		file, err := Parse(strings.NewReader(text))
		if err != nil {
			return
		}
		got := file.Owners(p)
		if diff := cmp.Diff(got, file.ownersLinear(p)); diff != "" {
			t.Fatalf("index and linear scan disagree on %q (-index +linear):\n%s", p, diff)
		}
		for _, o := range got {
			if !validOwner(o) {
				t.Fatalf("Owners returned invalid owner %q", o)
			}
		}
	})
}
