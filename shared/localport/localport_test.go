package localport

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFreeIsBelowTheEphemeralRange: the port is free (a listener takes
// it) and lies below the range outgoing connections take theirs from.
func TestFreeIsBelowTheEphemeralRange(t *testing.T) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		low, _ = strconv.Atoi(strings.Fields(string(b))[0])
	}
	for range 20 {
		port, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if port >= low || port <= 1024 {
			t.Errorf("port %d, want one in [1025, %d)", port, low)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		ln.Close()
	}
}
