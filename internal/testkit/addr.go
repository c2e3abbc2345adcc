package testkit

import (
	"testing"

	"github.com/mainguard/mainguard/shared/localport"
)

// FreeAddr is a free loopback address, host:port, for a server the test
// starts and that binds it later (localport.Addr: below the ports outgoing
// connections take, and reserved against other callers); it fails tb when
// there is none.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	addr, err := localport.Addr()
	if err != nil {
		tb.Fatal(err)
	}
	return addr
}
