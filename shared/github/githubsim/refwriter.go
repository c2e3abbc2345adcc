package githubsim

import (
	"bufio"
	"fmt"
	"strings"
)

// refWriter is one `git update-ref --stdin` kept running per repository.
// Every branch write goes to it as a transaction of its own (start, the
// update or delete, commit), the same ref transaction a `git update-ref`
// process makes; a queue test moves branches a thousand times, and a
// process per move was a quarter of the sim's git processes. The caller
// holds the gitCache lock, which orders the writes.
type refWriter struct{ git gitProcess }

// write applies command ("update <ref> <sha>" or "delete <ref>") in a
// transaction of its own. When git refuses it, git ends (update-ref
// --stdin stops at its first error) and its message is the error.
func (w *refWriter) write(g *gitRepo, command string) error {
	if strings.ContainsAny(command, "\n\x00") {
		// One line is one command: a name with a newline would be more.
		return fmt.Errorf("git update-ref: %q is not a ref name", command)
	}
	return w.git.do(g, []string{"update-ref", "--stdin"}, "start\n"+command+"\ncommit\n", func(r *bufio.Reader) error {
		for _, want := range []string{"start: ok\n", "commit: ok\n"} {
			line, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			if line != want {
				return fmt.Errorf("answered %q", line)
			}
		}
		return nil
	})
}

// closeProcesses ends the repository's ref writer and object reader, if
// they run. A request after it starts one again, which ends when this
// process does (its stdin closes with it).
func (g *gitRepo) closeProcesses() {
	g.cache.mu.Lock()
	g.refw.git.close()
	g.cache.mu.Unlock()
	g.objects.close()
}
