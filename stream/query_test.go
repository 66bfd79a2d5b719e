package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStoreQueries reads a per-key store while its stream runs: a key's
// state, ranges of keys, and never the state of a batch still in hand
// (the update holds the batch open while the test queries).
func TestStoreQueries(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Topics("in"), embedded.Partitions(3))
	servers := cluster.Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	held, release := make(chan struct{}), make(chan struct{})
	update := func(ctx context.Context, in *kafkabpl.Record, state any) ([]Output, any, error) {
		if in.Value() == "hold" {
			held <- struct{}{}
			<-release
		}
		n, _ := state.(int64)
		return nil, n + 1, nil
	}
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "q", "max-poll-records": 100},
		Spec{From: []string{"in"}, To: "out", Store: "counts", Update: update, OnTimer: func(context.Context, *TimerEvent, any) ([]Output, any, error) {
			return nil, nil, nil
		}, Silence: time.Hour}))
	sendValues(t, lib, servers, "in", keyed("a", "b", "a", "c", "a")...)
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 5 })
	if v, ok := must2(t)(Of(lib).StoreGet(ctx, id, "a")); !ok || v != int64(3) {
		t.Errorf("a: %v %v, want 3", v, ok)
	}
	if v, ok := must2(t)(Of(lib).StoreGet(ctx, id, "zz")); ok || v != nil {
		t.Errorf("zz: %v %v, want none", v, ok)
	}
	all := must[[]StoreEntry](t)(Of(lib).StoreRange(ctx, id, nil, nil))
	if got := entries(all); got != "a=3 b=1 c=1" {
		t.Errorf("all: %s", got)
	}
	if got := entries(must[[]StoreEntry](t)(Of(lib).StoreRange(ctx, id, "b", "c"))); got != "b=1 c=1" {
		t.Errorf("b to c, both included: %s", got)
	}
	// A batch in hand is not committed state: a key's first record is
	// counted in the batch while its second holds the batch open. The two
	// are sent in one record batch (a client that sends only when
	// flushed), yet the stream may still get them in two polls, each its
	// own batch, the first committed: then there is nothing to check, and
	// the next round tries a new key. A round's two came in one batch when
	// the stream committed no transaction between them.
	raw := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(cluster.Addrs()...), kgo.ManualFlushing()))
	defer raw.Close()
	processed := int64(5)
	for round := 0; ; round++ {
		key := fmt.Sprintf("d%d", round)
		before := must[*Status](t)(Of(lib).Status(ctx, id)).Transactions
		for _, v := range []string{"v", "hold"} {
			raw.Produce(ctx, &kgo.Record{Topic: "in", Key: []byte(key), Value: []byte(v)}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce %s=%s: %v", key, v, err)
				}
			})
		}
		if err := raw.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		<-held
		apart := must[*Status](t)(Of(lib).Status(ctx, id)).Transactions != before
		v, ok := must2(t)(Of(lib).StoreGet(ctx, id, key))
		release <- struct{}{}
		processed += 2
		waitStream(t, lib, id, func(st *Status) bool { return st.Processed == processed })
		if got, ok := must2(t)(Of(lib).StoreGet(ctx, id, key)); !ok || got != int64(2) {
			t.Errorf("%s once committed: %v %v, want 2", key, got, ok)
		}
		if !apart {
			if ok {
				t.Errorf("%s read %v from the batch in hand", key, v)
			}
			break
		}
		if round == 9 {
			t.Fatal("in ten rounds, a key's two records never came in one batch")
		}
	}
}

func must2(t *testing.T) func(any, bool, error) (any, bool) {
	return func(v any, ok bool, err error) (any, bool) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v, ok
	}
}

// entries is "key=state" per entry, sorted by key.
func entries(es []StoreEntry) string {
	byKey := map[string]string{}
	var keys []string
	for _, e := range es {
		k := fmt.Sprint(e.Key)
		byKey[k] = fmt.Sprintf("%s=%v", k, e.State)
		keys = append(keys, k)
	}
	var out []string
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return strings.Join(out, " ")
}

// TestStoreWindowQueries reads a windowed store's windows of a key, and
// checks the queries' errors: the wrong kind of store, a stateless stream,
// an unknown handle.
func TestStoreWindowQueries(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in")).Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	count := func(_ context.Context, _ *kafkabpl.Record, acc any) (any, error) {
		n, _ := acc.(int64)
		return n + 1, nil
	}
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "w", "value-serializer": "JSON"}, Spec{From: []string{"in"}, To: "out", Store: "per-minute",
		Window: &Window{Kind: Tumbling, Size: time.Minute, Aggregate: count}}))
	t0 := time.UnixMilli(1767225600000)
	at := func(key string, s int) kafkabpl.Message {
		return kafkabpl.Message{Key: key, Value: "v", Timestamp: t0.Add(time.Duration(s) * time.Second)}
	}
	sendValues(t, lib, servers, "in", at("a", 1), at("a", 2), at("b", 3), at("a", 61))
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 4 })
	ws := must[[]StoreWindow](t)(Of(lib).StoreWindows(ctx, id, "a", t0, t0.Add(time.Hour)))
	var got []string
	for _, w := range ws {
		got = append(got, fmt.Sprintf("%v:%v", w.Start.Sub(t0), w.Value))
	}
	if strings.Join(got, " ") != "1m0s:1" { // minute 0 closed at 61 s: its result was written, it is gone
		t.Errorf("a's windows %v, want minute 1's only", got)
	}
	if ws := must[[]StoreWindow](t)(Of(lib).StoreWindows(ctx, id, "a", t0.Add(2*time.Minute), t0.Add(time.Hour))); len(ws) != 0 {
		t.Errorf("a's windows from minute 2: %v", ws)
	}
	// Both bounds are included: until at minute 1's start takes it in.
	if ws := must[[]StoreWindow](t)(Of(lib).StoreWindows(ctx, id, "a", t0.Add(time.Minute), t0.Add(time.Minute))); len(ws) != 1 {
		t.Errorf("a's windows starting from minute 1 to minute 1: %v, want minute 1's", ws)
	}
	if ws := must[[]StoreWindow](t)(Of(lib).StoreWindows(ctx, id, "a", t0, t0.Add(time.Minute-time.Millisecond))); len(ws) != 0 {
		t.Errorf("a's windows starting before minute 1: %v", ws)
	}
	if _, _, err := Of(lib).StoreGet(ctx, id, "a"); !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), `kafka-store-get: store "per-minute" is windowed`) {
		t.Errorf("StoreGet of a windowed store: %v", err)
	}
	stateless := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "s"}, Spec{From: []string{"in"}, To: "o", Transform: poisonTransform}))
	if _, err := Of(lib).StoreRange(ctx, stateless, nil, nil); !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), "is stateless") {
		t.Errorf("StoreRange of a stateless stream: %v", err)
	}
	if _, err := Of(lib).StoreWindows(ctx, "s0123456789abcdef0123456789abcdef", "a", t0, t0); !errors.Is(err, kafkabpl.ErrUnknownHandle) {
		t.Errorf("StoreWindows of no stream: %v", err)
	}
}
