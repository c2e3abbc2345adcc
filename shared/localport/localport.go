// Package localport picks a free port on the loopback for a server started
// later: DynamoDB Local, or a test's server.
package localport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// reservedFor is how long a port handed out stays reserved for the
// process it was handed to: far longer than any server takes to bind it.
const reservedFor = 15 * time.Minute

// Free returns a port no program listens on, for a server that binds it
// later (seconds later, after a JVM's start, or minutes later in a test).
//
// It lies below the range the system hands out to outgoing connections and
// to listeners on port 0, where any connection made meanwhile could take
// it; below it, only a listener that names the port does. And it is
// reserved: a file per port under the temporary folder, made exclusively,
// keeps other processes calling Free (two test suites side by side) from
// handing out the same port before its server binds it.
func Free() (int, error) {
	low := ephemeralStart()
	dir := filepath.Join(os.TempDir(), "mainguard-ports")
	_ = os.MkdirAll(dir, 0o777)
	for range 200 {
		port := 1024 + rand.IntN(low-1024)
		if !reserve(filepath.Join(dir, strconv.Itoa(port))) {
			continue
		}
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			ln.Close()
			return port, nil
		}
	}
	return 0, errors.New("localport: no free port on 127.0.0.1 below " + strconv.Itoa(low))
}

// Addr is Free's port as a loopback address, host:port.
func Addr() (string, error) {
	port, err := Free()
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(port), nil
}

// ephemeralStart is the first port of the system's ephemeral range.
func ephemeralStart() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				return n
			}
		}
	}
	return 32768 // Linux's default
}

// reserve makes the reservation file, or takes over one older than
// reservedFor; it reports whether the port is this process's now.
func reserve(path string) bool {
	if info, err := os.Stat(path); err == nil {
		if time.Since(info.ModTime()) < reservedFor {
			return false
		}
		_ = os.Remove(path)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
	if err != nil {
		return false
	}
	return f.Close() == nil
}
