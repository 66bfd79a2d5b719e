package stream

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
)

// The package's tests share the module's test kit (internal/testkit).
// Importing it guards every dial of the test binary: clients reach
// loopback addresses only.
var (
	newCluster = testkit.NewCluster // an embedded cluster for the test
	testCtx    = testkit.Ctx        // ends well before the test binary's timeout
	waitFor    = testkit.WaitFor    // a condition, checked every 10 ms for 20 s
)

// syncBuffer is a log output the test reads while streams write it.
type syncBuffer = testkit.SyncBuffer

// must returns a function that returns a call's value, failing the test
// on its error.
func must[T any](t testing.TB) func(T, error) T { return testkit.Must[T](t) }

// newLib returns a Library closed at the end of the test.
func newLib(t testing.TB) *kafkabpl.Library {
	lib := kafkabpl.New()
	testkit.CloseAtEnd(t, lib)
	return lib
}

// send has producer p send msgs to each of topics, all delivered.
func send(t testing.TB, lib *kafkabpl.Library, p string, topics []string, msgs ...kafkabpl.Message) {
	t.Helper()
	n, err := lib.Send(testCtx(t), p, topics, msgs)
	if want := len(msgs) * len(topics); n != want || err != nil {
		t.Fatalf("send to %q: %d of %d delivered: %v", topics, n, want, err)
	}
}

// groupName is a fresh name for a test's own group.
func groupName(what string) string { return fmt.Sprintf("%s-%08x", what, rand.Uint32()) }

// testConfig is a config as a stream reads it.
func testConfig(t testing.TB, config map[string]any) *kafkabpl.ClientConfig {
	t.Helper()
	return must[*kafkabpl.ClientConfig](t)(kafkabpl.New().ParseConfig("test", config))
}

// streamOf returns the running stream behind handle id.
func streamOf(t testing.TB, lib *kafkabpl.Library, id string) *stream {
	t.Helper()
	h, release, err := lib.Acquire(id, kafkabpl.Stream)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	return h.Extension().(*stream)
}

// startTest starts a stream made by newStream, for a test that sets its
// parts up by hand: it is registered in lib, but not run.
func startTest(t testing.TB, lib *kafkabpl.Library, cfg *kafkabpl.ClientConfig, spec Spec) *stream {
	t.Helper()
	h := lib.NewHandle(kafkabpl.Stream, cfg)
	s := must[*stream](t)(newStream(h, spec, func(string) {}))
	if err := lib.Register(h, s); err != nil {
		t.Fatal(err)
	}
	return s
}

var _ = context.Background
