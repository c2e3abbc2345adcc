package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHalfSentBodyIsDropped: a client that sends its headers and part of
// its body, then nothing, loses the connection once the read timeout has
// passed; it does not hold it for ever.
func TestHalfSentBodyIsDropped(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}), 300*time.Millisecond)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "PUT /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"+strings.Repeat("a", 10)); err != nil {
		t.Fatal(err)
	}
	// Far longer than the timeout: the server must have let go by then.
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	_, err = bufio.NewReader(conn).ReadString('\n')
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection was still held after a minute")
	}
}

// TestEarly413ReachesAClientThatSendsItAll: a client that sends a body over
// the limit whole, in pieces, before reading (as Python's and curl's do)
// reads the 413: the server answers early, then keeps reading and
// discarding instead of resetting the connection under the client.
func TestEarly413ReachesAClientThatSendsItAll(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge) // answered before the body is read
	}), time.Minute)
	go func() { _ = srv.Serve(lingering{ln}) }()
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size = 21 << 20
	if _, err := fmt.Fprintf(conn, "PUT /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size); err != nil {
		t.Fatal(err)
	}
	// In pieces with pauses, so that sending outlasts the half second a
	// server gives a client before closing on an unread body.
	chunk := make([]byte, 1<<20)
	for range size / len(chunk) {
		if _, err := conn.Write(chunk); err != nil {
			t.Fatalf("sending the body: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, "413") {
		t.Errorf("after sending it all: %q, %v; want the 413", status, err)
	}
}
