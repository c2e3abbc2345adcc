package dynamolocal

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// tailBuffer keeps the last max bytes written to it: the end of java's
// output, where a failure explains itself.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// listeners reports whether process pid listens on the TCP port, and
// whether another socket does too. Java binds the port on every address;
// a program that had bound it on 127.0.0.1 with SO_REUSEADDR (as Go's
// listeners do) keeps it there, and calls to 127.0.0.1 reach that program,
// not DynamoDB Local, although java started without complaint. Where /proc
// cannot tell (another system), it reports ours and no other.
func listeners(pid, port int) (ours, others bool) {
	var inodes []string
	readable := false
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		readable = true
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) >= 10 && fields[3] == "0A" && strings.HasSuffix(fields[1], fmt.Sprintf(":%04X", port)) { // 0A: LISTEN
				inodes = append(inodes, fields[9])
			}
		}
		f.Close()
	}
	if !readable {
		return true, false
	}
	if len(inodes) == 0 { // nothing listens yet: no need to look at java's files
		return false, false
	}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	mine := map[string]bool{}
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && strings.HasPrefix(link, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	for _, inode := range inodes {
		if mine[inode] {
			ours = true
		} else {
			others = true
		}
	}
	return ours, others
}
