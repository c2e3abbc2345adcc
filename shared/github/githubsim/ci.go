package githubsim

import "strings"

// CI plays a CI system against the simulated GitHub, for tests and the
// local demo: it reports one commit status on each merge-queue test branch
// head (trunk-merge/...) and each open pull request's head it has not
// judged yet — as a CI on pull requests does, and as branch protection
// wants before GitHub merges a pull request.
type CI struct {
	Sim     *Server
	Context string // the status context it reports, e.g. "ci"
	judged  map[string]bool
}

// Judge reports Context on every test branch head and open pull request
// head of repo ("owner/name") not judged before: "failure" when the head
// holds one of the files in bad, else "success".
func (c *CI) Judge(repo string, bad ...string) error {
	if c.judged == nil {
		c.judged = map[string]bool{}
	}
	branches, err := c.Sim.Branches(repo)
	if err != nil {
		return err
	}
	prs, err := c.Sim.PullRequests(repo)
	if err != nil {
		return err
	}
	var heads []string
	for _, b := range branches {
		if strings.HasPrefix(b, "trunk-merge/") {
			if head, err := c.Sim.BranchHead(repo, b); err == nil && head != "" {
				heads = append(heads, head) // "" : deleted meanwhile
			}
		}
	}
	for _, p := range prs {
		if p.State == "open" && !strings.HasPrefix(p.HeadRef, "trunk-merge/") {
			heads = append(heads, p.HeadSHA)
		}
	}
	for _, head := range heads {
		if c.judged[head] {
			continue // reported on already
		}
		state := "success"
		for _, f := range bad {
			if _, err := c.Sim.FileAt(repo, head, f); err == nil {
				state = "failure"
			}
		}
		if err := c.Sim.SetStatus(repo, head, c.Context, state, "", "https://ci.example/"+head[:7]); err != nil {
			return err
		}
		c.judged[head] = true
	}
	return nil
}

// Report sets Context to state on one head and counts that head judged:
// a CI whose run of that head went its own way, a flaky failure.
func (c *CI) Report(repo, head, state string) error {
	if c.judged == nil {
		c.judged = map[string]bool{}
	}
	if err := c.Sim.SetStatus(repo, head, c.Context, state, "", "https://ci.example/"+head[:min(7, len(head))]); err != nil {
		return err
	}
	c.judged[head] = true
	return nil
}
