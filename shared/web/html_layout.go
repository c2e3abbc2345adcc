package web

import "net/http"

// view is what every page's layout shows around the page itself.
type view struct {
	Title  string
	Org    string // "" when signed out
	CSRF   string
	Crumbs []crumb
	// Refresh is where the page moves on to at once (the continue page),
	// "" for none.
	Refresh string
}

type crumb struct{ Label, Href string }

// content is a page's own part, which the layout frames.
type content interface {
	html(h *writer, v view)
}

// render writes page in the layout, with status.
func (w *Web) render(rw http.ResponseWriter, r *http.Request, status int, s *session, v view, page content) error {
	if s != nil {
		v.Org = s.Org
		token, err := w.sessions.csrf(r.Context(), *s)
		if err != nil {
			return err
		}
		v.CSRF = token
	}
	var h writer
	layout(&h, v, page)
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(status)
	_, _ = h.b.WriteTo(rw)
	return nil
}

// layout is every page: the head with the style sheet, the header with
// the organization and the sign-out form, the crumbs, then the page.
func layout(h *writer, v view, page content) {
	h.f(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s · mainguard</title>
`, v.Title)
	if v.Refresh != "" {
		// A refresh's URL is checked, not normalized, as html/template
		// does in a meta element's content.
		h.f(`<meta http-equiv="refresh" content="0; url=%s">`, urlFilter(v.Refresh))
	}
	h.raw("\n" + style + "\n")
	h.raw(`</head>
<body>
<header>
<a href="/">mainguard</a>
`)
	if v.Org != "" {
		h.f(`<a href="%u">%s</a>
<form method="post" action="/signout"><input type="hidden" name="csrf" value="%s"><button type="submit">Sign out</button></form>`, "/"+v.Org, v.Org, v.CSRF)
	}
	h.raw("\n</header>\n<main>\n")
	if len(v.Crumbs) > 0 {
		h.raw(`<nav class="crumbs">`)
		for i, c := range v.Crumbs {
			if i > 0 {
				h.raw(" › ")
			}
			h.f(`<a href="%u">%s</a>`, c.Href, c.Label)
		}
		h.raw(`</nav>`)
	}
	h.raw("\n")
	page.html(h, v)
	h.raw(`
</main>
</body>
</html>`)
}

// style is every page's style sheet.
const style = `<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d232b; background: #f6f7f9; }
header { background: #1d2b45; color: #fff; padding: .6rem 1.2rem; display: flex; gap: 1rem; align-items: center; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
header form { margin-left: auto; }
main { padding: 1rem 1.2rem 3rem; max-width: 1200px; }
nav.crumbs { font-size: .9rem; margin-bottom: .4rem; color: #555; }
h1 { font-size: 1.45rem; margin: .2rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin-top: 1.6rem; }
table { border-collapse: collapse; background: #fff; width: 100%; margin: .4rem 0; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #e3e6ea; vertical-align: top; }
th { background: #eef1f5; font-weight: 600; font-size: .9rem; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.state { font-weight: 600; font-size: .85rem; }
.MERGED, .SUCCEEDED, .TESTS_PASSED, .success, .healthy { color: #17713a; }
.FAILED, .failure, .broken, .CANCELLED, .failed { color: #b42318; }
.flaky, .PENDING_FAILURE { color: #a15c00; }
.note { color: #555; font-size: .9rem; }
.card { background: #fff; border: 1px solid #e3e6ea; padding: .8rem 1rem; margin: .6rem 0; }
.figures { display: flex; gap: 1.6rem; flex-wrap: wrap; }
.figures div b { display: block; font-size: 1.4rem; }
form.inline { display: inline; }
button { font: inherit; padding: .2rem .7rem; cursor: pointer; }
.error { color: #b42318; font-weight: 600; }
svg.chart { background: #fff; border: 1px solid #e3e6ea; max-width: 100%; height: auto; }
code { font-size: .9em; }
time { white-space: nowrap; }
.pager a { margin-right: 1.2rem; }
</style>`

// time writes a moment as the pages show it: in words, exactly on hover;
// nothing for no moment.
func (h *writer) time(s stamp) {
	if s.Text != "" {
		h.f(`<time datetime="%s" title="%s">%s</time>`, s.Exact, s.Exact, s.Text)
	}
}

// coded writes an enum value in words, the value itself on hover; nothing
// for none.
func (h *writer) coded(c coded) {
	if c.Code != "" {
		h.f(`<span title="%s">%s</span>`, c.Code, c.Words)
	}
}

// pager writes a paged list's links, when it has more than one page.
func (h *writer) pager(p pager) {
	if !p.Paged() {
		return
	}
	h.raw(`<p class="pager">`)
	if p.First != "" {
		h.f(`<a href="%u">First page</a>`, p.First)
	}
	if p.Next != "" {
		h.f(`<a href="%u" rel="next">Next page</a>`, p.Next)
	}
	h.raw(`</p>`)
}

// short is a commit's SHA as pages show it: its first 7 characters.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// state writes an enum value in words as the element tag, coloured by
// its value (the style sheet's classes), the value itself on hover.
func (h *writer) state(tag string, c coded) {
	h.f(`<`+tag+` class="state %s" title="%s">%s</`+tag+`>`, c.Code, c.Code, c.Words)
}

// option writes a select's option; label is markup of the code's own.
func (h *writer) option(value, label string, selected bool) {
	h.f(`<option value="%s" `, value)
	if selected {
		h.raw("selected")
	}
	h.raw(">" + label + "</option>\n")
}
