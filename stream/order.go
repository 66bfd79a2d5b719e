package stream

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Inputs in timestamp order. A store partition fed by several
// co-partitioned inputs (an interval join's two topics, a stateful
// stream's several "from" topics) takes its next input by timestamp
// across them, as a Kafka Streams task takes its next record across its
// partitions, and not in the order kgo fetched them: a batch of one topic
// fetched before the other's would move the partition's stream time past
// the other's records and make them late.
//
// A poll's records of such a partition join its queues, one per input in
// offset order, and the partition's records are taken from the queue
// whose head is the earliest (the first input's on a tie) for as long as
// every queue holds one. When a queue is empty, the others' records are
// held for at most the config's "max-task-idle" (Kafka Streams'
// max.task.idle.ms) from when it was first found so, waiting for that
// input's records to be fetched; then they are taken in timestamp order
// without it until it has some again. With "max-task-idle" 0 (the
// default) nothing is held: a poll's records are merged by timestamp, and
// an input of which none were fetched is not waited for.
//
// A held record was polled but not processed: the offsets a batch
// commits stop before it (commitContext under exactly-once; at least once
// commits the records processed only), so that a crash or a rebalance
// reads it again; and held records are dropped when their partition is
// revoked or the batch aborts, as kgo then fetches again from the
// committed offsets.

// inputOrder is a store's queues of held inputs, used by the run
// goroutine only. nil for a store of one input.
type inputOrder struct {
	idle   time.Duration            // "max-task-idle"
	inputs map[string]int           // an input topic's index in the store's inputs
	parts  map[int32]*orderedInputs // the partitions with records held
	out    []*kgo.Record            // ordered's result, reused
}

// orderedInputs is a store partition's held inputs.
type orderedInputs struct {
	gen    uint64          // the assignment their records were polled under
	queues [][]*kgo.Record // by input, in offset order
	since  time.Time       // when an input was first found empty while another had records; zero: none is
}

func newInputOrder(inputs []string, idle time.Duration) *inputOrder {
	if len(inputs) < 2 {
		return nil
	}
	o := &inputOrder{idle: idle, inputs: map[string]int{}, parts: map[int32]*orderedInputs{}}
	for i, t := range inputs {
		o.inputs[t] = i
	}
	return o
}

// ordered returns the records of recs, a poll's, and of those held
// before, to process now, each store partition's in timestamp order, and
// holds the rest (see above). Records of other topics (a re-keying
// stream's input, read to be re-keyed) come first, as they came.
func (st *kafkaStore) ordered(recs []*kgo.Record, now time.Time) []*kgo.Record {
	if st == nil || st.order == nil {
		return recs
	}
	o := st.order
	o.out = o.out[:0]
	st.mu.Lock()
	for p, part := range o.parts {
		if gen, ok := st.assigned[p]; !ok || gen != part.gen {
			delete(o.parts, p) // revoked since: kgo fetches them again for their next owner
		}
	}
	for _, r := range recs {
		i, ok := o.inputs[r.Topic]
		gen, held := st.assigned[r.Partition]
		if !ok || !held {
			o.out = append(o.out, r) // not ordered: an input to re-key, or one of a partition revoked (see errNotHeld)
			continue
		}
		part := o.parts[r.Partition]
		if part == nil {
			part = &orderedInputs{gen: gen, queues: make([][]*kgo.Record, len(o.inputs))}
			o.parts[r.Partition] = part
		}
		part.queues[i] = append(part.queues[i], r)
	}
	st.mu.Unlock()
	ps := make([]int32, 0, len(o.parts))
	for p := range o.parts {
		ps = append(ps, p)
	}
	slices.Sort(ps) // the same order every time
	for _, p := range ps {
		if o.take(o.parts[p], now) {
			delete(o.parts, p)
		}
	}
	return o.out
}

// take appends part's records to o.out in timestamp order while it may,
// and reports whether it took them all.
func (o *inputOrder) take(part *orderedInputs, now time.Time) (all bool) {
	for {
		first, empty := -1, false
		for i, q := range part.queues {
			switch {
			case len(q) == 0:
				empty = true
			case first < 0 || q[0].Timestamp.Before(part.queues[first][0].Timestamp):
				first = i
			}
		}
		switch {
		case first < 0:
			return true
		case !empty:
			part.since = time.Time{}
		case o.idle > 0 && part.since.IsZero():
			part.since = now
			return false
		case now.Sub(part.since) < o.idle:
			return false
		}
		o.out = append(o.out, part.queues[first][0])
		part.queues[first][0] = nil
		if part.queues[first] = part.queues[first][1:]; len(part.queues[first]) == 0 {
			part.queues[first] = nil
		}
	}
}

// heldWait is how long until a held partition's "max-task-idle" ends (0:
// none is held).
func (st *kafkaStore) heldWait(now time.Time) time.Duration {
	if st == nil || st.order == nil {
		return 0
	}
	var wait time.Duration
	for _, part := range st.order.parts {
		if !part.since.IsZero() {
			if d := max(part.since.Add(st.order.idle).Sub(now), time.Millisecond); wait == 0 || d < wait {
				wait = d
			}
		}
	}
	return wait
}

// dropHeld forgets every held record: the batch aborted or the client
// was made anew, and kgo fetches again from the committed offsets.
func (st *kafkaStore) dropHeld() {
	if st != nil && st.order != nil {
		clear(st.order.parts)
	}
}

// commitContext returns ctx for a transaction's end: one whose offset
// commit stops, for each input partition with records held, at its first
// held record, which the transaction did not process.
func (st *kafkaStore) commitContext(ctx context.Context) context.Context {
	first := st.firstHeld()
	if first == nil {
		return ctx
	}
	return kgo.PreTxnCommitFnContext(ctx, func(req *kmsg.TxnOffsetCommitRequest) error {
		stopAtHeld(req, first)
		return nil
	})
}

// firstHeld returns the first record held of each input partition that
// has some; nil when none is held.
func (st *kafkaStore) firstHeld() map[string]map[int32]*kgo.Record {
	if st == nil || st.order == nil || len(st.order.parts) == 0 {
		return nil
	}
	first := map[string]map[int32]*kgo.Record{}
	for p, part := range st.order.parts {
		for _, q := range part.queues {
			if len(q) > 0 {
				if first[q[0].Topic] == nil {
					first[q[0].Topic] = map[int32]*kgo.Record{}
				}
				first[q[0].Topic][p] = q[0]
			}
		}
	}
	return first
}

// stopAtHeld lowers req's offsets to the first held records'.
func stopAtHeld(req *kmsg.TxnOffsetCommitRequest, first map[string]map[int32]*kgo.Record) {
	for i := range req.Topics {
		t := &req.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if r := first[t.Topic][p.Partition]; r != nil && r.Offset < p.Offset {
				p.Offset, p.LeaderEpoch = r.Offset, r.LeaderEpoch
			}
		}
	}
}
