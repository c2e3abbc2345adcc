package web

// The pages around signing in, and the error page.

// errorPage is the page of a request that failed: a sentence a person can
// act on.
type errorPage struct{ Message string }

func (p errorPage) html(h *writer, v view) {
	h.f(`
<h1>%s</h1>
<div class="card"><p>%s</p>
<p>`, v.Title, p.Message)
	if v.Org != "" {
		h.f(`<a href="%u">Back to %s</a>`, "/"+v.Org, v.Org)
	} else {
		h.raw(`<a href="/signin">Sign in</a>`)
	}
	h.raw("</p></div>\n")
}

func (p signInPage) html(h *writer, v view) {
	h.raw("\n<h1>Sign in</h1>\n")
	if p.GitHub {
		h.raw(`<div class="card">
<p><a id="github-signin" href="/signin/github`)
		if p.Next != "" {
			h.f(`?next=%q`, p.Next)
		}
		h.raw(`">Sign in with GitHub</a>: you see the repositories you can read on GitHub, and change what you can write to.</p>
</div>`)
	}
	h.raw(`
<div class="card">
<p>Sign in with an API token of your organization that can read (<code>mainguard token create --org … --scope read</code> makes one).</p>
`)
	if p.Message != "" {
		h.f(`<p class="error" role="alert">%s</p>`, p.Message)
	}
	h.f(`
<form method="post" action="/signin">
<input type="hidden" name="next" value="%s">
<input type="hidden" name="csrf" value="%s">
<label>API token <input type="password" name="token" autocomplete="off" size="60" required autofocus></label>
<button type="submit">Sign in</button>
</form>
</div>
`, p.Next, p.CSRF)
}

// continuePage moves on to Next at once (view.Refresh), with a link for a
// browser that does not.
func (p continuePage) html(h *writer, v view) {
	h.f(`
<h1>%s</h1>
<div class="card"><p>%s</p>
<p><a id="continue" href="%u">Continue</a></p></div>
`, v.Title, p.Message, p.Next)
}
