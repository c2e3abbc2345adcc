package web

// html writes an organization's home: its queues, then its repositories.
func (p orgPage) html(h *writer, v view) {
	h.f("\n<h1>%s</h1>\n<h2>Merge queues</h2>\n", v.Org)
	if p.Pager.Paged() {
		h.raw(`<p class="note">The queues of this page's repositories.</p>`)
	}
	h.raw("\n")
	switch {
	case len(p.Queues) > 0:
		h.raw(`
<table>
<thead><tr><th>Repository</th><th>Branch</th><th>State</th><th class="num">Depth</th><th class="num">Testing</th><th class="num">Merged (24 h)</th><th class="num">Failed (24 h)</th></tr></thead>
<tbody>`)
		for _, q := range p.Queues {
			h.f("\n"+`<tr><td><a href="%u">%s</a></td><td>%s</td>`, q.Href, q.Repo, q.Branch)
			h.state("td", q.State)
			h.f(`<td class="num">%d</td><td class="num">%d</td><td class="num">%d</td><td class="num">%d</td></tr>`+"\n",
				q.Depth, q.Testing, q.Merged24h, q.Failed24h)
		}
		h.raw("</tbody>\n</table>\n")
	case p.Pager.Paged():
		h.raw(`<p class="note">None on this page.</p>` + "\n")
	default:
		h.raw(`<p class="note">No merge queue yet (createQueue makes one).</p>`)
	}
	h.raw("\n<h2>Repositories</h2>\n")
	if len(p.Repos) > 0 {
		h.raw(`
<table>
<thead><tr><th>Repository</th><th class="num">Flaky</th><th class="num">Broken</th><th class="num">Quarantined</th><th>Quarantine</th></tr></thead>
<tbody>`)
		for _, r := range p.Repos {
			h.f("\n"+`<tr><td><a href="%u">%s</a></td><td class="num">%d</td><td class="num">%d</td><td class="num">%d</td><td>%s</td></tr>`+"\n",
				r.Href, r.Repo, r.Flaky, r.Broken, r.Quarantined, r.quarantine())
		}
		h.raw("</tbody>\n</table>\n")
	} else {
		h.raw(`<p class="note">No repository yet: upload test results or create a queue.</p>`)
	}
	h.raw("\n")
	h.pager(p.Pager)
	h.raw("\n")
}

// quarantine says whether and how the repository quarantines.
func (r repoRow) quarantine() string {
	switch {
	case !r.QuarantineOn:
		return "off"
	case r.AutoQuarantine:
		return "on (automatic)"
	default:
		return "on (overrides only)"
	}
}
