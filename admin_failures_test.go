package kafkabpl

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
)

// Tests of admin calls that cannot succeed: brokers that cannot be reached
// or do not answer, and a closed Library.

// TestAdminUnreachable checks that admin calls to a server nobody listens
// on fail with a Timeout error naming it, within the request-timeout.
func TestAdminUnreachable(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	cfg := map[string]any{"servers": "127.0.0.1:1", "request-timeout": 300} // loopback: nothing listens on port 1
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, cfg))
	calls := []struct {
		fn   string
		call func() error
	}{
		{"kafka-list-topics", func() error { _, err := lib.ListTopics(ctx, a); return err }},
		{"kafka-list-topics", func() error { _, err := lib.ListTopics(ctx, cfg); return err }},
		{"kafka-create-topics", func() error { _, err := lib.CreateTopics(ctx, a, []string{"t"}, TopicOptions{}); return err }},
		{"kafka-delete-topics", func() error { _, err := lib.DeleteTopics(ctx, cfg, []string{"t"}); return err }},
		{"kafka-describe-topics", func() error { _, err := lib.DescribeTopics(ctx, a); return err }},
		{"kafka-describe-cluster", func() error { _, err := lib.DescribeCluster(ctx, cfg); return err }},
		{"kafka-create-partitions", func() error { _, err := lib.CreatePartitions(ctx, a, "t", 2); return err }},
		{"kafka-list-groups", func() error { _, err := lib.ListGroups(ctx, a); return err }},
		{"kafka-describe-group", func() error { _, err := lib.DescribeGroup(ctx, cfg, "g"); return err }},
	}
	for _, cl := range calls {
		start := time.Now()
		err := cl.call()
		elapsed := time.Since(start)
		if !errors.Is(err, ErrTimeout) || !strings.HasPrefix(err.Error(), cl.fn+": ") || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("%s: %v (%s), want a Timeout naming 127.0.0.1:1", cl.fn, err, ErrorType(err))
		}
		if elapsed > 3*time.Second {
			t.Errorf("%s took %v with a 300 ms request-timeout", cl.fn, elapsed)
		}
	}
}

// TestAdminSilentBroker checks a server that accepts connections and never
// answers: the call ends at the request-timeout with a Timeout error.
func TestAdminSilentBroker(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	lib := newLib(t)
	cfg := map[string]any{"servers": ln.Addr().String(), "request-timeout": 300}
	for _, target := range []any{cfg, must[string](t)(lib.Create(testCtx(t), Admin, cfg))} {
		start := time.Now()
		_, err := lib.DescribeCluster(testCtx(t), target)
		elapsed := time.Since(start)
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "no answer from "+ln.Addr().String()+" within 300ms") {
			t.Errorf("silent broker: %v (%s)", err, ErrorType(err))
		}
		if elapsed < 250*time.Millisecond || elapsed > 3*time.Second {
			t.Errorf("took %v with a 300 ms request-timeout", elapsed)
		}
	}
}

// TestAdminClosedLibrary checks admin calls after Close.
func TestAdminClosedLibrary(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := New()
	ctx := context.Background()
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	if err := lib.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, target := range []any{a, servers} {
		if _, err := lib.ListTopics(ctx, target); !errors.Is(err, ErrClosed) {
			t.Errorf("ListTopics(%v) after Close: %v, want ErrClosed", target, err)
		}
	}
}
