package web

// html writes a queue's page: its figures and pause button, the
// autopilot, the enqueued, not ready and finished pull requests, the
// charts and the settings.
func (p queuePage) html(h *writer, v view) {
	h.f("\n<h1>Merge queue %s <code>%s</code></h1>\n", p.Repo, p.Branch)
	p.figuresCard(h, v.CSRF)
	h.raw("\n\n")
	if p.Autopilot != nil {
		p.Autopilot.html(h)
	}
	h.raw("\n<h2>Enqueued pull requests</h2>\n")
	p.enqueued(h, v.CSRF)
	h.raw("\n")
	p.notes(h)
	if len(p.NotReady) > 0 {
		p.notReady(h)
	}
	h.raw("\n\n<h2>Finished in the last 24 hours</h2>\n")
	p.finished(h)
	h.raw("\n\n<h2>Last 24 hours</h2>\n")
	h.raw(p.DepthChart.SVG() + "\n" + p.WaitChart.SVG() + "\n")
	h.raw(`<p class="note">Depth counts, at the end of each hour, the pull requests submitted and not yet finished; wait is the mean time from submit to merge of those merged in the hour.</p>` + "\n\n")
	h.raw("<h2>Settings</h2>\n<table><tbody>")
	for _, s := range p.Settings {
		h.f(`<tr><th>%s</th><td`, s.Name)
		if s.Code != "" {
			h.f(` title="%s"`, s.Code)
		}
		h.f(`>%s</td></tr>`, s.Value)
	}
	h.f("</tbody></table>\n"+`<p><a href="%u">%s on its host</a></p>`+"\n", p.GitHub, p.Repo)
}

// figuresCard is the queue's headline numbers, and its pause or resume
// button.
func (p queuePage) figuresCard(h *writer, csrf string) {
	h.raw(`<div class="card figures">` + "\n" + `<div><span class="note">State</span>`)
	h.state("b", p.State)
	h.f(`</div>
<div><span class="note">Depth</span><b>%d</b></div>
<div><span class="note">Testing</span><b>%d</b></div>
<div><span class="note">Merged, 24 h</span><b>%d</b></div>
<div><span class="note">Failed, 24 h</span><b>%d</b></div>
<div><span class="note">Cancelled, 24 h</span><b>%d</b></div>
<form method="post"><input type="hidden" name="csrf" value="%s">
`, p.Depth, p.Testing, p.Merged24h, p.Failed24h, p.Cancel24h, csrf)
	if p.Paused {
		h.raw(`<button name="action" value="resume">Resume the queue</button>`)
	} else {
		h.raw(`<button name="action" value="pause">Pause the queue</button>`)
	}
	h.raw("\n</form>\n</div>")
}

func (a *autopilotView) html(h *writer) {
	h.f("\n<h2>Autopilot</h2>\n<p>The queue chose %s. %s.</p>\n", a.Choice, a.Estimates)
	if len(a.Changes) > 0 {
		h.raw(`<table><thead><tr><th>At (UTC)</th><th>Change</th></tr></thead><tbody>`)
		for _, c := range a.Changes {
			h.f("\n"+`<tr><td>%s</td><td class="autopilot-change">%s</td></tr>`, c.Name, c.Value)
		}
		h.raw("\n</tbody></table>")
	}
	h.raw("\n")
}

// enqueued is the table of the pull requests in the queue, in its order,
// each with its Cancel button.
func (p queuePage) enqueued(h *writer, csrf string) {
	if len(p.Enqueued) == 0 {
		h.raw(`<p class="note">Nothing is enqueued.</p>`)
		return
	}
	h.raw(`
<table>
<thead><tr><th class="num">#</th><th>Pull request</th><th>State</th><th>In state</th><th>Priority</th><th>Tested on</th><th>Estimated time to merge</th><th></th></tr></thead>
<tbody>`)
	for _, e := range p.Enqueued {
		h.f("\n"+`<tr><td class="num">%d</td><td><a href="%u">#%d %s</a> <span class="note">by %s</span></td>`+"\n", e.Position, e.Href, e.N, e.Title, e.Author)
		h.state("td", e.State)
		h.f(`<td>%s</td><td>%s</td><td>%s</td><td>%s</td>
<td><form method="post" action="%u" class="inline"><input type="hidden" name="csrf" value="%s"><button name="action" value="cancel">Cancel</button></form></td></tr>
`, e.Since, e.Priority, e.Run, e.ETA, e.Href, csrf)
	}
	h.raw("</tbody>\n</table>\n")
}

// notes say what "Tested on" and the estimates mean.
func (p queuePage) notes(h *writer) {
	h.raw(`<p class="note">Tested on: what a pull request's test run builds on, the target branch and the pull requests ahead of it in the run`)
	if p.Parallel {
		h.raw(`; in PARALLEL mode only those whose impacted targets overlap its own, so pull requests that touch different targets test side by side`)
	}
	h.f(`.</p>
<p class="note">Estimated time to merge: the queue tests %d pull request(s) at a time; `, p.Concurrency)
	if p.ETARuns > 0 {
		h.f(`a run took %s (the median of %d runs that ended in the last 24 hours)`, p.ETARun, p.ETARuns)
	} else {
		h.raw(`no run ended in the last 24 hours, so there is no estimate`)
	}
	h.f(`. A pull request with <i>n</i> ahead of it merges after ⌊<i>n</i> / %d⌋ + 1 runs, less the time it has been testing. Batches, bisection and failures ahead are not foreseen.</p>
`, p.Concurrency)
}

func (p queuePage) notReady(h *writer) {
	h.raw("\n<h2>Not ready</h2>\n" + `<table><thead><tr><th>Pull request</th><th>Why</th><th>Since</th></tr></thead><tbody>`)
	for _, e := range p.NotReady {
		h.f("\n"+`<tr><td><a href="%u">#%d %s</a></td><td>`, e.Href, e.N, e.Title)
		h.coded(e.Reason)
		h.raw(`</td><td>`)
		h.time(e.At)
		h.raw(`</td></tr>`)
	}
	h.raw("\n</tbody></table>")
}

func (p queuePage) finished(h *writer) {
	if len(p.Finished) == 0 {
		h.raw(`<p class="note">No pull request finished in the last 24 hours.</p>`)
		return
	}
	h.raw(`
<table>
<thead><tr><th>Pull request</th><th>Outcome</th><th>Why</th><th>At</th></tr></thead>
<tbody>`)
	for _, e := range p.Finished {
		h.f("\n"+`<tr><td><a href="%u">#%d %s</a></td>`, e.Href, e.N, e.Title)
		h.state("td", e.State)
		h.raw(`<td>`)
		h.coded(e.Reason)
		h.raw(`</td><td>`)
		h.time(e.At)
		h.raw("</td></tr>\n")
	}
	h.raw("</tbody>\n</table>\n")
}
