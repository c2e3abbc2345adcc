// Package web owns the web app: the server-rendered pages every html_url
// and http_details_url of the API points at, sign-in with an organization's
// API token or with GitHub (githubsignin.go), and the few actions a page
// offers, which call the same code as the API and need what the API needs
// (access.go). One handler serves it deployed (the function web, the HTTP
// API's $default route) and on the local server (every path outside /v1's
// endpoints), behind the shared middleware.
//
// Routes, and the DynamoDB calls each page makes (written again on each
// handler; none scans). The two lists page: the organization home by 50
// repositories (?repos_after=), the tests by 100 of each index they read
// (?flaky_after=, broken_after=, quarantine_after=), each page bounded as
// the table says:
//
//	| route                                           | page              | DynamoDB calls                                                         |
//	|-------------------------------------------------|-------------------|------------------------------------------------------------------------|
//	| GET  /signin, POST /signin, POST /signout       | sign-in           | POST: 1 GetItem (the token); sign-out: 1 PutItem (the revocation)      |
//	| GET  /signin/github[/callback], /github/setup   | GitHub sign-in    | callback: 1 GetItem per installation read (setup: 1 transaction)       |
//	| GET  /{org}                                     | organization home | 1 Query + 4 Queries per repository (≤ 50)                              |
//	| GET  /{org}/merge-queue/{owner}/{name}/{branch} | queue             | 1 Query (2 on a GitHub Enterprise host)                                |
//	| GET  …/{branch}/pr/{n}                          | pull request      | 1 Query + ≤ 1 GetItem + 1 Query (timeline) + ≤ 10 GetItems (runs)      |
//	| GET  /{org}/flaky-tests?repo={owner}/{name}     | unhealthy tests   | 1 GetItem + ≤ 3 Queries + ≤ 9 BatchGetItems                            |
//	| GET  /{org}/flaky-tests/test/{id}?repo=…        | test              | 1 BatchGetItem + 1 GetItem (latest run) + 8 Queries (4 days of fails)  |
//	| GET  /{org}/uploads/{id}                        | upload (ours)     | 2 GetItems + ≤ 2 BatchGetItems (its ≤ 50 failed tests, labelled)       |
//
// The deployment's session secret adds one GetItem per function copy, once;
// checking that a session was not signed out one GetItem per session, and
// that its token still holds one per token, per AUTH_CACHE_SECONDS (30)
// per copy; a repository's owner (queue pages, tenancy) one GetItem per
// repository per 30 seconds per copy. A person signed in with GitHub costs
// GitHub calls, not reads: their permission on each repository a page
// shows, kept a minute per copy.
//
// A session is a cookie holding its organizations, who signed in (a token's
// hash, or a GitHub login), an expiry and a random nonce, signed with
// HMAC-SHA256 under that secret (session.go); each form carries a CSRF
// token derived from the nonce, so a form is good only for the session that
// rendered it.
//
// The pages are Go code, not templates: html.go's writer escapes every
// value as html/template would (text, attributes, URLs checked for their
// scheme), and each page is a method html of its data, in html_*.go
// (html_layout.go frames them all), written section by section in the
// order the page shows them. No function links text/template or
// html/template (internal/importrules says why).
package web
