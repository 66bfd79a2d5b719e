package kafkabpl

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// The package's tests share the module's test kit with package functions'
// (internal/testkit). Importing it guards every dial of the test binary:
// clients reach loopback addresses only (see there).
var (
	// newCluster starts an embedded cluster for the test: see
	// [testkit.NewCluster].
	newCluster = testkit.NewCluster
	// testCtx is a context that ends well before the test binary's
	// timeout.
	testCtx = testkit.Ctx
	// waitFor checks a condition every 10 ms until it holds, or fails
	// the test after 20 s, saying what it waited for.
	waitFor = testkit.WaitFor
	// outages takes a test's own brokers down for the clients, as a kill
	// would.
	outages = testkit.Outages
	// wantFormat fails the test unless a value prints as wanted.
	wantFormat = testkit.WantFormat
)

// newLib returns a Library closed at the end of the test.
func newLib(t testing.TB) *Library {
	lib := New()
	testkit.CloseAtEnd(t, lib)
	return lib
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

// must returns a function that returns a call's value, failing the test
// on its error.
func must[T any](t testing.TB) func(T, error) T { return testkit.Must[T](t) }

// TestDialGuard checks that the package's tests dial through the loopback
// guard.
func TestDialGuard(t *testing.T) {
	t.Parallel()
	testkit.CheckGuard(t)
}

// equalValues reports whether two BPL values are equal, as List.Equal
// compares elements.
func equalValues(a, b any) bool { return value.NewList(a).Equal(value.NewList(b)) }

// pollUntil polls consumer c (only topics, when given) until want messages
// came in all, or fails the test after 20 s. It returns each topic's
// messages as a poll's BPL list holds them ([Polled.List]), concatenated
// over the polls.
func pollUntil(t testing.TB, lib *Library, c string, topics []string, want int) map[string]*value.List {
	t.Helper()
	return testkit.PollUntil(t, want, func() *value.List {
		var p *Polled
		var err error
		if topics != nil {
			p, err = lib.PollTopics(testCtx(t), c, topics, time.Second)
		} else {
			p, err = lib.Poll(testCtx(t), c, time.Second)
		}
		if err != nil {
			t.Fatal(err)
		}
		return p.List()
	})
}

// send sends msgs to topics with producer p, failing the test unless every
// one is delivered.
func send(t testing.TB, lib *Library, p string, topics []string, msgs ...Message) {
	t.Helper()
	if n, err := lib.Send(testCtx(t), p, topics, msgs); err != nil || n != len(msgs)*len(topics) {
		t.Fatalf("send to %q: %d of %d delivered, %v", topics, n, len(msgs)*len(topics), err)
	}
}

// unkeyed returns messages of the values vs, with no key.
func unkeyed(vs ...any) []Message {
	msgs := make([]Message, len(vs))
	for i, v := range vs {
		msgs[i].Value = v
	}
	return msgs
}

// sendValues sends msgs to topic with a producer of its own, all
// delivered.
func sendValues(t *testing.T, lib *Library, servers, topic string, msgs ...Message) {
	t.Helper()
	p := must[string](t)(lib.Create(testCtx(t), Producer, servers))
	send(t, lib, p, []string{topic}, msgs...)
	lib.Destroy(testCtx(t), p)
}
