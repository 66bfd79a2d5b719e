package stream

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

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
