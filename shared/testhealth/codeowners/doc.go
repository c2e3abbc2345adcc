// Package codeowners owns the reading of CODEOWNERS files and the answer to
// "who owns this path", with GitHub's semantics: gitignore-style patterns,
// the last matching line wins, owners are @user, @org/team or an e-mail.
//
// Pattern rules, as GitHub documents and implements them:
//
//   - a leading "/" anchors the pattern at the repository root; a pattern
//     without any "/" (other than a trailing one) matches at any depth; a
//     "/" anywhere else anchors it too;
//   - a trailing "/" matches everything under a directory, not the
//     directory path itself;
//   - "*" and "?" do not cross "/"; "**" does ("**/x", "x/**", "a/**/b");
//   - a pattern whose last segment is a name or a glob (docs, *.js, /apps)
//     also matches everything under a directory of that name, but a last
//     segment that is a lone "*" matches one level only: GitHub's
//     documentation says "docs/*" matches docs/getting-started.md and not
//     docs/build-app/troubleshooting.md;
//   - "\" escapes the next character: "\#" for a pattern starting with a
//     hash, "\ " for a space, "\*" for a literal star; "[" and "]" are
//     literal characters (CODEOWNERS has no character ranges, and literal
//     brackets are common in Next.js route folders such as app/[id]/);
//   - matching is case-sensitive.
//
// A line that GitHub would reject ("!" negation, "***", an owner that is
// neither @name nor an e-mail, a dangling "\") is skipped, as GitHub skips
// it, and reported by File.Issues; it is never fatal. An inline "#" after
// whitespace starts a comment.
//
// GitLab sections are read as plain lines: a header "[Section]",
// "^[Section]", "[Section][2]" or "[Section] @owner" carries no pattern and
// does not start a new scope, so the last matching line of the whole file
// still wins (GitLab itself would combine the owners of every section). The
// one part of sections we do apply is the default owners of a header: a
// pattern line without owners below "[Section] @owner" gets @owner, as in
// GitLab. That is simple and cannot change a GitHub file's meaning, since
// GitHub files have no section headers. Outside such a section, a matching
// line without owners means "no owners", as on GitHub.
//
// Parse precompiles every pattern and indexes the rules by a literal path
// segment each one requires, so Owners tests only the few rules that can
// match a path. There is no I/O beyond the io.Reader given to Parse.
package codeowners
