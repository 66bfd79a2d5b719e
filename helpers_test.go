package kafkabpl

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
)

// newCluster starts an in-process cluster with the embedded package, as
// the kafkabpl command does, on free ports of 127.0.0.1, and closes it at
// the end of the test. With no options it behaves like a stock broker: one
// broker, topics created on first use with one partition. Tests add what
// they need: Brokers(3), NoAutoCreate() (what exists is what the test
// made), Partitions(n) with Topics(...), KfakeOptions(...) for SASL or TLS.
// Kfake() reaches kfake's control functions (faults, moving leaders).
func newCluster(t testing.TB, opts ...embedded.Option) *embedded.Cluster {
	t.Helper()
	c, err := embedded.Start(append([]embedded.Option{embedded.Port(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// The package's tests dial only loopback addresses: a config a test or a
// fuzzer makes up must never reach another host.
func init() {
	var d net.Dialer
	testDialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("tests dial loopback addresses only, not %s", addr)
		}
		if outages.refused(addr) {
			// What dialing a killed broker's port gives.
			return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		}
		conn, err := d.DialContext(ctx, network, addr)
		if err == nil {
			outages.opened(addr, conn)
		}
		return conn, err
	}
}

// outages lets a test take one of its brokers down for the package's
// clients, as a kill would: connections to it are closed and new dials
// refused until the test brings it back. Only the addresses a test watches
// (its own cluster's) are affected or tracked.
var outages = &outageSet{watched: map[string]*outage{}}

type outageSet struct {
	mu      sync.Mutex
	watched map[string]*outage
}

type outage struct {
	down    bool
	conns   []net.Conn
	refuses int // dials refused
}

// watch starts tracking the connections to addrs; it must be called
// before the clients that a test takes down are created.
func (o *outageSet) watch(t testing.TB, addrs ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, a := range addrs {
		o.watched[a] = &outage{}
	}
	t.Cleanup(func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, a := range addrs {
			delete(o.watched, a)
		}
	})
}

// down closes every connection to addr and refuses new ones, until up.
func (o *outageSet) down(addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.watched[addr]
	w.down = true
	for _, c := range w.conns {
		c.Close()
	}
	w.conns = nil
}

func (o *outageSet) up(addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.watched[addr].down = false
}

func (o *outageSet) refused(addr string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.watched[addr]
	if w == nil || !w.down {
		return false
	}
	w.refuses++
	return true
}

// refuses is how many dials to addr were refused.
func (o *outageSet) refuses(addr string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.watched[addr].refuses
}

func (o *outageSet) opened(addr string, c net.Conn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w := o.watched[addr]; w != nil {
		w.conns = append(w.conns, c)
	}
}

// newLib returns a Library closed at the end of the test.
func newLib(t testing.TB) *Library {
	t.Helper()
	lib := New()
	t.Cleanup(func() {
		if err := lib.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return lib
}

// testCtx is a context that ends well before the test binary's timeout.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor checks cond every 10 ms until it holds, or fails the test after
// 20 s, saying what it waited for.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitInside waits until a goroutine the test started (not one of another
// test running in parallel) is inside the package's function fn, named as
// stack traces name it, such as "(*consumerState).fetch": a call that
// blocks, caught while it is in flight.
func waitInside(t *testing.T, fn string) {
	t.Helper()
	in := "\ngithub.com/brain4it/kafkabpl." + fn + "("
	by := "\ncreated by github.com/brain4it/kafkabpl." + t.Name() + " in goroutine "
	waitFor(t, fn+" to run", func() bool {
		buf := make([]byte, 1<<16)
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, in) && strings.Contains(g, by) {
				return true
			}
		}
		return false
	})
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestDialGuard(t *testing.T) {
	t.Parallel()
	// A documentation address (RFC 5737): refused before any dial.
	if _, err := testDialer(context.Background(), "tcp", "192.0.2.1:9092"); err == nil || !strings.Contains(err.Error(), "loopback addresses only") {
		t.Errorf("dial of a non-loopback address: %v", err)
	}
}

// equalValues reports whether two BPL values are equal, as List.Equal
// compares elements.
func equalValues(a, b any) bool { return value.NewList(a).Equal(value.NewList(b)) }
