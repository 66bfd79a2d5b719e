package kafkabpl

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestBrokerDialerRefusals: a refusal from an address that was reached
// before is temporary (a timeout, which kgo retries); one from an address
// never reached, or once the handle is closing, is final, as net's own.
func TestBrokerDialerRefusals(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	never, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	neverAddr := never.Addr().String()
	never.Close()

	d := newBrokerDialer(defaultConfig())
	ctx := context.Background()
	refusal := func(addr string) *net.OpError {
		t.Helper()
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			t.Fatalf("dial %s: connected; want it refused", addr)
		}
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial %s: %v; want a dial OpError that is ECONNREFUSED", addr, err)
		}
		return op
	}
	if op := refusal(neverAddr); op.Timeout() {
		t.Errorf("an address never reached: the refusal %v is temporary; want it final, so that a mistyped server is said at once", op)
	}
	conn, err := d.DialContext(ctx, "tcp", up)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	ln.Close() // the broker is killed
	if op := refusal(up); !op.Timeout() {
		t.Errorf("an address reached before: the refusal %v is final; want it temporary, so that kgo retries it", op)
	}
	d.close()
	if op := refusal(up); op.Timeout() {
		t.Errorf("while closing: the refusal %v is temporary; want it final", op)
	}
}
