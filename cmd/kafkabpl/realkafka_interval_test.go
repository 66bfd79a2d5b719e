//go:build unix

package main

// TestRealKafkaIntervalJoin runs an interval join (a left one) on a real
// Apache Kafka broker of its own (startKafka's, as TestRealKafkaStream
// does): two topics of 3 partitions, 6 keys. The left records are
// buffered and the stream destroyed (committing); a new stream of the
// group restores them from the changelog the first created on the broker,
// compacted, joins the right records that come within the window, and,
// once later records move each partition's stream time on, writes the
// left records that matched nothing. A read_committed reader finds each
// result once. Without java or the jars it skips, saying how to get them;
// with CI set it fails.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRealKafkaIntervalJoin(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	k := startKafka(t, java)
	const left, right, out, group = "ij-left", "ij-right", "ij-out", "ij-join"
	ctx := realCtx(t)
	addrs := []string{k.servers}
	adm := newAdmin(t, addrs)
	for _, topic := range []string{left, right, out} {
		if _, err := adm.CreateTopic(ctx, 3, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	t0 := time.UnixMilli(1767225600000)
	rec := func(topic, key string, after time.Duration) *kgo.Record {
		return &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(topic[3:] + "-" + key), Timestamp: t0.Add(after)}
	}
	prod := newClient(t, addrs)
	produce := func(rs ...*kgo.Record) {
		t.Helper()
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	joiner := func(_ context.Context, l, r *kafkabpl.Record) ([]stream.Output, error) {
		rv := "-"
		if r != nil {
			rv = string(r.ValueBytes())
		}
		return []stream.Output{{Message: kafkabpl.Message{Key: l.Key(), Value: string(l.ValueBytes()) + "+" + rv}}}, nil
	}
	lib := newRealLib(t)
	lib.SetLogOutput(logWriter{t})
	config := map[string]any{"servers": k.servers, "group": group}
	spec := stream.Spec{From: []string{left, right}, To: out, Store: "pairs",
		Interval: &stream.IntervalJoin{Before: time.Second, After: time.Second, Kind: stream.IntervalLeft, Joiner: joiner}}

	var lefts []*kgo.Record
	for i := range 6 {
		lefts = append(lefts, rec(left, fmt.Sprintf("k%d", i), 0))
	}
	produce(lefts...)
	id := ok[string](t)(stream.Of(lib).Start(ctx, config, spec))
	waitStreamStatus(t, lib, id, func(st *stream.Status) bool { return st.Processed == 6 })
	if ok, err := lib.Destroy(ctx, id); !ok || err != nil {
		t.Fatalf("destroy: %v %v", ok, err)
	}

	// k0..k2 get a right record within the window (half a second after
	// their left one), k3..k5 one outside it (3 s after). Then one 60 s on
	// for every key moves each partition's stream time past them all.
	id = ok[string](t)(stream.Of(lib).Start(ctx, config, spec))
	produce(rec(right, "k0", 500*time.Millisecond), rec(right, "k1", 500*time.Millisecond), rec(right, "k2", 500*time.Millisecond))
	waitStreamStatus(t, lib, id, func(st *stream.Status) bool { return st.Processed == 3 })
	var later []*kgo.Record
	for i := range 6 {
		later = append(later, rec(right, fmt.Sprintf("k%d", i), time.Minute))
	}
	produce(rec(right, "k3", 3*time.Second), rec(right, "k4", 3*time.Second), rec(right, "k5", 3*time.Second))
	waitStreamStatus(t, lib, id, func(st *stream.Status) bool { return st.Processed == 6 })
	produce(later...)
	st := waitStreamStatus(t, lib, id, func(st *stream.Status) bool { return st.Processed == 12 })
	if st.Store.Restored < 6 || st.Store.Late != 0 || st.Store.Keys != 6 {
		t.Errorf("store %+v: want the 6 left records restored, none late, and the 6 last right records held", *st.Store)
	}

	var got []string
	for _, r := range readCommitted(t, ctx, addrs, out, 6) {
		got = append(got, string(r.Value))
	}
	want := []string{"left-k0+right-k0", "left-k1+right-k1", "left-k2+right-k2", "left-k3+-", "left-k4+-", "left-k5+-"}
	if fmt.Sprint(sorted(got)) != fmt.Sprint(want) {
		t.Errorf("results %v, want %v, each once", sorted(got), want)
	}
	if ok, err := lib.Destroy(ctx, id); !ok || err != nil {
		t.Fatalf("destroy: %v %v", ok, err)
	}
}
