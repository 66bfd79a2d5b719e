// Package testkit is what the tests of the module's packages share
// (package kafkabpl's, stream's and functions'): an embedded cluster per
// test, contexts and waits bounded well inside the test binary's timeout,
// fakes of failures (a flaky schema registry, refused produces), and the
// loopback guard.
//
// Importing it guards the test binary: its init sets [testdial.Dial] to a
// dialer that refuses any address outside 127.0.0.0/8 (and localhost), so
// that no config a test or a fuzzer makes up reaches another host, and
// that lets a test take one of its own brokers down ([Outages]). Only
// tests import it.
package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testdial"
	"github.com/brain4it/kafkabpl/value"
)

func init() { testdial.Dial = dialLoopback }

var dialer net.Dialer

// dialLoopback dials addr if it is a loopback address and Outages does
// not hold it down.
func dialLoopback(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("tests dial loopback addresses only, not %s", addr)
	}
	if Outages.refused(addr) {
		// What dialing a killed broker's port gives.
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	conn, err := dialer.DialContext(ctx, network, addr)
	if err == nil {
		Outages.opened(addr, conn)
	}
	return conn, err
}

// CheckGuard fails the test unless the test binary's clients dial through
// the loopback guard: a documentation address (RFC 5737) is refused before
// any dial.
func CheckGuard(t testing.TB) {
	t.Helper()
	if testdial.Dial == nil {
		t.Fatal("no dialer installed: the tests could dial any host")
	}
	if _, err := testdial.Dial(context.Background(), "tcp", "192.0.2.1:9092"); err == nil || !strings.Contains(err.Error(), "loopback addresses only") {
		t.Errorf("dial of a non-loopback address: %v", err)
	}
}

// NewCluster starts an in-process cluster with the embedded package, as
// the kafkabpl command does, on free ports of 127.0.0.1, and closes it at
// the end of the test. With no options it behaves like a stock broker: one
// broker, topics created on first use with one partition. Tests add what
// they need: Brokers(3), NoAutoCreate() (what exists is what the test
// made), Partitions(n) with Topics(...), KfakeOptions(...) for SASL or TLS.
// Kfake() reaches kfake's control functions (faults, moving leaders).
func NewCluster(t testing.TB, opts ...embedded.Option) *embedded.Cluster {
	t.Helper()
	c, err := embedded.Start(append([]embedded.Option{embedded.Port(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// CloseAtEnd closes c (a Library) at the end of the test, failing the
// test if that fails.
func CloseAtEnd(t testing.TB, c interface{ Close(context.Context) error }) {
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// Ctx is a context that ends well before the test binary's timeout.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// WaitLimit bounds WaitFor: long, since a busy CI machine (other test
// packages beside, or stress-ng) slows what a test waits for, a group's
// rebalance after a crash most, well past its quiet time; a test that
// passes never waits it out.
const WaitLimit = 60 * time.Second

// WaitFor checks cond every 10 ms until it holds, or fails the test after
// WaitLimit, saying what it waited for.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", WaitLimit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Must returns a function that returns a call's value, failing the test
// on its error: Must[string](t)(lib.Create(...)).
func Must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// WantFormat fails the test unless v prints as want (as [value.Format]
// prints it); what names v.
func WantFormat(t testing.TB, what string, v any, want string) {
	t.Helper()
	if got := value.Format(v); got != want {
		t.Errorf("%s\n got  %s\n want %s", what, got, want)
	}
}

// PollUntil calls poll, which polls a consumer and returns the result as
// a BPL list (each topic named, with its messages), until want messages
// came in all, or fails the test after WaitLimit. It returns each topic's
// messages, concatenated over the polls.
func PollUntil(t testing.TB, want int, poll func() *value.List) map[string]*value.List {
	t.Helper()
	got := map[string]*value.List{}
	n := 0
	deadline := time.Now().Add(WaitLimit)
	for n < want {
		if time.Now().After(deadline) {
			t.Fatalf("polled %d of %d messages: %v", n, want, got)
		}
		for name, msgs := range poll().All() {
			if got[name] == nil {
				got[name] = &value.List{}
			}
			for mn, m := range msgs.(*value.List).All() {
				got[name].AppendNamed(mn, m)
				n++
			}
		}
	}
	return got
}

// Outages lets a test take one of its brokers down for the clients, as a
// kill would: connections to it are closed and new dials refused until
// the test brings it back. Only the addresses a test watches (its own
// cluster's) are affected or tracked.
var Outages = &OutageSet{watched: map[string]*outage{}}

// OutageSet is the type of [Outages].
type OutageSet struct {
	mu      sync.Mutex
	watched map[string]*outage
}

type outage struct {
	down    bool
	conns   []net.Conn
	refuses int // dials refused
}

// Watch starts tracking the connections to addrs, until the test ends; it
// must be called before the clients that a test takes down are created.
func (o *OutageSet) Watch(t testing.TB, addrs ...string) {
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

// Down closes every connection to addr and refuses new ones, until Up.
func (o *OutageSet) Down(addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.watched[addr]
	w.down = true
	for _, c := range w.conns {
		c.Close()
	}
	w.conns = nil
}

// Up lets addr be dialed again.
func (o *OutageSet) Up(addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.watched[addr].down = false
}

// Refuses is how many dials to addr were refused.
func (o *OutageSet) Refuses(addr string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.watched[addr].refuses
}

func (o *OutageSet) refused(addr string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.watched[addr]
	if w == nil || !w.down {
		return false
	}
	w.refuses++
	return true
}

func (o *OutageSet) opened(addr string, c net.Conn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w := o.watched[addr]; w != nil {
		w.conns = append(w.conns, c)
	}
}
