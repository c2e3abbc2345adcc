package githubsim

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The web pages: what a person's browser opens from the links of the web
// app ("on its host"), at GitHub's paths on the server's own address. Plain,
// read-only HTML of the simulated state, with no token, for the local demo;
// GitHub's own pages are richer.
//
//	GET /{o}/{r}                 the repository: its branches and pull requests
//	GET /{o}/{r}/pull/{n}        a pull request, its head's statuses
//	GET /{o}/{r}/commit/{sha}    a commit, its statuses and check runs
//	GET /{o}/{r}/tree/{branch}   a branch: its latest commits

type webView struct {
	Title string
	Lines []webLine
}

type webLine struct{ Text, Href string }

var webTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} · simulated GitHub</title></head>
<body><p><i>Simulated GitHub</i></p><h1>{{.Title}}</h1>
<ul>{{range .Lines}}<li>{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</li>
{{end}}</ul></body></html>
`))

// webPage serves seg, a path outside the REST API's /repos/ and /app/, when
// it is one of the pages; false when it is not (the API's 404 follows).
func (s *Server) webPage(w http.ResponseWriter, r *http.Request, seg []string) bool {
	if r.Method != http.MethodGet || len(seg) < 2 || seg[0] == "repos" || seg[0] == "app" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(seg[0]+"/"+seg[1])]
	if rp == nil {
		return false
	}
	base := "/" + url.PathEscape(rp.owner) + "/" + url.PathEscape(rp.name)
	commit := func(sha string) string { return base + "/commit/" + url.PathEscape(sha) }
	var v webView
	switch rest := seg[2:]; {
	case len(rest) == 0:
		v.Title = rp.fullName()
		branches, _ := rp.git.branches()
		for _, b := range branches {
			v.Lines = append(v.Lines, webLine{"branch " + b, base + "/tree/" + url.PathEscape(b)})
		}
		for _, p := range rp.sortedPulls() {
			v.Lines = append(v.Lines, webLine{fmt.Sprintf("#%d %s (%s)", p.number, p.title, pullState(p)), base + "/pull/" + strconv.Itoa(p.number)})
		}
	case len(rest) == 2 && rest[0] == "pull":
		n, _ := strconv.Atoi(rest[1])
		p := rp.pulls[n]
		if p == nil {
			return false
		}
		v.Title = fmt.Sprintf("#%d %s", p.number, p.title)
		v.Lines = []webLine{
			{Text: pullState(p) + ", by " + p.author},
			{Text: p.headRef + " into " + p.baseRef},
			{"head " + p.headSHA, commit(p.headSHA)},
		}
		if p.mergeCommitSHA != "" {
			v.Lines = append(v.Lines, webLine{"merged as " + p.mergeCommitSHA, commit(p.mergeCommitSHA)})
		}
		v.Lines = append(v.Lines, s.checkLines(rp, p.headSHA)...)
	case len(rest) == 2 && rest[0] == "commit":
		sha := rp.git.resolve(rest[1])
		c, err := rp.git.commit(sha)
		if sha == "" || err != nil {
			return false
		}
		v.Title = c.Subject
		v.Lines = []webLine{{Text: "commit " + c.SHA + " by " + c.AuthorName}}
		for _, parent := range c.Parents {
			v.Lines = append(v.Lines, webLine{"parent " + parent, commit(parent)})
		}
		v.Lines = append(v.Lines, s.checkLines(rp, sha)...)
	case len(rest) >= 2 && rest[0] == "tree":
		branch := strings.Join(rest[1:], "/")
		head := rp.git.branchHead(branch)
		if head == "" {
			return false
		}
		v.Title = "branch " + branch
		cs, _ := rp.git.log(head)
		for i, c := range cs {
			if i == 20 {
				break
			}
			v.Lines = append(v.Lines, webLine{c.SHA[:7] + " " + c.Subject, commit(c.SHA)})
		}
	default:
		return false
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = webTemplate.Execute(w, v)
	return true
}

// checkLines are the statuses and check runs on sha, latest last, each
// linked to its target or details address.
func (s *Server) checkLines(rp *repo, sha string) []webLine {
	var out []webLine
	for _, st := range rp.statuses[sha] {
		out = append(out, webLine{"status " + st.context + ": " + st.state, st.url})
	}
	for _, c := range rp.checks[sha] {
		state := c.status
		if c.conclusion != "" {
			state = c.conclusion
		}
		out = append(out, webLine{"check run " + c.name + ": " + state, c.detailsURL})
	}
	return out
}

func pullState(p *pull) string {
	switch {
	case p.merged:
		return "merged"
	case p.draft && p.state == "open":
		return "draft"
	}
	return p.state
}
