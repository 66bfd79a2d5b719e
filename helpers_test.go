package kafkabpl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// newCluster starts an in-process kfake cluster that behaves like a stock
// broker (topics created on first use, one partition) and returns its
// servers, comma-joined. It listens on 127.0.0.1 only.
func newCluster(t testing.TB, opts ...kfake.Opt) string {
	t.Helper()
	c := newKfake(t, opts...)
	return strings.Join(c.ListenAddrs(), ",")
}

func newKfake(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	base := []kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1)}
	c, err := kfake.NewCluster(append(base, opts...)...)
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
