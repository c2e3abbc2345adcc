package localport

import (
	"net"
	"strconv"
	"testing"
)

// TestFreeIsBelowTheEphemeralRange: the port is free (a listener takes
// it), lies below the range outgoing connections take theirs from, and is
// never handed out twice while reserved.
func TestFreeIsBelowTheEphemeralRange(t *testing.T) {
	seen := map[int]bool{}
	low := ephemeralStart()
	for range 200 {
		port, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if port >= low || port < 1024 {
			t.Errorf("port %d, want one in [1024, %d)", port, low)
		}
		if seen[port] {
			t.Errorf("port %d handed out twice", port)
		}
		seen[port] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		ln.Close()
	}
}
