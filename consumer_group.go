package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer in its group: kgo's callbacks when partitions are
// assigned, revoked or lost, the offsets a partition starts from, and
// commits.

// groupOpts are the kgo options that tie the group's life cycle to the
// consumer's state, and have its group stats told of rebalances, commits
// and lags. kgo cannot both mark records for commit and disable
// autocommitting, so with auto-commit off the interval is made so long that
// only kafka-commit commits.
func (cs *consumerState) groupOpts() []kgo.Opt {
	interval := cs.h.cfg.autoCommitInterval
	if !cs.h.cfg.autoCommit {
		interval = time.Duration(math.MaxInt64)
	}
	return append(cs.h.group.rebalanceOpts(cs.onAssigned, cs.onRevoked, cs.onLost),
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(interval),
		kgo.AutoCommitCallback(cs.h.group.autoCommitted),
		kgo.AdjustFetchOffsetsFn(cs.adjustOffsets),
	)
}

// onAssigned records what the group gave the consumer. kgo calls it before
// it fetches the partitions' committed offsets (kgo v1.22.3
// consumer_group.go:1153-1160), so the partitions are starting until
// adjustOffsets has seen those offsets: a seek meanwhile is left for
// adjustOffsets to apply (see consumerState.seek). Each assignment gets a
// new number, so a seek can tell that a partition was assigned again while
// it asked the brokers for offsets.
func (cs *consumerState) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	cs.at("assigning")
	cs.mu.Lock()
	cs.assignments++
	for t, ps := range assigned {
		delete(cs.deleted, t)
		for _, p := range ps {
			cs.assigned.set(t, p, cs.assignments)
			cs.starting.set(t, p, true)
		}
	}
	cs.mu.Unlock()
	cs.at("assigned")
}

// onRevoked commits what was polled and came back from (when auto-commit
// is on, as kgo's own default does) and forgets held records of
// partitions we no longer own: their new owner will deliver them, and
// what the latest poll returned from them too (see onLost).
func (cs *consumerState) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	if cs.h.cfg.autoCommit {
		cs.commitMarked(ctx, cl) // a failure means the new owner re-reads: at-least-once
	}
	cs.onLost(ctx, cl, revoked)
}

// onLost notes what the latest polls returned from partitions the group
// took away and no commit covers: the next commit reports it (see
// commit). A commit in flight may cover them, and what is marked for
// commit stays marked until its answer: so onLost first waits for the
// commit. Under KIP-848's protocol the brokers then have that commit
// before they hear that the partitions were given up (kgo acknowledges a
// revocation only once this callback returned), and the next owner
// starts after what it committed. Without the wait, a commit that
// covered the partitions was reported as lost (issue 47).
func (cs *consumerState) onLost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	cs.h.commitMu.Lock()
	defer cs.h.commitMu.Unlock()
	marked := cl.MarkedOffsets() // polled and not committed; kgo forgets them next
	cs.mu.Lock()
	defer cs.mu.Unlock()
	gone := func(t string, p int32) bool { return slices.Contains(lost[t], p) }
	// What the latest poll returned from them is not committed either,
	// and is never marked now: the partitions' next owner reads it again.
	// uncommitted keeps, for each, the offset after the last record a
	// poll returned: the group has those records back unless its
	// committed offset reaches it.
	for t, ps := range lost {
		for _, p := range ps {
			next := int64(-1)
			if m, isMarked := marked[t][p]; isMarked {
				next = m.Offset
			}
			for _, r := range cs.pending {
				if r.Topic == t && r.Partition == p {
					next = max(next, r.Offset+1)
				}
			}
			if prev, ok := cs.uncommitted[t][p]; ok {
				next = max(next, prev)
			}
			if next >= 0 && !cs.deleted[t] {
				cs.uncommitted.set(t, p, next)
			}
		}
	}
	cs.pending = slices.DeleteFunc(cs.pending, func(r *kgo.Record) bool { return gone(r.Topic, r.Partition) })
	cs.assigned.removeIf(gone)
	cs.starting.removeIf(gone)
	cs.positioned(gone)
	cs.held = slices.DeleteFunc(cs.held, func(r *kgo.Record) bool { return gone(r.Topic, r.Partition) })
}

// adjustOffsets runs when partitions are assigned, once their committed
// offsets are known: it applies waiting seeks, then the subscribe-time start
// offsets to partitions with no committed offset.
//
// Under "none", a partition with no committed offset is given offset 0 and
// paused, and polls report it until a seek moves it. Left at kgo's
// AtCommitted, kgo would report it in one poll only (one fake fetch
// error) and give it no cursor (kgo v1.22.3 consumer.go:1437-1442); and
// SetOffsets, which seek uses, drops a partition with no cursor
// (consumer.go:1280-1302): no seek could revive it, and every later poll
// would return nothing and no error. A paused cursor is one SetOffsets
// moves; offset 0 is never fetched, as the partition is resumed only once
// a seek has replaced it.
//
// It runs under cs.mu, as seeks decide under it what waits for the
// assignment: a seek either came first, and is applied here, or sees the
// partitions no longer starting and moves them itself (kgo then keeps that
// position over the fetched one: kgo v1.22.3 consumer_group.go:2986-2988
// records a SetOffsets made while the offsets are fetched, and 2345-2356
// prefers it to what this returns).
func (cs *consumerState) adjustOffsets(_ context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	cs.applyOffsets(offsets)
	cs.at("adjusted")
	return offsets, nil
}

// applyOffsets is the work of adjustOffsets, done under cs.mu.
func (cs *consumerState) applyOffsets(offsets map[string]map[int32]kgo.Offset) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var unpositioned map[string][]int32
	for t, ps := range offsets {
		for p, o := range ps {
			if seek, ok := cs.seeks[t][p]; ok {
				ps[p] = seek
			} else if seek, ok := cs.seeks[t][-1]; ok {
				ps[p] = seek
			} else if o.EpochOffset().Offset < 0 && cs.h.cfg.autoOffsetReset == resetLatest {
				if st, known := cs.start[t]; known {
					if at, ok := st[p]; ok {
						ps[p] = kgo.NewOffset().At(at)
					} else { // the topic or partition is newer than the subscription
						ps[p] = kgo.NewOffset().AtStart()
					}
				}
			} else if o.EpochOffset().Offset < 0 && cs.h.cfg.autoOffsetReset == resetNone {
				ps[p] = kgo.NewOffset().At(0)
				if unpositioned == nil {
					unpositioned = map[string][]int32{}
				}
				unpositioned[t] = append(unpositioned[t], p)
			}
		}
	}
	for t := range offsets {
		delete(cs.seeks, t) // a seek applies to the topic's next assignment only
	}
	// The partitions have their offsets now; one assigned again drops
	// what it was left with.
	fetched := func(t string, p int32) bool { _, ok := offsets[t][p]; return ok }
	cs.starting.removeIf(fetched)
	cs.positioned(fetched)
	if len(unpositioned) > 0 {
		for t, ps := range unpositioned {
			for _, p := range ps {
				cs.unpositioned.set(t, p, true)
			}
		}
		cs.h.cl.PauseFetchPartitions(unpositioned) // before kgo assigns them: never fetched at 0
		cs.wake()
		cs.wakeCtx, cs.wake = context.WithCancel(context.Background())
	}
}

// positioned removes the partitions for which is returns true from
// unpositioned, and resumes fetching them: they were sought, revoked or
// dropped. Call it with cs.mu held, so that a partition is paused exactly
// while it is in unpositioned.
func (cs *consumerState) positioned(is func(t string, p int32) bool) {
	if resume := cs.unpositioned.removeIf(is); len(resume) > 0 {
		cs.h.cl.ResumeFetchPartitions(resume)
	}
}

// errNoOffset is the cause of the error a poll returns while partitions
// have no position.
var errNoOffset = errors.New(`partition has no prior committed offset and auto-offset-reset is "none": seek to give it a position`)

// noPosition returns the error of a poll of topics (nil: all) while some of
// their partitions have no position, naming each, or nil. Call it with
// cs.mu held.
func (cs *consumerState) noPosition(topics []string) error {
	if len(cs.unpositioned) == 0 {
		return nil
	}
	var names []string
	for _, tp := range cs.unpositioned.sorted() {
		if topics != nil && !slices.Contains(topics, tp.Topic) {
			continue
		}
		for _, p := range tp.Partitions {
			names = append(names, fmt.Sprintf("topic %q partition %d", tp.Topic, p))
		}
	}
	if names == nil {
		return nil
	}
	return Wrapf(ErrKafka, errNoOffset, "%s", strings.Join(names, ", "))
}

// Commit commits the offsets of every record polled so far and returns
// when the group coordinator has stored them, within request-timeout.
// Records a poll has not returned yet are never committed.
//
// Hazard: the group can take partitions from a consumer at any time, not
// only during a poll (a member joins or leaves, or this consumer's session
// ends because the brokers went away). Records polled from a partition
// taken before they were committed go to its next owner again. With
// enable-auto-commit on they are committed as the partitions are taken,
// if the coordinator can be reached and the caller has come back from the
// poll that returned them (see [Library.Poll]); otherwise Commit then
// fails once with [ErrNotCommitted], naming the topics and partitions,
// rather than report a commit that did not happen. (Java's consumer
// throws CommitFailedException.)
//
// A share consumer's Commit accepts the records of its latest poll that
// are not acknowledged, sends its acknowledgements (see [Library.Ack])
// and returns when the brokers have taken them, within request-timeout.
// It fails once with [ErrNotCommitted], naming the topics and partitions,
// when the brokers refused acknowledgements since the last Commit (a
// record's acquisition lock had ended): the group delivers those records
// again.
func (lib *Library) Commit(ctx context.Context, id string) error {
	_, err := withConsumers(lib, "kafka-commit", id, func(cs *consumerState) (struct{}, error) {
		return struct{}{}, cs.commit(ctx)
	}, func(ss *shareState) (struct{}, error) {
		return struct{}{}, ss.commit(ctx)
	})
	return err
}

// commit commits what was polled, then reports, once, what the group took
// away before it could be committed.
func (cs *consumerState) commit(ctx context.Context) error {
	if err := cs.commitPolled(ctx); err != nil {
		return err
	}
	cs.mu.Lock()
	lost := cs.uncommitted
	cs.uncommitted = partitions[int64]{}
	var back []string // topics of lost partitions the group gave back to this consumer
	for t, ps := range lost {
		for p := range ps {
			if cs.assigned.has(t, p) && !slices.Contains(back, t) {
				back = append(back, t)
			}
		}
	}
	cs.mu.Unlock()
	if len(back) > 0 {
		cs.reclaimed(ctx, lost, back)
	}
	if len(lost) == 0 {
		return nil
	}
	var where []string
	for _, tp := range lost.sorted() {
		where = append(where, fmt.Sprintf("topic %q partitions %v", tp.Topic, tp.Partitions))
	}
	return Errorf(ErrNotCommitted, "%s: this consumer lost them (the group rebalanced, or its session ended) before the records it polled from them were committed; those records will be delivered again",
		strings.Join(where, ", "))
}

// reclaimed drops from lost the partitions the group gave back to this
// consumer and whose committed offset, after this consumer's commit, is
// past what it had polled from them before losing them: their records
// did not go back to the group, so they will not be delivered again. (A
// member that gets its partitions back in the same rebalance carries on
// where it was.) When the brokers cannot say, lost stays as it is.
func (cs *consumerState) reclaimed(ctx context.Context, lost partitions[int64], topics []string) {
	ctx, cancel := context.WithTimeout(ctx, cs.h.cfg.requestTimeout)
	defer cancel()
	committed, err := cs.h.adm.FetchOffsetsForTopics(ctx, cs.h.cfg.group, topics...)
	if err != nil {
		return
	}
	lost.removeIf(func(t string, p int32) bool {
		cs.mu.Lock()
		mine := cs.assigned.has(t, p)
		cs.mu.Unlock()
		o, ok := committed.Lookup(t, p)
		return mine && ok && o.Err == nil && o.At >= lost[t][p]
	})
}

// commitPolled commits what was polled and is still this consumer's,
// within request-timeout.
func (cs *consumerState) commitPolled(ctx context.Context) error {
	cs.markPending()
	ctx, cancel := context.WithTimeout(ctx, cs.h.cfg.requestTimeout)
	defer cancel()
	return cs.commitMarked(ctx, cs.h.cl)
}

// commitMarked commits what is marked, and tells the group stats of the
// commit when there was something to commit. The group's callbacks wait
// for it (see onLost).
func (cs *consumerState) commitMarked(ctx context.Context, cl *kgo.Client) error {
	cs.h.commitMu.Lock()
	defer cs.h.commitMu.Unlock()
	if len(cs.h.group.hooks) > 0 && len(cl.MarkedOffsets()) == 0 {
		return nil // kgo would send nothing
	}
	err := cl.CommitMarkedOffsets(ctx)
	if err != nil {
		err = cs.h.requestError(ctx, err)
	}
	if len(cs.h.group.hooks) > 0 {
		cs.h.group.committed(err)
	}
	return err
}

// markPending marks for commit what the latest poll returned: the caller
// has come back for more, or to commit, or to destroy the consumer.
func (cs *consumerState) markPending() {
	cs.mu.Lock()
	recs := cs.pending
	cs.pending = nil
	cs.mu.Unlock()
	if len(recs) == 0 {
		return
	}
	cs.h.cl.MarkCommitRecords(recs...) // sorts recs in place: they are ours alone now
	// The next poll's go in the same array, so that a poll does not
	// allocate one; it holds no record meanwhile.
	clear(recs)
	cs.mu.Lock()
	if cs.pending == nil {
		cs.pending = recs[:0]
	}
	cs.mu.Unlock()
}

// leave commits what was polled when auto-commit is on, then leaves the
// group (see handle.leaveGroup), each within request-timeout. Like Java's
// close, it does not report records lost to an earlier rebalance: only
// kafka-commit promises that everything polled is committed.
func (cs *consumerState) leave(ctx context.Context) (detached bool, err error) {
	cs.mu.Lock()
	owns := len(cs.assigned) > 0
	cs.mu.Unlock()
	if cs.h.cfg.autoCommit && owns { // in a rebalance it owns nothing: nothing to commit
		err = cs.commitPolled(ctx)
	}
	cs.h.net.dialer.close()
	cs.rv.stop()
	detached, lerr := cs.h.leaveGroup(ctx)
	if err == nil {
		err = lerr
	}
	return detached, err
}

// leaveGroup leaves the handle's group within request-timeout. The caller
// closes the client: in the background when leaveGroup says detached.
//
// kgo leaves only once a join or sync in flight is over, and a group in a
// rebalance waits for every member it knows, a dead one included, until
// that one's session ends (45 s by default): a leave then would wait as
// long, and a client closed meanwhile would never leave, holding up the
// next rebalance in turn. So when kgo has not left within leaveGrace, the
// handle sends a LeaveGroup of its own, which the coordinator takes in any
// state. The join in flight may still hold kgo's own leave, and so the
// client's Close, until the group is done with it: then leaveGroup says
// detached.
func (h *handle) leaveGroup(ctx context.Context) (detached bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.requestTimeout)
	defer cancel()
	cl := h.cl // read here: a stream's reinit replaces it once this returns
	member, _ := cl.GroupMetadata()
	left := make(chan error, 1)
	h.bg.Go(fmt.Sprintf("%s %s leaving its group", h.kind, h.id), func() { left <- cl.LeaveGroupContext(ctx) })
	var lerr error
	select {
	case lerr = <-left:
	case <-time.After(leaveGrace):
		if member != "" {
			err = h.leaveNow(ctx, member)
		}
		select {
		case lerr = <-left:
		case <-time.After(leaveGrace):
			return true, err
		}
	}
	if lerr != nil && err == nil && ctx.Err() != nil {
		err = h.requestError(ctx, lerr)
	}
	return false, err
}

// leaveGrace is how long leave lets kgo leave the group before it sends a
// LeaveGroup of its own.
const leaveGrace = time.Second

// leaveNow asks the group's coordinator to take member out of the group.
func (h *handle) leaveNow(ctx context.Context, member string) error {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = h.cfg.group
	req.MemberID = member
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = member
	m.Reason = kmsg.StringPtr("kafkabpl: destroyed while the group rebalances")
	req.Members = append(req.Members, m)
	resp, err := req.RequestWith(ctx, h.cl)
	if err != nil {
		return Wrapf(ErrTimeout, h.requestError(ctx, err), "group %q: could not leave", h.cfg.group)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) {
		return Wrapf(ErrKafka, err, "group %q: leaving", h.cfg.group)
	}
	return nil
}
