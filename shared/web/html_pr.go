package web

// html writes a pull request's page: its figures and actions, its
// timeline, and each of its test runs.
func (p prPage) html(h *writer, v view) {
	h.f("\n<h1>#%d %s</h1>\n", p.N, p.Title)
	p.figuresCard(h)
	h.raw("\n")
	if p.Reason.Code != "" {
		h.raw(`<p>Why: `)
		h.coded(p.Reason)
		h.raw(`</p>`)
	}
	h.f("\n"+`<p><a href="%u">The pull request on its host</a> · <a href="%u">the queue %s</a></p>`+"\n", p.GitHub, p.QueueHref, p.Queue)
	p.actions(h, v.CSRF)
	h.raw("\n\n<h2>Timeline</h2>\n")
	p.timeline(h)
	h.raw("\n\n<h2>Test runs</h2>\n")
	for _, run := range p.Runs {
		run.html(h)
	}
	if len(p.Runs) == 0 {
		h.raw(`<p class="note">No test run yet.</p>`)
	}
	h.raw("\n")
	if p.MoreRuns > 0 {
		h.f(`<p class="note">%d older runs are not shown.</p>`, p.MoreRuns)
	}
	h.raw("\n")
}

func (p prPage) figuresCard(h *writer) {
	h.raw(`<div class="card figures">` + "\n" + `<div><span class="note">State</span>`)
	h.state("b", p.State)
	h.f(`</div>
<div><span class="note">For</span><b>%s</b></div>
<div><span class="note">Priority</span><b>%s</b></div>
<div><span class="note">Author</span><b>%s</b></div>
`, p.Since, p.Priority, p.Author)
	if p.Retries > 0 {
		h.f(`<div><span class="note">Flaky retries taken</span><b>%d</b></div>`, p.Retries)
	}
	h.raw("\n</div>")
}

// actions are the forms a pull request's state allows: restart or cancel
// an active one, resubmit a failed or cancelled one.
func (p prPage) actions(h *writer, csrf string) {
	if p.Active {
		h.f(`<form method="post"><input type="hidden" name="csrf" value="%s">
<button name="action" value="restart">Restart its tests</button> <button name="action" value="cancel">Cancel it</button></form>`, csrf)
	}
	h.raw("\n")
	if p.Resubmittable {
		h.f(`<form method="post"><input type="hidden" name="csrf" value="%s">
<button name="action" value="resubmit">Resubmit</button> <span class="note">submits it to the queue again, as submitPullRequest does.</span></form>`, csrf)
	}
}

func (p prPage) timeline(h *writer) {
	if p.MoreSteps {
		h.f(`<p class="note">The latest %d transitions; earlier ones are not shown.</p>`, len(p.Timeline))
	}
	h.raw("\n")
	if len(p.Timeline) == 0 {
		h.raw(`<p class="note">The queue keeps no transition of this pull request any more.</p>`)
		return
	}
	h.raw("\n" + `<table><thead><tr><th>At</th><th>From</th><th>To</th><th>Why</th><th>Run</th></tr></thead><tbody>` + "\n")
	for _, s := range p.Timeline {
		h.raw(`<tr><td>`)
		h.time(s.At)
		h.raw(`</td><td>`)
		h.coded(s.From)
		h.raw(`</td>`)
		h.state("td", s.To)
		h.raw(`<td>`)
		h.coded(s.Reason)
		if s.Bisection {
			h.raw(` (bisection)`)
		}
		h.f(`</td><td><code>%s</code></td></tr>`+"\n", s.Run)
	}
	h.raw("</tbody></table>\n")
}

// html writes a test run of the pull request: its status, branch and
// commit, what kind of run it is, its pull requests, checks and evidence.
func (r runView) html(h *writer) {
	h.f("\n"+`<div class="card run">`+"\n"+`<p><b>Run <code>%s</code></b> `, r.ID)
	h.f(`<span class="state %s" title="%s">%s</span>`, r.Status.Code, r.Status.Code, r.Status.Words)
	if r.Reason.Code != "" {
		h.raw(": ")
		h.coded(r.Reason)
	}
	h.raw(" · started ")
	h.time(r.Created)
	if r.Ended.Text != "" {
		h.raw(" · ended ")
		h.time(r.Ended)
	}
	h.raw("</p>\n")
	if r.Direct {
		h.raw(`<p>A direct merge: the pull request's own head, up to date with the branch.</p>`)
	}
	h.raw("\n")
	if r.TestBranch != "" {
		h.raw(`<p>Branch: `)
		if r.TestBranchHref != "" {
			h.f(`<a href="%u"><code>%s</code></a>`, r.TestBranchHref, r.TestBranch)
		} else {
			h.f(`<code>%s</code> <span class="note">(deleted once the run ended)</span>`, r.TestBranch)
		}
		if r.HeadHref != "" {
			h.f(` at <a href="%u"><code>%s</code></a>`, r.HeadHref, short(r.HeadSHA))
		}
		h.raw(`</p>`)
	}
	h.raw("\n")
	if r.Bisection {
		h.raw(`<p>Bisection run`)
		if r.BisectOf != "" {
			h.f(` of the failed batch run <code>%s</code>`, r.BisectOf)
		}
		h.raw(`.</p>`)
	}
	h.raw("\n")
	if r.RetryOf != "" {
		h.f(`<p>Flaky retry of run <code>%s</code>.</p>`, r.RetryOf)
	}
	h.raw("\n")
	r.batch(h)
	h.raw("\n")
	r.checks(h)
	h.raw("\n")
	r.evidence(h)
	h.raw("\n</div>\n")
}

func (r runView) batch(h *writer) {
	if len(r.Batch) == 0 {
		return
	}
	h.raw(`<p>Pull requests in this run:</p><ul>`)
	for _, p := range r.Batch {
		h.f(`<li><a href="%u">#%d %s</a>`, p.Href, p.N, p.Title)
		if p.IsThis {
			h.raw(` (this one)`)
		}
		if !p.UnderTest {
			h.raw(` (ahead, as the predicted base)`)
		}
		h.raw(`</li>`)
	}
	h.raw(`</ul>`)
}

func (r runView) checks(h *writer) {
	if len(r.Checks) == 0 {
		return
	}
	h.raw(`<table><thead><tr><th>Status or check</th><th>State</th></tr></thead><tbody>`)
	for _, c := range r.Checks {
		h.raw("\n<tr><td>")
		if c.Href != "" {
			h.f(`<a href="%u">%s</a>`, c.Href, c.Name)
		} else {
			h.f(`%s`, c.Name)
		}
		h.f(`</td><td class="state %s">%s</td></tr>`, c.State, c.State)
	}
	h.raw("\n</tbody></table>")
}

func (r runView) evidence(h *writer) {
	if len(r.Evidence) == 0 {
		return
	}
	h.raw(`<p>Failed tests, as test health knew them (the evidence for a flaky retry):</p><ul>`)
	for _, t := range r.Evidence {
		h.f(`<li>%s: <span class="%s">%s</span>`, t.Name, t.Status, t.Status)
		if t.Quarantined {
			h.raw(`, quarantined`)
		}
		h.raw(`</li>`)
	}
	h.raw(`</ul>`)
}
