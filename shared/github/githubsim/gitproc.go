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

// gitProcess is a git command kept running on a repository, taking
// requests on its stdin and answering on its stdout: the ref writer
// (refwriter.go) and the object reader (objects.go). Its user orders the
// requests.
type gitProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr bytes.Buffer // read once the process has ended
}

// do sends request to git args (started if it is not running) and reads
// the answer with read. When that fails, git has refused the request and
// ended, or answered what read did not expect: git is stopped and the
// error carries its message; the next request starts it again.
func (p *gitProcess) do(g *gitRepo, args []string, request string, read func(*bufio.Reader) error) error {
	if p.cmd == nil {
		if err := p.start(g, args); err != nil {
			return err
		}
	}
	// A guard against a hang, as for every git command.
	proc := p.cmd.Process // stop clears p.cmd before the timer is stopped
	hung := time.AfterFunc(gitTimeout, func() { _ = proc.Kill() })
	defer hung.Stop()
	_, err := io.WriteString(p.stdin, request)
	if err == nil {
		err = read(p.stdout)
	}
	if err != nil {
		return p.stop(args, request, err)
	}
	return nil
}

func (p *gitProcess) start(g *gitRepo, args []string) error {
	p.stderr.Reset()
	cmd := g.command(context.Background(), nil, args...)
	cmd.Stderr = &p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	p.cmd, p.stdin, p.stdout = cmd, stdin, bufio.NewReader(stdout)
	return nil
}

// stop ends git after a failed request and returns what git said.
func (p *gitProcess) stop(args []string, request string, err error) error {
	p.stdin.Close()
	waitErr := p.cmd.Wait()
	p.cmd = nil
	what := fmt.Sprintf("git %s (%q)", strings.Join(args, " "), request)
	if msg := strings.TrimSpace(p.stderr.String()); msg != "" {
		return fmt.Errorf("%s: %s", what, msg)
	}
	return fmt.Errorf("%s: %w", what, errors.Join(err, waitErr))
}

// close ends git, if it runs: its stdin closed, git exits.
func (p *gitProcess) close() {
	if p.cmd == nil {
		return
	}
	p.stdin.Close()
	_ = p.cmd.Wait()
	p.cmd = nil
}
