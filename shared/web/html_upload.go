package web

// html writes an upload's page: what it held, and its failed tests
// labelled as label-failures labels them.
func (p uploadPage) html(h *writer, v view) {
	h.f("\n<h1>Upload %s</h1>\n"+`<p class="note">%s`, p.ID, p.Repo)
	if p.Branch != "" {
		h.f(` · %s`, p.Branch)
	}
	if p.SHA != "" {
		h.f(` · <code>%s</code>`, short(p.SHA))
	}
	if p.PR != 0 {
		h.f(` · pull request #%d`, p.PR)
	}
	h.f(` · created %s UTC`, p.Created)
	if p.Finished != "" {
		h.f(`, finished %s UTC`, p.Finished)
	}
	h.f(`</p>
<div class="card figures">
<div><span class="note">State</span><b class="state">%s</b></div>
<div><span class="note">Runs</span><b>%d</b></div>
<div><span class="note">Passed</span><b>%d</b></div>
<div><span class="note">Failed</span><b>%d</b></div>
<div><span class="note">Skipped</span><b>%d</b></div>
<div><span class="note">Failed tests</span><b>%d</b></div>
</div>
`, p.State, p.Runs, p.Passed, p.Failed, p.Skipped, p.FailedTests)
	if p.Reason != "" {
		h.f(`<p class="error">%s</p>`, p.Reason)
	}
	h.raw("\n")
	if p.Guarded {
		h.raw(`<p class="note">More than 80% of its tests failed: the infrastructure guard set it aside, so it counts in the rates but not as evidence of flaky or broken tests.</p>`)
	}
	h.raw("\n\n<h2>Was this failure mine?</h2>\n")
	p.failures(h)
	h.raw("\n")
}

func (p uploadPage) failures(h *writer) {
	switch {
	case len(p.Failures) == 0 && p.FailedTests != 0:
		h.raw(`<p class="note">Its failed tests are not labelled yet.</p>`)
		return
	case len(p.Failures) == 0:
		h.raw(`<p class="note">No test failed in this upload.</p>`)
		return
	}
	h.raw("\n" + `<table><thead><tr><th>Test</th><th>Label</th><th>Why</th></tr></thead><tbody>` + "\n")
	for _, f := range p.Failures {
		h.raw(`<tr><td>`)
		if f.Href != "" {
			h.f(`<a href="%u">%s</a>`, f.Href, f.Name)
		} else {
			h.f(`%s`, f.Name)
		}
		h.f(`</td><td class="label %s"><b>%s</b></td><td>%s</td></tr>`, f.Kind, f.Label, f.Evidence)
	}
	h.raw("\n</tbody></table>\n")
	if p.Shown < p.FailedTests {
		h.f(`<p class="note">The first %d of %d failed tests.</p>`, p.Shown, p.FailedTests)
	}
	h.raw("\n")
}
