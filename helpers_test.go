package kafkabpl

import (
	"context"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
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

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
