package testkit

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
)

func TestCheckGuard(t *testing.T) { CheckGuard(t) }

// TestOutage takes a listener's address down and up again: its
// connections are closed and its dials refused meanwhile.
func TestOutage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	addr := ln.Addr().String()
	Outages.Watch(t, addr)
	ctx := context.Background()
	conn, err := dialLoopback(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	Outages.Down(addr)
	if _, err := conn.Write([]byte("x")); err == nil {
		t.Error("a connection to a broker taken down still writes")
	}
	if _, err := dialLoopback(ctx, "tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) || Outages.Refuses(addr) != 1 {
		t.Errorf("dial while down: %v, %d refusals; want one, ECONNREFUSED", err, Outages.Refuses(addr))
	}
	Outages.Up(addr)
	conn, err = dialLoopback(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("dial once up: %v", err)
	}
	conn.Close()
}
