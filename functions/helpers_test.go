package functions

import (
	"context"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
)

// The package's tests share the module's test kit with package kafkabpl's
// (internal/testkit): its cluster, contexts and waits. Importing it guards
// every dial of the test binary: the Library's clients reach loopback
// addresses only (see there), as in the root package's tests.

// TestDialGuard checks that the tests dial through the loopback guard.
func TestDialGuard(t *testing.T) { testkit.CheckGuard(t) }

// newLib returns a Library closed at the end of the test.
func newLib(t testing.TB) *kafkabpl.Library {
	lib := kafkabpl.New()
	testkit.CloseAtEnd(t, lib)
	return lib
}

// nv is a named argument in bpl calls.
type nv struct {
	name string
	v    any
}

// bplList builds a BPL argument list: nv values become named elements,
// Go values are converted as the package converts inputs, and what a BPL
// function returned (kafka-output's outputs) passes as it is.
func bplList(t testing.TB, args ...any) *value.List {
	t.Helper()
	l := &value.List{}
	for _, a := range args {
		name := ""
		if n, ok := a.(nv); ok {
			name, a = n.name, n.v
		}
		switch a.(type) {
		case *streamOutputs, *stateResult:
			l.AppendNamed(name, a)
			continue
		}
		v, err := value.FromGo(a)
		if err != nil {
			t.Fatal(err)
		}
		l.AppendNamed(name, v)
	}
	return l
}

// call runs the BPL function name of lib with args.
func call(t testing.TB, lib *kafkabpl.Library, name string, args ...any) (any, error) {
	t.Helper()
	f := Table(lib)[name]
	if f == nil {
		t.Fatalf("no BPL function %q", name)
	}
	return f(testkit.Ctx(t), bplList(t, args...))
}

// mustCall is call that fails the test on error.
func mustCall(t testing.TB, lib *kafkabpl.Library, name string, args ...any) any {
	t.Helper()
	v, err := call(t, lib, name, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// pollUntil polls consumer c with kafka-poll (with topics when given)
// until want messages came in all, or fails the test after 20 s. It
// returns each topic's messages, concatenated over the polls.
func pollUntil(t testing.TB, lib *kafkabpl.Library, c string, topics []string, want int) map[string]*value.List {
	t.Helper()
	return testkit.PollUntil(t, want, func() *value.List {
		if topics != nil {
			return mustCall(t, lib, "kafka-poll", c, topics, 1000).(*value.List)
		}
		return mustCall(t, lib, "kafka-poll", c, 1000).(*value.List)
	})
}

// goFunc is a BPL function value written in Go, as a runtime hands one to
// the library.
type goFunc func(ctx context.Context, args *value.List) (any, error)

func (f goFunc) Call(ctx context.Context, args *value.List) (any, error) { return f(ctx, args) }

// returning is a transform that ignores its input and gives v.
func returning(v any) goFunc {
	return func(context.Context, *value.List) (any, error) { return v, nil }
}

// inputRecord returns a record as a stream's transform gets one, read
// from a cluster of the test's own with the default (String)
// deserializers: topic "in", partition 0, offset 0, key "k", value "v",
// no headers.
func inputRecord(t testing.TB) *kafkabpl.Record {
	t.Helper()
	servers := testkit.NewCluster(t).Servers()
	lib := newLib(t)
	ctx := testkit.Ctx(t)
	p := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	testkit.Must[int](t)(lib.Send(ctx, p, []string{"in"}, []kafkabpl.Message{{Key: "k", Value: "v"}}))
	c := testkit.Must[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "topics": "in", "auto-offset-reset": "earliest"}))
	for {
		if res := testkit.Must[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 5*time.Second)); res.Len() > 0 {
			return &res.Topics[0].Records[0]
		}
	}
}

// equalValues reports whether two BPL values are equal, as List.Equal
// compares elements.
func equalValues(a, b any) bool { return value.NewList(a).Equal(value.NewList(b)) }
