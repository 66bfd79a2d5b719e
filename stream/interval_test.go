package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kgo"
)

// pairJoiner writes "left+right" (a missing side is "-"), and fails for a
// value "poison" on either side.
func pairJoiner(_ context.Context, left, right *kafkabpl.Record) ([]Output, error) {
	side := func(r *kafkabpl.Record) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprint(r.Value())
	}
	l, r := side(left), side(right)
	if l == "poison" || r == "poison" {
		return nil, errors.New("cannot join poison")
	}
	key := left
	if key == nil {
		key = right
	}
	return []Output{{Message: kafkabpl.Message{Key: key.Key(), Value: l + "+" + r}}}, nil
}

// sided is an input of an interval join test: to the left topic or the
// right one.
type sided struct {
	right bool
	m     kafkabpl.Message
}

func lft(k string, ms int64, v string) sided { return sided{false, at(k, ms, v)} }
func rgt(k string, ms int64, v string) sided { return sided{true, at(k, ms, v)} }

// sendOneByOne sends ins in order, each once the stream processed the one
// before, so that the order the stream sees them in is the order given.
func sendOneByOne(t *testing.T, lib *kafkabpl.Library, servers, id string, done int64, ins ...sided) *Status {
	t.Helper()
	p := must[string](t)(lib.Create(testCtx(t), kafkabpl.Producer, servers))
	defer lib.Destroy(testCtx(t), p)
	var st *Status
	for i, in := range ins {
		topic := "left"
		if in.right {
			topic = "right"
		}
		must[int](t)(lib.Send(testCtx(t), p, []string{topic}, []kafkabpl.Message{in.m}))
		st = waitStream(t, lib, id, func(st *Status) bool { return st.Processed == done+int64(i+1) || st.State != Running })
		if st.State != Running {
			break
		}
	}
	return st
}

// joinSpec is an interval join of "left" and "right" into "out".
func joinSpec(j IntervalJoin) Spec {
	if j.Joiner == nil {
		j.Joiner = pairJoiner
	}
	return Spec{From: []string{"left", "right"}, To: "out", Store: "pairs", Interval: &j}
}

// TestIntervalJoin joins records in both arrival orders, inside and just
// outside the window, drops late ones, and writes the unmatched ones of a
// left and an outer join when they expire.
func TestIntervalJoin(t *testing.T) {
	t.Parallel()
	win := IntervalJoin{Before: 10 * time.Millisecond, After: 20 * time.Millisecond}
	cases := []struct {
		name string
		j    IntervalJoin
		in   []sided
		want string
		late int64
	}{
		{"inside and outside", win,
			// r at 95 and 120 are within [90,120] of l1; 121 is not,
			// nor is b's. l2 at 130 matches [120,150].
			[]sided{lft("a", 100, "l1"), rgt("a", 95, "r95"), rgt("a", 121, "r121"), rgt("a", 120, "r120"), rgt("b", 120, "rb"), lft("a", 130, "l2")},
			"l1+r95 l1+r120 l2+r121 l2+r120", 0},
		{"right first", IntervalJoin{Before: 10 * time.Millisecond, After: 20 * time.Millisecond, Grace: 50 * time.Millisecond},
			// r at 100 matches a left record in [80,110] (the grace
			// keeps 79 from being late).
			[]sided{rgt("a", 100, "r1"), lft("a", 79, "l79"), lft("a", 80, "l80"), lft("a", 110, "l110"), lft("a", 111, "l111")},
			"l80+r1 l110+r1", 0},
		{"late", win,
			// At stream time 200, a left record before 180 and a right
			// one before 190 are late; 190 is not, and matches 185.
			[]sided{lft("a", 100, "l1"), rgt("a", 200, "r1"), lft("a", 179, "late"), rgt("a", 189, "late"), lft("a", 185, "l2"), rgt("a", 190, "r2")},
			"l2+r1 l2+r2", 2},
		{"late within the grace", IntervalJoin{Before: 10 * time.Millisecond, After: 20 * time.Millisecond, Grace: 50 * time.Millisecond},
			// 175 would be late without the grace, and 185 too; 175
			// matches right records in [165,195].
			[]sided{rgt("a", 200, "r1"), lft("a", 175, "l1"), rgt("a", 185, "r2")},
			"l1+r2", 0},
		{"left", IntervalJoin{Before: 10 * time.Millisecond, After: 20 * time.Millisecond, Kind: IntervalLeft},
			// l1 expires once the stream time passes 100+30, unmatched;
			// l2 matched, and rb is a right record: no result. l4
			// expires l2, r2 and r3, which have none either.
			[]sided{lft("a", 100, "l1"), rgt("b", 100, "rb"), lft("c", 120, "l2"), rgt("c", 125, "r2"), rgt("a", 131, "r3"), lft("d", 300, "l4")},
			"l2+r2 l1+-", 0},
		{"outer", IntervalJoin{Before: 10 * time.Millisecond, After: 20 * time.Millisecond, Kind: IntervalOuter},
			[]sided{lft("a", 100, "l1"), rgt("b", 100, "rb"), rgt("a", 160, "r3")},
			"l1+- -+rb", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("left", "right")).Servers()
			lib := streamLib(t)
			id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "j"}, joinSpec(c.j)))
			st := sendOneByOne(t, lib, servers, id, 0, c.in...)
			n := strings.Count(c.want, "+")
			if got := values(readAll(t, lib, servers, n, "out")); got != c.want {
				t.Errorf("results\n got %s\nwant %s", got, c.want)
			}
			if st.State != Running || st.Store.Late != c.late {
				t.Errorf("status %+v, late %d, want %d", st, st.Store.Late, c.late)
			}
			lib.Destroy(testCtx(t), id)
		})
	}
}

// TestIntervalJoinExpiry sends records far apart in time, for many keys:
// each expires once the stream time passes it by the window and the
// grace, so the store holds only the last few, and the expired ones are
// tombstoned in the changelog.
func TestIntervalJoinExpiry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("left", "right")).Servers()
	lib := streamLib(t)
	spec := joinSpec(IntervalJoin{Before: 10 * time.Millisecond, After: 20 * time.Millisecond, Grace: 30 * time.Millisecond})
	id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "x"}, spec))
	var in []sided
	for i := range 40 {
		k := fmt.Sprintf("k%02d", i)
		in = append(in, lft(k, int64(i)*100, "l"+k), rgt(k, int64(i)*100+5, "r"+k))
	}
	st := sendOneByOne(t, lib, servers, id, 0, in...)
	got := readAll(t, lib, servers, 40, "out")
	vs := strings.Fields(values(got))
	slices.Sort(vs)
	for i, v := range vs {
		if k := fmt.Sprintf("k%02d", i); v != "l"+k+"+r"+k {
			t.Fatalf("results %v: want each key's pair once", vs)
		}
	}
	// Key i's records expire once the stream time passes them by 60 ms,
	// when key i+1's come: the last key is held only.
	if st.Store.Keys != 1 || st.Store.Bytes > 200 {
		t.Errorf("store %+v: want the last key only", st.Store)
	}
	// A query shows the key's buffer: (side timestamp offset value
	// headers matched) per record.
	buf, found := must2(t)(Of(lib).StoreGet(testCtx(t), id, "k39"))
	if got := fmt.Sprint(buf); !found || got != `((0 3900 39 "lk39" null true) (1 3905 39 "rk39" null true))` {
		t.Errorf("the buffer of k39: %s, %v", got, found)
	}
	lib.Destroy(testCtx(t), id)
	// The changelog, compacted, ends with a tombstone for each key but
	// the last.
	tomb := map[string]bool{}
	for _, r := range readChangelog(t, lib, servers, "x-pairs-changelog") {
		tomb[string(r.KeyBytes())] = r.ValueBytes() == nil
	}
	for i := range 40 {
		if k := fmt.Sprintf("k%02d", i); tomb[k] != (i < 39) {
			t.Errorf("changelog: key %s tombstoned %v", k, tomb[k])
		}
	}
}

// readChangelog reads a changelog topic whole, read_committed.
func readChangelog(t *testing.T, lib *kafkabpl.Library, servers, topic string) []kafkabpl.Record {
	t.Helper()
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{
		"servers": servers, "topics": []string{topic}, "auto-offset-reset": "earliest",
		"isolation-level": "read_committed", "group": groupName("reader"),
		"key-deserializer": "bytes", "value-deserializer": "bytes",
	}))
	defer lib.Destroy(ctx, c)
	var recs []kafkabpl.Record
	for {
		res := must[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 500*time.Millisecond))
		if res.Len() == 0 {
			return recs
		}
		for _, tr := range res.Topics {
			recs = append(recs, tr.Records...)
		}
	}
}

// TestIntervalJoinRestart fails a batch (its joiner fails): it leaves no
// trace. Then a stream of the same group, restored from the changelog,
// joins new records with those buffered before, knows the stream time
// (an old record is late), and writes each pair once.
func TestIntervalJoinRestart(t *testing.T) {
	t.Parallel()
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce} {
		t.Run(g.String(), func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("left", "right"), embedded.Partitions(2)).Servers()
			lib := streamLib(t)
			cfg := map[string]any{"servers": servers, "group": "r"}
			spec := joinSpec(IntervalJoin{Before: 10 * time.Millisecond, After: 20 * time.Millisecond})
			spec.Guarantee = g
			id := must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
			sendOneByOne(t, lib, servers, id, 0, lft("a", 100, "l1"), lft("b", 100, "lb"))
			// r0 and the poison in one send: one batch or two, the
			// poison's fails the stream.
			sendValues(t, lib, servers, "right", at("a", 104, "r0"), at("a", 105, "poison"))
			st := waitStream(t, lib, id, func(st *Status) bool { return st.State == Failed })
			if g == ExactlyOnce && (st.Processed > 3 || st.Store.Keys != 2) {
				t.Errorf("the failed batch left a trace: %+v %+v", st, st.Store)
			}
			lib.Destroy(testCtx(t), id)

			spec.OnError = SkipOnError
			id = must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
			waitStream(t, lib, id, func(st *Status) bool { return st.Skipped == 1 })
			done := must[*Status](t)(Of(lib).Status(testCtx(t), id)).Processed
			st = sendOneByOne(t, lib, servers, id, done, rgt("a", 110, "r1"), rgt("b", 50, "late"), rgt("b", 100, "rb"))
			if st.Store.Late != 1 || st.Store.Restored < 2 {
				t.Errorf("store %+v: want the stream time restored, and one late input", st.Store)
			}
			want := "l1+r0 l1+r1 lb+rb"
			got := strings.Fields(values(readAll(t, lib, servers, 3, "out")))
			slices.Sort(got)
			if strings.Join(got, " ") != want {
				t.Errorf("results %v, want %s", got, want)
			}
			lib.Destroy(testCtx(t), id)
		})
	}
}

// TestIntervalJoinErrors checks the spec's checks, and inputs that are not
// co-partitioned.
func TestIntervalJoinErrors(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	cfg := map[string]any{"servers": "127.0.0.1:1", "group": "g"}
	for _, c := range []struct {
		spec func(s *Spec)
		want string
	}{
		{func(s *Spec) { s.From = []string{"left"} }, `"from" ["left"]: an interval join takes two topics, the left then the right, got 1`},
		{func(s *Spec) { s.From = []string{"a", "b", "c"} }, `"from" ["a" "b" "c"]: an interval join takes two topics`},
		{func(s *Spec) { s.From = []string{"a", "a"} }, `must differ`},
		{func(s *Spec) { s.Interval.Before = -time.Second }, `interval join "before" -1s: want 0 or more`},
		{func(s *Spec) { s.Interval.After = -time.Millisecond }, `interval join "after" -1ms: want 0 or more`},
		{func(s *Spec) { s.Interval.Grace = -time.Millisecond }, `interval join "grace" -1ms`},
		{func(s *Spec) { s.Interval.Kind = 3 }, `interval join kind 3`},
		{func(s *Spec) { s.Interval.Joiner = nil }, `want a joiner`},
		{func(s *Spec) { s.Store = "" }, `"store": a stateful stream needs a store name`},
		{func(s *Spec) { s.Update = countUpdate }, `want one of a transform, an update, a window or an interval join, got 2`},
		{func(s *Spec) { s.Join = &Join{Table: "t"}; s.Tables = []Table{{Topic: "t"}} }, `"join" "t": an interval join takes no table join`},
	} {
		spec := joinSpec(IntervalJoin{Before: time.Second})
		c.spec(&spec)
		_, err := Of(lib).Start(testCtx(t), cfg, spec)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "kafka-stream: ") {
			t.Errorf("%q: %v, want %q", c.want, err, c.want)
		}
	}

	servers := newCluster(t, embedded.Topics("left"), embedded.Partitions(3)).Servers()
	ctx := testCtx(t)
	must[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{"right"}, kafkabpl.TopicOptions{Partitions: 2}))
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "uneven"}, joinSpec(IntervalJoin{})))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.State == Failed })
	if !errors.Is(st.LastError, kafkabpl.ErrInvalidConfig) || !strings.Contains(st.LastError.Error(), `its inputs are not co-partitioned: "left" has 3 partitions and "right" has 2`) {
		t.Errorf("failed with %v", st.LastError)
	}
	lib.Destroy(ctx, id)
}

// polledCounter is a kgo hook that counts the records of one topic a
// client's polls returned.
type polledCounter struct {
	topic string
	n     *atomic.Int64
}

func (h polledCounter) OnFetchRecordUnbuffered(r *kgo.Record, polled bool) {
	if polled && r.Topic == h.topic {
		h.n.Add(1)
	}
}

// TestIntervalJoinTimestampOrder is issue 47's scenario: an interval join
// of commands with their acks, a short grace, and the commands fetched
// (all of them, before any ack was written) in a poll of their own. With
// "max-task-idle" the commands are held until the acks come, and the two
// topics are taken in timestamp order: every ack joins its command, none
// is late. Taken in fetch order, the commands would move the stream time
// past the acks, and they would be dead-lettered as late.
func TestIntervalJoinTimestampOrder(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("commands", "acks")).Servers()
	lib := streamLib(t)
	var polled atomic.Int64
	lib.SetClientHooks(func(kind kafkabpl.Kind, _ string) []kgo.Hook {
		if kind != kafkabpl.Stream {
			return nil
		}
		return []kgo.Hook{polledCounter{"commands", &polled}}
	})
	// A long idle: it bounds how long the commands wait for acks that
	// never come, and this test's come.
	cfg := map[string]any{"servers": servers, "group": groupName("acks"), "max-task-idle": 60000}
	id := must[string](t)(Of(lib).Start(testCtx(t), cfg, Spec{From: []string{"commands", "acks"}, To: "out", Store: "pairs",
		Interval: &IntervalJoin{After: 500 * time.Millisecond, Late: DeadLetterLate, Joiner: pairJoiner}, OnError: DeadLetterOnError}))
	const base = 1767225600000
	var commands, acks []kafkabpl.Message
	var want []string
	for i := range 10 {
		commands = append(commands, at("k", base+int64(i)*1000, fmt.Sprintf("c%d", i)))
		acks = append(acks, at("k", base+int64(i)*1000+100, fmt.Sprintf("a%d", i)))
		want = append(want, fmt.Sprintf("c%d+a%d", i, i))
	}
	sendValues(t, lib, servers, "commands", commands...)
	waitFor(t, "the stream polled the 10 commands", func() bool { return polled.Load() == 10 })
	sendValues(t, lib, servers, "acks", acks...)
	// A later command, so that the last ack is not held waiting for
	// one: it is held itself, waiting for a later ack.
	sendValues(t, lib, servers, "commands", at("k", base+20000, "c-last"))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed >= 20 || st.State != Running })
	if st.Store.Late != 0 || st.DeadLettered != 0 || st.State != Running {
		t.Errorf("status %+v, store %+v: want no late input, none dead-lettered", st, st.Store)
	}
	got := strings.Fields(values(readAll(t, lib, servers, 10, "out")))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("joined %q, want %q", got, want)
	}
}

// TestInputOrderHeldNotCommitted stops an interval join while it holds
// commands waiting for their acks, under both guarantees: the offsets it
// committed stop before the held commands, so the stream started again
// reads them again and joins them with the acks written since; none is
// lost.
func TestInputOrderHeldNotCommitted(t *testing.T) {
	t.Parallel()
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce} {
		t.Run(g.String(), func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("commands", "acks")).Servers()
			lib := streamLib(t)
			cfg := map[string]any{"servers": servers, "group": groupName("held"), "max-task-idle": 60000}
			spec := Spec{From: []string{"commands", "acks"}, To: "out", Store: "pairs", Guarantee: g,
				Interval: &IntervalJoin{After: 500 * time.Millisecond, Joiner: pairJoiner}}
			const base = 1767225600000
			sendValues(t, lib, servers, "commands", at("k", base, "c0"), at("k", base+1000, "c1"), at("k", base+2000, "c2"))
			sendValues(t, lib, servers, "acks", at("k", base+100, "a0"))
			id := must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
			// c0 and a0 are joined and committed; c1 and c2 wait for acks.
			waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 2 && st.Transactions > 0 })
			if _, err := lib.Destroy(testCtx(t), id); err != nil {
				t.Fatal(err)
			}
			sendValues(t, lib, servers, "acks", at("k", base+1100, "a1"), at("k", base+2100, "a2"))
			sendValues(t, lib, servers, "commands", at("k", base+20000, "c-last")) // lets a2 go (see TestIntervalJoinTimestampOrder)
			id = must[string](t)(Of(lib).Start(testCtx(t), cfg, spec))
			got := strings.Fields(values(readAll(t, lib, servers, 3, "out")))
			slices.Sort(got)
			if want := []string{"c0+a0", "c1+a1", "c2+a2"}; !slices.Equal(got, want) {
				t.Errorf("joined %q, want %q", got, want)
			}
			lib.Destroy(testCtx(t), id)
		})
	}
}
