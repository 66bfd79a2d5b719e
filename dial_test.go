package kafkabpl

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/internal/testdial"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// metadataCounter counts the Metadata requests a client writes.
type metadataCounter struct{ n atomic.Int64 }

func (m *metadataCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == kmsg.Metadata.Int16() && err == nil {
		m.n.Add(1)
	}
}

// TestBrokerDialerWatch: a refusal by an address reached before makes the
// dialer ask its client for metadata every 100 ms until a second has
// passed without another refusal, then stop; closing the dialer stops it,
// and returns once the watch's goroutine has.
func TestBrokerDialerWatch(t *testing.T) {
	t.Parallel()
	var count metadataCounter
	cl, err := kgo.NewClient(kgo.SeedBrokers(newCluster(t).Servers()), kgo.WithHooks(&count), kgo.MetadataMinAge(metadataRefreshEvery))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	d := newBrokerDialer(defaultConfig())
	d.setClient(cl)
	conn, err := d.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	ln.Close() // the broker is killed
	// What the client's retry backoff asks.
	watching := d.refusing

	before := count.n.Load()
	if _, err := d.DialContext(context.Background(), "tcp", addr); err == nil {
		t.Fatal("dialled a closed listener")
	}
	if !watching() {
		t.Fatal("no watch after a refusal")
	}
	waitFor(t, "the watch ended, a second after the refusal", func() bool { return !watching() })
	asked := count.n.Load() - before
	t.Logf("%d metadata requests in the watch", asked)
	if asked < 3 || asked > 15 {
		t.Errorf("%d metadata requests in the watch; want about 10 (one every 100 ms for a second)", asked)
	}
	time.Sleep(300 * time.Millisecond)
	if after := count.n.Load() - before; after != asked {
		t.Errorf("%d metadata requests after the watch ended; want none", after-asked)
	}

	if _, err := d.DialContext(context.Background(), "tcp", addr); err == nil {
		t.Fatal("dialled a closed listener")
	}
	d.close()
	if watching() {
		t.Error("the watch still runs once close has returned")
	}
}

// TestSetDialer checks that a Library's clients connect with the dialer
// SetDialer gave (here one that counts, over the loopback guard's), and
// with the default once it is unset.
func TestSetDialer(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	dials := countDials(lib)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p, []string{"t"}, unkeyed("v")...)
	if dials.Load() == 0 {
		t.Fatal("the producer did not dial with the Library's dialer")
	}
	lib.SetDialer(nil)
	before := dials.Load()
	p2 := must[string](t)(lib.Create(ctx, Producer, servers))
	send(t, lib, p2, []string{"t"}, unkeyed("v")...)
	if dials.Load() != before {
		t.Errorf("a producer made after SetDialer(nil) dialed with the old dialer")
	}
}

// TestSetDialerAdminConfig checks that an admin call given a config, not
// an admin handle, dials with the Library's dialer too: the handle made
// for the call once dialed with a net.Dialer of its own, which inside a
// streamtest (a virtual network) reached for a real localhost:9092.
func TestSetDialerAdminConfig(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	lib := newLib(t)
	dials := countDials(lib)
	if _, err := lib.ListTopics(testCtx(t), map[string]any{"servers": servers}); err != nil {
		t.Fatal(err)
	}
	if dials.Load() == 0 {
		t.Error("an admin call given a config did not dial with the Library's dialer")
	}
}

// countDials gives lib a dialer that counts its dials over the loopback
// guard's, and returns the count.
func countDials(lib *Library) *atomic.Int64 {
	var dials atomic.Int64
	lib.SetDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return testdial.Dial(ctx, network, addr)
	})
	return &dials
}
