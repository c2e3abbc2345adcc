package githubsim

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// refWriter is one `git update-ref --stdin` kept running per repository.
// Every branch write goes to it as a transaction of its own (start, the
// update or delete, commit), the same ref transaction a `git update-ref`
// process makes; a queue test moves branches a thousand times, and a
// process per move was a quarter of the sim's git processes. The caller
// holds the gitCache lock, which orders the writes.
type refWriter struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr bytes.Buffer // read once the process has ended
}

// write applies command ("update <ref> <sha>" or "delete <ref>") in a
// transaction of its own. When git refuses it, git ends (update-ref
// --stdin stops at its first error) and its message is the error; the next
// write starts it again.
func (w *refWriter) write(g *gitRepo, command string) error {
	if strings.ContainsAny(command, "\n\x00") {
		// One line is one command: a name with a newline would be more.
		return fmt.Errorf("git update-ref: %q is not a ref name", command)
	}
	if w.cmd == nil {
		if err := w.start(g); err != nil {
			return err
		}
	}
	// A guard against a hang, as for every git command.
	hung := time.AfterFunc(gitTimeout, func() { _ = w.cmd.Process.Kill() })
	defer hung.Stop()
	_, err := io.WriteString(w.stdin, "start\n"+command+"\ncommit\n")
	for _, want := range []string{"start: ok\n", "commit: ok\n"} {
		if err != nil {
			break
		}
		var line string
		if line, err = w.stdout.ReadString('\n'); err == nil && line != want {
			err = fmt.Errorf("answered %q", line)
		}
	}
	if err != nil {
		return w.stop(command, err)
	}
	return nil
}

func (w *refWriter) start(g *gitRepo) error {
	w.stderr.Reset()
	cmd := g.command(context.Background(), nil, "update-ref", "--stdin")
	cmd.Stderr = &w.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git update-ref --stdin: %w", err)
	}
	w.cmd, w.stdin, w.stdout = cmd, stdin, bufio.NewReader(stdout)
	return nil
}

// stop ends the process after a failed write and returns what git said.
func (w *refWriter) stop(command string, err error) error {
	w.stdin.Close()
	waitErr := w.cmd.Wait()
	w.cmd = nil
	if msg := strings.TrimSpace(w.stderr.String()); msg != "" {
		return fmt.Errorf("git update-ref (%s): %s", command, msg)
	}
	return fmt.Errorf("git update-ref (%s): %w", command, errors.Join(err, waitErr))
}

// closeProcesses ends the repository's ref writer and object reader, if
// they run. A request after it starts one again, which ends when this
// process does (its stdin closes with it).
func (g *gitRepo) closeProcesses() {
	g.cache.mu.Lock()
	g.refw.close()
	g.cache.mu.Unlock()
	g.objects.close()
}

// close ends the process, if any: its stdin closed, git exits.
func (w *refWriter) close() {
	if w.cmd == nil {
		return
	}
	w.stdin.Close()
	_ = w.cmd.Wait()
	w.cmd = nil
}
