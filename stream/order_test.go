package stream

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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

// TestInputOrderMerge checks the order of a poll's records of a store
// partition's two inputs: by timestamp, the first input's first on a tie,
// each input's in offset order; with "max-task-idle" 0 nothing is held.
func TestInputOrderMerge(t *testing.T) {
	st := &kafkaStore{assigned: map[int32]uint64{0: 1, 1: 1}, order: newInputOrder([]string{"l", "r"}, 0)}
	rec := func(topic string, p int32, off, ms int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: p, Offset: off, Timestamp: time.UnixMilli(ms)}
	}
	polled := []*kgo.Record{
		rec("l", 0, 0, 10), rec("l", 0, 1, 30), rec("l", 0, 2, 20), // out of time order within its input: kept in offset order
		rec("r", 0, 0, 5), rec("r", 0, 1, 30), rec("r", 1, 0, 1),
		rec("other", 0, 7, 100), // not an input of the store (a re-keying stream's input): first, as it came
	}
	var got []string
	for _, r := range st.ordered(polled, time.Now()) {
		got = append(got, fmt.Sprintf("%s%d@%d", r.Topic, r.Partition, r.Offset))
	}
	if want := "other0@7 r0@0 l0@0 l0@1 l0@2 r0@1 r1@0"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(got, " "), want)
	}
	if len(st.order.parts) != 0 {
		t.Errorf("held %d partitions with max-task-idle 0", len(st.order.parts))
	}
}

// TestInputOrderHold checks what "max-task-idle" holds: a partition's
// records while one of its inputs has none, until that input's come or
// the idle time ends; a revoked partition's held records are dropped; the
// commit stops at a held record.
func TestInputOrderHold(t *testing.T) {
	st := &kafkaStore{assigned: map[int32]uint64{0: 1, 1: 1}, order: newInputOrder([]string{"l", "r"}, time.Second)}
	rec := func(topic string, p int32, off, ms int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: p, Offset: off, Timestamp: time.UnixMilli(ms)}
	}
	names := func(rs []*kgo.Record) string {
		var s []string
		for _, r := range rs {
			s = append(s, fmt.Sprintf("%s%d@%d", r.Topic, r.Partition, r.Offset))
		}
		return strings.Join(s, " ")
	}
	t0 := time.Now()
	if got := names(st.ordered([]*kgo.Record{rec("l", 0, 0, 10), rec("l", 0, 1, 20), rec("l", 1, 0, 10)}, t0)); got != "" {
		t.Errorf("took %q while r had none", got)
	}
	if w := st.heldWait(t0.Add(400 * time.Millisecond)); w != 600*time.Millisecond {
		t.Errorf("held wait %v, want 600ms", w)
	}
	// The commit stops at each input partition's first held record.
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	for _, tp := range []struct {
		topic     string
		partition int32
		offset    int64
	}{{"l", 0, 2}, {"l", 1, 1}, {"r", 0, 5}} {
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = tp.topic
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = tp.partition, tp.offset
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	stopAtHeld(req, st.firstHeld())
	var commit []string
	for _, rt := range req.Topics {
		commit = append(commit, fmt.Sprintf("%s%d=%d", rt.Topic, rt.Partitions[0].Partition, rt.Partitions[0].Offset))
	}
	if got := strings.Join(commit, " "); got != "l0=0 l1=0 r0=5" {
		t.Errorf("commit %s, want l0=0 l1=0 r0=5 (l's held, r's none)", got)
	}
	// r's come for partition 0: its records are merged, and l's last
	// one, later than r's, is held again.
	if got := names(st.ordered([]*kgo.Record{rec("r", 0, 0, 15)}, t0.Add(500*time.Millisecond))); got != "l0@0 r0@0" {
		t.Errorf("took %q, want l0@0 r0@0", got)
	}
	// Partition 1 is revoked and assigned again: its held record is
	// dropped (kgo fetches it again from the committed offset).
	st.assigned[1] = 2
	// Partition 0's idle time ends: l's held record is taken without r.
	if got := names(st.ordered(nil, t0.Add(2*time.Second))); got != "l0@1" {
		t.Errorf("took %q once the idle time ended, want l0@1", got)
	}
	if len(st.order.parts) != 0 || st.heldWait(t0) != 0 {
		t.Errorf("still held: %d partitions", len(st.order.parts))
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
