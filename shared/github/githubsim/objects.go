package githubsim

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// objectReader is one `git cat-file --batch` kept running per repository.
// It reads the objects the sim asks about by full sha (a commit, its tree,
// a file at a commit), which `git show`, `git rev-parse` and `git cat-file`
// each answered in a process of their own, a fifth of a queue test's git
// processes. An object never changes, and git looks for one it has not
// seen again on every request, so the long-lived process answers as a
// fresh one would. Branch names never go to it: only full shas do.
type objectReader struct {
	mu  sync.Mutex // one request and its answer at a time
	git gitProcess
}

// object is what git has under name (a sha, sha^{tree}, sha:path): the
// object's sha, type and content; found is false when there is no such
// object.
type object struct {
	sha, typ string
	content  []byte
}

// read asks git for the object that name names. name must start with a full
// sha; the caller checks.
func (o *objectReader) read(g *gitRepo, name string) (obj object, found bool, err error) {
	if strings.ContainsAny(name, "\n\x00") {
		return obj, false, fmt.Errorf("git cat-file: %q is not an object name", name)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	err = o.git.do(g, []string{"cat-file", "--batch"}, name+"\n", func(r *bufio.Reader) (err error) {
		obj, found, err = readObject(r, name)
		return err
	})
	return obj, found, err
}

// readObject reads one answer of git cat-file --batch: "<sha> <type>
// <size>", the content and a newline; or "<name> missing" (or
// "ambiguous").
func readObject(r *bufio.Reader, name string) (obj object, found bool, err error) {
	header, err := r.ReadString('\n')
	if err != nil {
		return obj, false, err
	}
	header = strings.TrimSuffix(header, "\n")
	if rest, ok := strings.CutPrefix(header, name+" "); ok && (rest == "missing" || rest == "ambiguous") {
		return obj, false, nil
	}
	f := strings.Fields(header)
	size := -1
	if len(f) == 3 {
		size, _ = strconv.Atoi(f[2])
	}
	if size < 0 {
		return obj, false, fmt.Errorf("answered %q", header)
	}
	content := make([]byte, size+1) // and the newline after it
	if _, err := io.ReadFull(r, content); err != nil {
		return obj, false, err
	}
	return object{sha: f[0], typ: f[1], content: content[:size]}, true, nil
}

func (o *objectReader) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.git.close()
}

// parseCommit reads a raw commit object into the fields `git show -s`
// gives for %T, %P, %an, %ae, %s and %B.
func parseCommit(sha string, raw []byte) (commitInfo, error) {
	c := commitInfo{SHA: sha}
	headers, message, ok := strings.Cut(string(raw), "\n\n")
	if !ok {
		headers, message = strings.TrimSuffix(string(raw), "\n"), ""
	}
	for _, line := range strings.Split(headers, "\n") {
		key, value, _ := strings.Cut(line, " ")
		switch key {
		case "tree":
			c.Tree = value
		case "parent":
			c.Parents = append(c.Parents, value)
		case "author":
			// "Name <email> seconds zone"
			name, rest, ok := strings.Cut(value, "<")
			email, _, ok2 := strings.Cut(rest, ">")
			if !ok || !ok2 {
				return c, fmt.Errorf("commit %s: author %q", sha, value)
			}
			c.AuthorName, c.AuthorEmail = strings.TrimRight(name, gitSpace), email
		}
	}
	if c.Tree == "" {
		return c, fmt.Errorf("commit %s has no tree", sha)
	}
	c.Subject = subject(message)
	c.Message = strings.TrimSpace(message)
	return c, nil
}

// gitSpace is what git's isspace() takes for white space.
const gitSpace = " \t\n\v\f\r"

// subject is git's %s: the message's first paragraph (after any blank
// lines), its lines stripped of trailing white space and joined by spaces.
func subject(message string) string {
	lines := strings.Split(message, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	var s []string
	for _, l := range lines {
		l = strings.TrimRight(l, gitSpace)
		if l == "" {
			break
		}
		s = append(s, l)
	}
	return strings.Join(s, " ")
}
