package main

import (
	"errors"
	"net"
	"os"
	"testing"
)

// listenerPID finds the process that owns a listening socket: here, this
// test's own; and rss reads its memory.
func TestListenerPIDAndRSS(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	pid, err := listenerPID(port)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("listenerPID(%d) = %d, %v; want this process, %d", port, pid, err, os.Getpid())
	}
	cur, peak, err := rss(pid)
	if err != nil || cur <= 0 || peak < cur {
		t.Fatalf("rss(%d) = %d KiB, peak %d KiB, %v", pid, cur, peak, err)
	}
	l.Close()
	if _, err := listenerPID(port); !errors.Is(err, errNoProcess) {
		t.Fatalf("listenerPID after close: %v, want errNoProcess", err)
	}
}
