package kafkabpl

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Revalidation: reading a partition again soon after its leader moved.
//
// When a partition's leader moves, kgo, as Java's consumer, asks the new
// leader to confirm the consumer's position (OffsetForLeaderEpoch, KIP-320:
// a log truncated under the position would show) before it fetches there.
// A new leader that has not yet taken the partition up, which is common for
// some tens of milliseconds after the controller moved it, answers
// UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER; kgo then asks again
// only after a fixed second (kgo v1.22.3 consumer.go:2200-2216), Java's
// consumer after retry.backoff.ms (100 ms): that second would leave the
// consumer behind Java's after every leader move (BENCHMARKS.md, "Failover
// beside Java's client").
//
// So when kgo reads an OffsetForLeaderEpoch answer, the consumer checks
// 25 ms later, itself, the positions of its partitions led by the broker
// that answered, and asks again while that broker is not ready, the wait
// doubling to 100 ms (Java's), for up to a second (kgo asks again then).
// The first waits are shorter than Java's because a new leader is usually
// ready within tens of milliseconds. The cost is two or three small
// requests more, to the new leader, after a leader moved, and, when kgo's
// own check had succeeded, the fetch kgo then sent to that leader, which
// setting the positions cancels and kgo sends again: kgo's hooks do not
// show whether its answer was good, so the consumer cannot tell that case
// apart.
//
// A position the leader confirms (its log holds every record before it)
// is set again on kgo's client without an epoch, so that kgo fetches
// there at once instead of waiting out its second. A position the leader
// does not confirm is left to kgo, whose check then decides.
//
// Setting a position is safe only where it changes nothing: the position
// is set to where the partition is, and only for a partition that is
// marked up to it (every record a poll returned is marked, at the next
// poll, before this runs), that holds no record this consumer polled and
// has not returned, and that no seek is waiting for. kgo drops what it has
// buffered of the partition and fetches it again from there. The check
// and the setting run on a polling goroutine, with no other poll of the
// consumer in kgo (gate): no record of the partition can come between.

// revalidateFirst is how long after an OffsetForLeaderEpoch answer the
// consumer checks positions; the wait doubles after each check the leader
// was not ready for, up to revalidateMost. revalidateFor is how long after
// the answer it keeps checking.
const (
	revalidateFirst = 25 * time.Millisecond
	revalidateMost  = 100 * time.Millisecond
	revalidateFor   = time.Second
)

// revalidation is a consumer's schedule of checks.
type revalidation struct {
	mu       sync.Mutex
	node     int32         // the broker whose answer began the checks
	began    time.Time     // when; zero when no check is scheduled or due
	wait     time.Duration // before the next check
	due      bool          // a check is due: the next poll runs it
	checking bool          // a check runs: its own answers begin nothing
	timer    *time.Timer
	// wake ends when a check falls due, so that a poll's wait ends; a
	// new one starts when the check runs.
	wake   context.Context
	fallen context.CancelFunc
}

func newRevalidation() *revalidation {
	rv := &revalidation{}
	rv.wake, rv.fallen = context.WithCancel(context.Background())
	return rv
}

// epochAnswered is kgo's hook for an OffsetForLeaderEpoch answer read from
// broker node: it schedules a check, unless one is scheduled already or
// the answer is the consumer's own.
func (rv *revalidation) epochAnswered(node int32) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.checking || !rv.began.IsZero() {
		return
	}
	rv.node, rv.began, rv.wait = node, time.Now(), revalidateFirst
	rv.scheduleLocked()
}

func (rv *revalidation) scheduleLocked() {
	rv.timer = time.AfterFunc(rv.wait, func() {
		rv.mu.Lock()
		defer rv.mu.Unlock()
		rv.timer = nil
		if !rv.began.IsZero() && !rv.due {
			rv.due = true
			rv.fallen()
		}
	})
}

// waiting returns the context that ends when a check falls due.
func (rv *revalidation) waiting() context.Context {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.wake
}

// take returns the broker whose partitions a due check is for, and
// whether one is due, and marks the check as running.
func (rv *revalidation) take() (node int32, began time.Time, ok bool) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if !rv.due {
		return 0, time.Time{}, false
	}
	rv.due, rv.checking = false, true
	rv.wake, rv.fallen = context.WithCancel(context.Background())
	return rv.node, rv.began, true
}

// done ends a check: another follows, after twice the last wait (at most
// revalidateMost), when again is set and revalidateFor has not passed;
// else the schedule is over.
func (rv *revalidation) done(again bool) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.checking = false
	if again && time.Since(rv.began) < revalidateFor {
		rv.wait = min(2*rv.wait, revalidateMost)
		rv.scheduleLocked()
		return
	}
	rv.began = time.Time{}
}

// stop cancels a scheduled check, when the consumer is destroyed.
func (rv *revalidation) stop() {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.timer != nil {
		rv.timer.Stop()
		rv.timer = nil
	}
	rv.began = time.Time{}
}

// revalidate runs a due check, if one is due: see the file's comment. It
// is called from a poll, before kgo is polled.
func (cs *consumerState) revalidate(ctx context.Context) {
	node, _, ok := cs.rv.take()
	if !ok {
		return
	}
	again := false
	defer func() { cs.rv.done(again) }()
	cl := cs.h.cl
	cands := cs.revalidatable(node)
	if len(cands) == 0 {
		return
	}
	confirmed, retry := confirmPositions(ctx, cl, node, cands, cs.h.cfg.requestTimeout)
	again = retry
	if len(confirmed) == 0 {
		return
	}
	// The positions are set again only if they are still where they were
	// confirmed: with the gate held, no poll can move them meanwhile.
	cs.subMu.Lock() // no seek meanwhile
	defer cs.subMu.Unlock()
	cs.gate.Lock()
	defer cs.gate.Unlock()
	now := cs.revalidatable(node)
	set := map[string]map[int32]kgo.EpochOffset{}
	for t, ps := range confirmed {
		for p, at := range ps {
			if now[t][p] == at {
				if set[t] == nil {
					set[t] = map[int32]kgo.EpochOffset{}
				}
				set[t][p] = kgo.EpochOffset{Epoch: -1, Offset: at.Offset}
			}
		}
	}
	if len(set) > 0 {
		cl.SetOffsets(set)
	}
}

// revalidatable returns the positions that may be set again (see the
// file's comment) of the partitions broker node leads.
func (cs *consumerState) revalidatable(node int32) partitions[kgo.EpochOffset] {
	cl := cs.h.cl
	polled, marked := cl.UncommittedOffsets(), cl.MarkedOffsets()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := partitions[kgo.EpochOffset]{}
	for t, ps := range polled {
		for p, at := range ps {
			if at.Epoch < 0 || marked[t][p] != at || cs.starting.has(t, p) || cs.unpositioned.has(t, p) ||
				cs.seeks.has(t, p) || cs.seeks.has(t, -1) || cs.holds(t, p) {
				continue
			}
			if leader, _, err := cl.PartitionLeader(t, p); err != nil || leader != node {
				continue
			}
			out.set(t, p, at)
		}
	}
	return out
}

// holds says whether the consumer holds a record of partition p of topic
// t that a poll has not returned; cs.mu is held.
func (cs *consumerState) holds(t string, p int32) bool {
	for _, r := range cs.held {
		if r.Topic == t && r.Partition == p {
			return true
		}
	}
	return false
}

// confirmPositions asks broker node, as kgo does, whether its log holds
// every record before each position: the positions it confirms, and
// whether any it could not answer for yet (it has not taken the
// partition up), to ask again.
func confirmPositions(ctx context.Context, cl *kgo.Client, node int32, at partitions[kgo.EpochOffset], timeout time.Duration) (confirmed partitions[kgo.EpochOffset], retry bool) {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	for t, ps := range at {
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = t
		for p, eo := range ps {
			rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = p, -1, eo.Epoch
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(ctx, min(timeout, revalidateFor))
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.Broker(int(node)))
	if err != nil {
		return nil, false
	}
	confirmed = partitions[kgo.EpochOffset]{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			eo, ok := at[rt.Topic][rp.Partition]
			if !ok {
				continue
			}
			switch err := kerr.ErrorForCode(rp.ErrorCode); {
			case err == nil && rp.LeaderEpoch >= 0 && rp.EndOffset >= eo.Offset:
				confirmed.set(rt.Topic, rp.Partition, eo)
			case err == kerr.UnknownTopicOrPartition || err == kerr.NotLeaderForPartition ||
				err == kerr.UnknownLeaderEpoch || err == kerr.FencedLeaderEpoch || err == kerr.LeaderNotAvailable:
				retry = true
			}
		}
	}
	return confirmed, retry
}
