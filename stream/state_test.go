package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// countUpdate counts inputs per key, writing "key=count" for each.
func countUpdate(_ context.Context, in *kafkabpl.Record, state any) ([]Output, any, error) {
	n, _ := state.(int64)
	if in.Value() == "poison" {
		return nil, nil, errors.New("cannot count poison")
	}
	n++
	return []Output{{Message: kafkabpl.Message{Key: in.Key(), Value: fmt.Sprintf("%v=%d", in.Key(), n)}}}, n, nil
}

// keyed is messages with the given keys, values "v".
func keyed(keys ...string) []kafkabpl.Message {
	var ms []kafkabpl.Message
	for _, k := range keys {
		ms = append(ms, kafkabpl.Message{Key: k, Value: "v"})
	}
	return ms
}

// lastPerKey is the last "key=count" value written per key, joined sorted.
func lastPerKey(recs []kafkabpl.Record) string {
	last := map[string]string{}
	for i := range recs {
		v := recs[i].Value().(string)
		last[strings.SplitN(v, "=", 2)[0]] = v
	}
	var vs []string
	for _, v := range last {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return strings.Join(vs, " ")
}

// TestStreamKeyedState counts per key, stops, and starts again in the same
// group: the counts go on from the changelog. Under both guarantees.
func TestStreamKeyedState(t *testing.T) {
	t.Parallel()
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce} {
		t.Run(g.String(), func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(3)).Servers()
			lib := streamLib(t)
			cfg := map[string]any{"servers": servers, "group": "counter", "max-poll-records": 4}
			spec := Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "counts", Guarantee: g}
			sendValues(t, lib, servers, "in", keyed("a", "b", "a", "c", "a", "b")...)
			id := must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
			st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 6 })
			if st.Store == nil || st.Store.Keys != 3 || st.Store.Partitions != 3 || st.Store.Changelog != "counter-counts-changelog" || st.Store.Bytes <= 0 {
				t.Errorf("store status %+v", st.Store)
			}
			if got := lastPerKey(readAll(t, lib, servers, 6, "out")); got != "a=3 b=2 c=1" {
				t.Errorf("counts %s", got)
			}
			lib.Destroy(testCtx(t), id)

			// A new stream in the group restores the counts.
			sendValues(t, lib, servers, "in", keyed("a", "c", "d")...)
			id = must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
			st = waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 })
			if got := lastPerKey(readAll(t, lib, servers, 9, "out")); got != "a=4 b=2 c=2 d=1" {
				t.Errorf("after a restart: %s", got)
			}
			if st.Store.Restored < 3 || st.Store.Keys != 4 || st.Store.Restoring != 0 {
				t.Errorf("store status after a restart %+v", st.Store)
			}
			lib.Destroy(testCtx(t), id)
		})
	}
}

// TestStreamStateAbortLeavesNoTrace fails a batch in its middle: under
// exactly-once its state changes are aborted with it, and a stream started
// again counts the batch's inputs once.
func TestStreamStateAbortLeavesNoTrace(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in")).Servers()
	lib := streamLib(t)
	cfg := map[string]any{"servers": servers, "group": "g", "max-poll-records": 100}
	sendValues(t, lib, servers, "in", append(keyed("a", "a", "b"), kafkabpl.Message{Key: "a", Value: "poison"})...)
	id := must[string](t)(Of(lib).Start(testCtx(t), cfg, Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s"}))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.State == Failed })
	if st.Processed != 0 || st.Store.Keys != 0 {
		t.Errorf("the failed batch left a trace: %+v %+v", st, st.Store)
	}
	lib.Destroy(testCtx(t), id)
	// Now the poison is skipped: counted once, from no state.
	id = must[string](t)(Of(lib).Start(testCtx(t), cfg, Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", OnError: SkipOnError}))
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 4 })
	if got := lastPerKey(readAll(t, lib, servers, 3, "out")); got != "a=2 b=1" {
		t.Errorf("counts %s", got)
	}
	lib.Destroy(testCtx(t), id)
}

// at is a message of key k at ms milliseconds past the epoch.
func at(k string, ms int64, v any) kafkabpl.Message {
	return kafkabpl.Message{Key: k, Value: v, Timestamp: time.UnixMilli(ms)}
}

// sumAggregate adds up integer values.
func sumAggregate(_ context.Context, in *kafkabpl.Record, acc any) (any, error) {
	n, _ := acc.(int64)
	v, ok := in.Value().(int64)
	if !ok {
		return nil, fmt.Errorf("value %v: want an integer", in.Value())
	}
	return n + v, nil
}

// windowResults reads n results and prints each as key[start,end)=value.
func windowResults(t *testing.T, lib *kafkabpl.Library, servers string, n int) string {
	t.Helper()
	var got []string
	for _, r := range readAll(t, lib, servers, n, "out") {
		var w struct{ Start, End, Value any }
		if err := json.Unmarshal(r.ValueBytes(), &w); err != nil {
			t.Fatalf("result %q: %v", r.ValueBytes(), err)
		}
		got = append(got, fmt.Sprintf("%v[%v,%v)=%v", r.Key(), w.Start, w.End, w.Value))
	}
	return strings.Join(got, " ")
}

// TestStreamWindows runs each kind of window on timestamped inputs, one
// partition so that the order is known: results when windows close, late
// inputs dropped or dead-lettered, sessions merging.
// sumMerge merges two sessions' sums.
func sumMerge(_ context.Context, a, b any) (any, error) { return a.(int64) + b.(int64), nil }

func TestStreamWindows(t *testing.T) {
	t.Parallel()
	jsonCfg := map[string]any{"value-serializer": "JSON", "value-deserializer": "JSON"}
	cases := []struct {
		name string
		win  Window
		in   []kafkabpl.Message
		want string
		late int64
	}{
		{"tumbling", Window{Kind: Tumbling, Size: 10 * time.Millisecond},
			[]kafkabpl.Message{at("a", 1, 1), at("b", 2, 10), at("a", 9, 2), at("a", 10, 4), at("b", 25, 1)},
			"a[0,10)=3 b[0,10)=10 a[10,20)=4", 0},
		{"tumbling, grace and late", Window{Kind: Tumbling, Size: 10 * time.Millisecond, Grace: 5 * time.Millisecond},
			// 3 at 12 is within the grace of [0,10); 100 at 8, after
			// the stream time reached 15, is late.
			[]kafkabpl.Message{at("a", 1, 1), at("a", 12, 2), at("a", 3, 3), at("a", 15, 4), at("a", 8, 100), at("a", 30, 0)},
			"a[0,10)=4 a[10,20)=6", 1},
		{"hopping", Window{Kind: Hopping, Size: 10 * time.Millisecond, Advance: 5 * time.Millisecond},
			[]kafkabpl.Message{at("a", 1, 1), at("a", 6, 2), at("a", 11, 4), at("a", 40, 0)},
			"a[-5,5)=1 a[0,10)=3 a[5,15)=6 a[10,20)=4", 0},
		{"session, merging", Window{Kind: Session, Gap: 10 * time.Millisecond, Grace: 10 * time.Millisecond, Merge: sumMerge},
			// Two sessions, [0,0] and [15,15], bridged by 8 into [0,15]
			// (the grace keeps [0,0] open at stream time 15); then
			// [40,40] alone.
			[]kafkabpl.Message{at("a", 0, 1), at("a", 15, 2), at("a", 8, 4), at("a", 40, 8), at("a", 100, 0)},
			"a[0,15)=7 a[40,40)=8", 0},
		// An input exactly the gap after a session joins it, with or
		// without grace; one a millisecond later starts another.
		{"session, exactly the gap apart", Window{Kind: Session, Gap: 10 * time.Millisecond, Merge: sumMerge},
			[]kafkabpl.Message{at("a", 0, 1), at("a", 10, 2), at("a", 21, 4), at("a", 100, 0)},
			"a[0,10)=3 a[21,21)=4", 0},
		{"session, exactly the gap apart, with grace", Window{Kind: Session, Gap: 10 * time.Millisecond, Grace: 5 * time.Millisecond, Merge: sumMerge},
			[]kafkabpl.Message{at("a", 0, 1), at("a", 10, 2), at("a", 21, 4), at("a", 100, 0)},
			"a[0,10)=3 a[21,21)=4", 0},
		{"tumbling, on update, at least once", Window{Kind: Tumbling, Size: 10 * time.Millisecond, Emit: EmitOnUpdate},
			[]kafkabpl.Message{at("a", 1, 1), at("a", 2, 2), at("a", 12, 4), at("a", 3, 8)},
			"a[0,10)=1 a[0,10)=3 a[10,20)=4", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("in")).Servers()
			lib := streamLib(t)
			cfg := map[string]any{"servers": servers, "group": "w"}
			for k, v := range jsonCfg {
				cfg[k] = v
			}
			p := must[string](t)(lib.Create(testCtx(t), kafkabpl.Producer, cfg))
			for _, m := range c.in { // one at a time, so that each is a batch of its own or not: either way
				must[int](t)(lib.Send(testCtx(t), p, []string{"in"}, []kafkabpl.Message{m}))
			}
			w := c.win
			w.Aggregate = sumAggregate
			g := ExactlyOnce
			if strings.HasSuffix(c.name, "at least once") {
				g = AtLeastOnce
			}
			id := must[string](t)(Of(lib).Start(testCtx(t), cfg, Spec{From: []string{"in"}, To: "out", Store: "sums", Window: &w, Guarantee: g}))
			st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == int64(len(c.in)) })
			n := strings.Count(c.want, "=")
			if got := windowResults(t, lib, servers, n); got != c.want {
				t.Errorf("results\n got %s\nwant %s", got, c.want)
			}
			if st.Store.Late != c.late {
				t.Errorf("late %d, want %d", st.Store.Late, c.late)
			}
			lib.Destroy(testCtx(t), id)
		})
	}
}

// TestStreamWindowRestart closes windows across a restart: a window
// opened by the first stream is closed, with its whole aggregate, by the
// second, and the stream time restored makes an old input late.
func TestStreamWindowRestart(t *testing.T) {
	t.Parallel()
	for _, onDisk := range []bool{false, true} {
		t.Run(map[bool]string{false: "in memory", true: "on disk"}[onDisk], func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("in")).Servers()
			lib := streamLib(t)
			cfg := map[string]any{"servers": servers, "group": "w", "value-serializer": "JSON", "value-deserializer": "JSON"}
			if onDisk {
				cfg["state-dir"] = t.TempDir()
			}
			spec := func() Spec {
				return Spec{From: []string{"in"}, To: "out", Store: "sums",
					Window: &Window{Kind: Tumbling, Size: 100 * time.Millisecond, Late: DeadLetterLate, Aggregate: sumAggregate}}
			}
			sendValues(t, lib, servers, "in", at("a", 10, 1), at("b", 20, 2), at("a", 150, 4))
			id := must[string](t)(Of(lib).Start(testCtx(t), cfg, spec()))
			waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 })
			lib.Destroy(testCtx(t), id)
			sendValues(t, lib, servers, "in", at("a", 50, 100), at("a", 160, 8), at("c", 250, 0))
			id = must[string](t)(Of(lib).Start(testCtx(t), cfg, spec()))
			st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 })
			if got := windowResults(t, lib, servers, 3); got != "a[0,100)=1 b[0,100)=2 a[100,200)=12" {
				t.Errorf("results %s", got)
			}
			if st.Store.Late != 1 || st.DeadLettered != 1 || st.Store.Windows != 1 {
				t.Errorf("status %+v, store %+v", st, st.Store)
			}
			if r := st.Store.Restores; onDisk && (len(r) != 1 || !r[0].Tail || r[0].Records != 0) {
				t.Errorf("restarted after a clean stop: restores %+v, want one from the disk's position, of no record", r)
			}
			dl := readAll(t, lib, servers, 1, "in.dlq")[0]
			if dl.Headers()[len(dl.Headers())-4].Key != "dlq-error-type" || string(dl.Headers()[len(dl.Headers())-4].Value) != "LateRecord" {
				t.Errorf("dead letter headers %v", dl.Headers())
			}
			lib.Destroy(testCtx(t), id)
		})
	}
}

// TestStatefulSpecErrors checks the spec's checks.
func TestStatefulSpecErrors(t *testing.T) {
	lib := newLib(t)
	cfg := map[string]any{"servers": "127.0.0.1:1", "group": "g"}
	agg := sumAggregate
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{From: []string{"a"}, To: "o", Update: countUpdate}, `"store": a stateful stream needs a store name`},
		{Spec{From: []string{"a"}, To: "o", Update: countUpdate, Transform: poisonTransform, Store: "s"}, "want one of a transform, an update, a window or an interval join, got 2"},
		{Spec{From: []string{"a"}, To: "o", Transform: poisonTransform, Store: "s"}, "keeps no store"},
		{Spec{From: []string{"a"}, To: "o", Store: "s", Window: &Window{Aggregate: agg}}, `"size" 0s`},
		{Spec{From: []string{"a"}, To: "o", Store: "s", Window: &Window{Kind: Session, Gap: time.Second, Aggregate: agg}}, `"merge"`},
		{Spec{From: []string{"a"}, To: "o", Store: "s", Window: &Window{Kind: Hopping, Size: time.Second, Advance: 2 * time.Second, Aggregate: agg}}, `"advance" 2s`},
		{Spec{From: []string{"a"}, To: "o", Store: "s/x", Update: countUpdate}, `"store"`},
	} {
		_, err := Of(lib).Start(testCtx(t), cfg, c.spec)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "kafka-stream: ") {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}
