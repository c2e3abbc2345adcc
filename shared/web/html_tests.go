package web

// html writes the list of a repository's unhealthy and quarantined
// tests: the filter form, the table, the pager.
func (p testListPage) html(h *writer, v view) {
	h.f("\n<h1>Unhealthy and quarantined tests of %s</h1>\n", p.Repo)
	p.filters(h)
	if p.Pager.Paged() {
		h.raw(`<p class="note">The tests come a page at a time from each list (flaky, broken, quarantined, in id order): the sort applies within this page.</p>`)
	}
	h.raw("\n")
	switch {
	case len(p.Tests) > 0:
		h.raw(`
<table>
<thead><tr><th>Test</th><th>Status</th><th class="num">Failure rate (7 d)</th><th class="num">PRs impacted (7 d)</th><th>Last failure</th><th>Owners</th><th>Quarantined</th></tr></thead>
<tbody>`)
		for _, t := range p.Tests {
			h.f("\n"+`<tr><td><a href="%u">%s</a><div class="note">%s</div></td><td class="state %s">%s</td>
<td class="num">%s</td><td class="num">%d</td><td>`, t.Href, t.Name, t.Reason, t.Status, t.Status, t.FailureRate, t.PRs)
			h.time(t.LastFailure)
			h.f(`</td><td>%s</td><td>%s</td></tr>`+"\n", t.Owners, yesNo(t.Quarantined))
		}
		h.raw("</tbody>\n</table>\n")
	case p.Pager.Paged():
		h.raw(`<p class="note">No test on this page matches the filters.</p>` + "\n")
	default:
		h.raw(`<p class="note">No test matches: every test is healthy, or the filters leave none.</p>`)
	}
	h.raw("\n")
	h.pager(p.Pager)
	h.raw("\n")
}

// filters is the form that filters and sorts the list, as it is set now.
func (p testListPage) filters(h *writer) {
	h.f(`<form method="get" action="" class="card">
<input type="hidden" name="repo" value="%s">`, p.RepoParam)
	if p.HostParam != "" {
		h.f(`<input type="hidden" name="host" value="%s">`, p.HostParam)
	}
	h.raw("\n" + `<label>Status <select name="status">` + "\n")
	h.option("", "flaky or broken", p.Status == "")
	h.option("flaky", "flaky", p.Status == "flaky")
	h.option("broken", "broken", p.Status == "broken")
	h.f(`</select></label>
<label>Owner <input name="owner" value="%s" placeholder="@team"></label>
<label><input type="checkbox" name="quarantined" value="on" `, p.Owner)
	if p.Quarantined {
		h.raw("checked")
	}
	h.raw(`> quarantined only</label>
<label>Sort by <select name="sort">
`)
	h.option("failure_rate", "failure rate (7 days)", p.Sort == "failure_rate")
	h.option("prs", "PRs impacted (7 days)", p.Sort == "prs")
	h.option("last_failure", "last failure", p.Sort == "last_failure")
	h.raw(`</select></label>
<button type="submit">Apply</button>
</form>
`)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// html writes a test's page: its status and rates, its daily failure
// rate, its most common failures, latest and failed runs, and who owns
// it, with the quarantine override's form.
func (p testPage) html(h *writer, v view) {
	h.f("\n<h1>%s</h1>\n"+`<p class="note">%s`, p.Name, p.Repo)
	if p.FilePath != "" {
		h.f(` · %s`, p.FilePath)
	}
	if p.Classname != "" {
		h.f(` · %s`, p.Classname)
	}
	if p.Variant != "" {
		h.f(` · variant %s`, p.Variant)
	}
	h.f(`</p>
<div class="card figures">
<div><span class="note">Status</span><b class="state %s">%s</b></div>
<div><span class="note">Failure rate, 24 h</span><b>%s</b></div>
<div><span class="note">Failure rate, 7 days</span><b>%s</b></div>
<div><span class="note">PRs impacted, 7 days</span><b>%d</b></div>
<div><span class="note">Quarantined</span><b>%s</b></div>
</div>
<p>Why: %s`, p.Status.Value, p.Status.Value, p.Rate24h, p.Rate7d, p.PullRequestsImpacted, yesNo(p.Quarantined), p.Status.Reason)
	if p.Since.Text != "" {
		h.raw(` <span class="note">(since `)
		h.time(p.Since)
		h.raw(`)</span>`)
	}
	h.raw("</p>\n")
	if p.FlakeSHA != "" {
		h.f(`<p>Failed and passed on commit <code>%s</code>`, short(p.FlakeSHA))
		if p.FlakeBranch != "" {
			h.f(` (%s)`, p.FlakeBranch)
		}
		h.raw(`.</p>`)
	}
	h.raw("\n\n<h2>Daily failure rate</h2>\n" + p.Chart.SVG() + "\n\n<h2>Most common failures (7 days)</h2>\n")
	p.failures(h)
	h.raw("\n\n<h2>Latest run</h2>\n")
	p.latest(h)
	h.raw("\n\n<h2>Failed runs, last 3 days</h2>\n")
	p.failedRuns(h)
	h.raw("\n" + `<p class="note">Passing runs are counted in the rates, not kept one by one.</p>` + "\n\n<h2>Ownership and quarantine</h2>\n")
	p.ownership(h)
	p.overrideForm(h, v.CSRF)
}

func (p testPage) failures(h *writer) {
	if len(p.Failures) == 0 {
		h.raw(`<p class="note">No failure in the last 7 days.</p>`)
		return
	}
	h.raw("\n" + `<table><thead><tr><th>Failure</th><th class="num">Times</th><th>Last</th></tr></thead><tbody>` + "\n")
	for _, f := range p.Failures {
		h.f(`<tr><td><code>%s</code></td><td class="num">%d</td><td>`, f.Summary, f.Count)
		h.time(f.Last)
		h.raw(`</td></tr>`)
	}
	h.raw("\n</tbody></table>\n")
}

func (p testPage) latest(h *writer) {
	if p.Latest == nil {
		h.raw(`<p class="note">The upload of its latest run is no longer kept.</p>`)
		return
	}
	h.raw("\n" + `<table><thead><tr><th>At</th><th>Branch</th><th>Commit</th><th>Outcome</th><th>PR</th></tr></thead><tbody>` + "\n")
	p.Latest.cells(h)
	h.raw("</tr>\n</tbody></table>\n")
}

func (p testPage) failedRuns(h *writer) {
	if len(p.Runs) == 0 {
		h.raw(`<p class="note">No failed run in the last 3 days.</p>`)
		return
	}
	h.raw("\n" + `<table><thead><tr><th>At</th><th>Branch</th><th>Commit</th><th>Outcome</th><th>PR</th><th>Message</th></tr></thead><tbody>` + "\n")
	for _, r := range p.Runs {
		r.cells(h)
		h.f(`<td><code>%s</code></td></tr>`, r.Message)
	}
	h.raw("\n</tbody></table>\n")
}

// cells are a run's row, open for more cells: when, branch, commit,
// outcome and pull request.
func (r runRow) cells(h *writer) {
	h.raw(`<tr><td>`)
	h.time(r.At)
	h.f(`</td><td>%s</td><td><code>%s</code></td><td class="%s">%s</td><td>`, r.Branch, short(r.SHA), r.Status, r.Status)
	if r.PRHref != "" {
		h.f(`<a href="%u">#%d</a>`, r.PRHref, r.PR)
	}
	h.raw(`</td>`)
}

func (p testPage) ownership(h *writer) {
	h.raw("<table><tbody>\n<tr><th>Owners</th><td>")
	for i, o := range p.Codeowners {
		if i > 0 {
			h.raw(", ")
		}
		h.f(`%s`, o)
	}
	if len(p.Codeowners) == 0 {
		h.raw("none in CODEOWNERS")
	}
	h.raw("</td></tr>\n<tr><th>Ticket</th><td>")
	if p.Ticket != nil {
		h.f(`<a href="%u">%s</a>`, p.Ticket.HTMLURL, p.Ticket.HTMLURL)
	} else {
		h.raw("none")
	}
	h.f("</td></tr>\n"+`<tr><th>Quarantine override</th><td title="%s">%s`, p.Override.Code, p.Override.Words)
	if p.OverrideUntil.Text != "" {
		h.raw(" until ")
		h.time(p.OverrideUntil)
		h.raw(", then the repository's rule")
	}
	if !p.QuarantineOn {
		h.raw(` <span class="note">(quarantine is off for this repository)</span>`)
	}
	h.raw("</td></tr>\n</tbody></table>\n")
}

func (p testPage) overrideForm(h *writer, csrf string) {
	h.f(`<form method="post" action="%u" class="card">
<input type="hidden" name="csrf" value="%s">
<label>Set the quarantine override <select name="override">
`, p.Self, csrf)
	h.option("UNSPECIFIED", "None: the repository's rule (UNSPECIFIED)", p.Override.Code == "UNSPECIFIED")
	h.option("ALWAYS_QUARANTINE", "Always quarantine (ALWAYS_QUARANTINE)", p.Override.Code == "ALWAYS_QUARANTINE")
	h.option("NEVER_QUARANTINE", "Never quarantine (NEVER_QUARANTINE)", p.Override.Code == "NEVER_QUARANTINE")
	h.raw(`</select></label>
<label>until <input type="date" name="until"> <span class="note">(optional: the override applies through that day, UTC, then the repository's rule again)</span></label>
<button type="submit">Save</button>
</form>
`)
}
