// Package localport picks a free port on the loopback for a server started
// later: DynamoDB Local, or a test's server.
package localport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Free returns a port no program listens on. It lies below the range the
// system hands out to outgoing connections and to listeners on port 0:
// the server binds it seconds later (a JVM's start), and a port of that
// range could be taken by then by any connection made meanwhile, which is
// many on a machine running a test suite. Below it, only a listener that
// names the port takes it.
func Free() (int, error) {
	low := 32768 // Linux's default start of the range
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				low = n
			}
		}
	}
	for range 100 {
		port := low - 1 - rand.IntN(min(low-1025, 8192))
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			ln.Close()
			return port, nil
		}
	}
	return 0, errors.New("localport: no free port on 127.0.0.1 below " + strconv.Itoa(low))
}
