package kafkabpl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record is one received message. It is a small view of the record the
// client fetched: a poll copies nothing per record, and a key or value is
// checked and decoded only when asked for.
type Record struct {
	r   *kgo.Record
	cfg *config // the consumer's deserializers
}

// Topic returns the record's topic.
func (r *Record) Topic() string { return r.r.Topic }

// Partition returns the record's partition.
func (r *Record) Partition() int32 { return r.r.Partition }

// Offset returns the record's offset in its partition.
func (r *Record) Offset() int64 { return r.r.Offset }

// Timestamp returns the record's timestamp (its create time, unless the
// topic is configured for log-append time).
func (r *Record) Timestamp() time.Time { return r.r.Timestamp }

// Headers returns the record's headers, in order; a repeated key is kept.
func (r *Record) Headers() []Header {
	if len(r.r.Headers) == 0 {
		return nil
	}
	hs := make([]Header, len(r.r.Headers))
	for i, h := range r.r.Headers {
		hs[i] = Header{Key: h.Key, Value: h.Value}
	}
	return hs
}

// KeyBytes returns the key as received; nil is Kafka's null. It shares
// memory with the fetched batch: read it, do not modify it.
func (r *Record) KeyBytes() []byte { return r.r.Key }

// ValueBytes returns the value as received; nil is Kafka's null. It shares
// memory with the fetched batch: read it, do not modify it.
func (r *Record) ValueBytes() []byte { return r.r.Value }

// Err, when not nil, says why the key or value cannot be deserialized by
// the consumer's deserializers. Such a record is still delivered (and
// committed), so a bad message never stalls the consumer and is never
// dropped silently.
func (r *Record) Err() error {
	if err := r.cfg.keyDeser.checkAt(r.r.Key, "key"); err != nil {
		return err
	}
	return r.cfg.valDeser.checkAt(r.r.Value, "value")
}

// Key returns the key as the consumer's key-deserializer reads it; nil for
// a null key, and the raw bytes when Err is set. It decodes on every call:
// keep the result rather than calling it twice.
func (r *Record) Key() any { return r.decoded(r.cfg.keyDeser, r.r.Key) }

// Value returns the value as the consumer's value-deserializer reads it;
// nil for a null value, and the raw bytes when Err is set. It decodes on
// every call: keep the result rather than calling it twice.
func (r *Record) Value() any { return r.decoded(r.cfg.valDeser, r.r.Value) }

// decoded is b deserialized by s, or b itself when the record has an
// error (in its key or its value: then neither is decoded).
func (r *Record) decoded(s *serde, b []byte) any {
	if b == nil {
		return nil
	}
	if r.Err() != nil {
		return b
	}
	v, err := s.decodeAt(b, "")
	if err != nil { // cannot happen: Err checked b with s
		return b
	}
	return v
}

// TopicRecords is one topic's records in a poll, in partition and offset
// order.
type TopicRecords struct {
	Topic   string
	Records []Record
}

// Polled is what a poll returns: every topic asked for, sorted by name, each
// with its new records (none when nothing came).
type Polled struct {
	Topics []TopicRecords
}

// Len returns the number of records in all topics.
func (p *Polled) Len() int {
	n := 0
	for _, t := range p.Topics {
		n += len(t.Records)
	}
	return n
}

// Position is where [Library.Seek] moves a consumer to.
type Position struct {
	at   int64 // seekBeginning, seekEnd, an offset, or a timestamp
	time bool
}

const (
	seekBeginning = -2
	seekEnd       = -1
)

// SeekBeginning is the oldest offset still stored.
func SeekBeginning() Position { return Position{at: seekBeginning} }

// SeekEnd is the offset the next message will get.
func SeekEnd() Position { return Position{at: seekEnd} }

// SeekOffset is an exact offset; it must not be negative. An offset past
// the end is reset by the consumer's auto-offset-reset.
func SeekOffset(offset int64) Position { return Position{at: offset} }

// SeekTimestamp is the first offset whose timestamp is at or after t, or
// the end when there is none.
func SeekTimestamp(t time.Time) Position { return Position{at: t.UnixMilli(), time: true} }

// consumerState is what a consumer handle keeps beside its kgo client.
//
// Subscribing is made deterministic with start offsets: under "latest", a
// partition with no committed offset starts where the topic ended when
// kafka-subscribe ran, not where it ends when the group is finally joined,
// so nothing sent after subscribe returns is skipped. A topic that did not
// exist then starts from its beginning.
//
// Under "none", a partition assigned with no committed offset (and no seek
// waiting for it) has no position: it is kept in unpositioned, and paused,
// until a seek gives it one; meanwhile polls report it (see noPosition).
type consumerState struct {
	h     *handle
	subMu sync.Mutex // serializes subscription changes and seeks

	mu           sync.Mutex
	topics       map[string]bool
	sorted       []string                        // topics, sorted; nil when topics changed
	start        map[string]map[int32]int64      // topic -> partition -> start offset
	seeks        map[string]map[int32]kgo.Offset // seeks waiting for assignment; partition -1 = all
	assigned     map[string]map[int32]bool       // what the group gave us
	unpositioned map[string]map[int32]bool       // "none": assigned, no offset; paused while here
	held         []*kgo.Record                   // polled, not yet returned to the caller
	heldErr      error                           // fetched with records; the next fetch returns it

	// wakeCtx ends when a partition loses its position, so a poll waiting
	// for records reports it at once; wake ends it, and a new one starts.
	wakeCtx context.Context
	wake    context.CancelFunc

	// uncommitted holds the partitions the group took from this member
	// (lost, or revoked) while they had records a poll returned and no
	// commit covered; those records go to the next owner again. The next
	// commit reports them, once.
	uncommitted map[string][]int32
	// deleted holds the topics deleted through this Library and not
	// assigned since: their records are gone, so losing them is no loss.
	deleted map[string]bool

	// pending is the last record of each partition the latest poll
	// returned. They are marked for commit when the next poll, commit or
	// destroy comes, not when they are returned: as with Java's consumer,
	// a background auto-commit never covers records the caller may still
	// be working on, so a crash then redelivers them (at least once).
	pending []*kgo.Record
}

func newConsumerState(h *handle) *consumerState {
	cs := &consumerState{
		h:            h,
		topics:       map[string]bool{},
		start:        map[string]map[int32]int64{},
		seeks:        map[string]map[int32]kgo.Offset{},
		assigned:     map[string]map[int32]bool{},
		unpositioned: map[string]map[int32]bool{},
	}
	cs.wakeCtx, cs.wake = context.WithCancel(context.Background())
	return cs
}

// groupOpts are the kgo options that tie the group's life cycle to the
// state above. kgo cannot both mark records for commit and disable
// autocommitting, so with auto-commit off the interval is made so long that
// only kafka-commit commits.
func (cs *consumerState) groupOpts() []kgo.Opt {
	interval := cs.h.cfg.autoCommitInterval
	if !cs.h.cfg.autoCommit {
		interval = time.Duration(math.MaxInt64)
	}
	return []kgo.Opt{
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(interval),
		kgo.OnPartitionsAssigned(cs.onAssigned),
		kgo.OnPartitionsRevoked(cs.onRevoked),
		kgo.OnPartitionsLost(cs.onLost),
		kgo.AdjustFetchOffsetsFn(cs.adjustOffsets),
	}
}

func (cs *consumerState) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for t, ps := range assigned {
		delete(cs.deleted, t)
		if cs.assigned[t] == nil {
			cs.assigned[t] = map[int32]bool{}
		}
		for _, p := range ps {
			cs.assigned[t][p] = true
		}
	}
}

// onRevoked commits what was polled and came back from (when auto-commit
// is on, as kgo's own default does) and forgets held records of
// partitions we no longer own: their new owner will deliver them, and
// what the latest poll returned from them too (see onLost).
func (cs *consumerState) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	if cs.h.cfg.autoCommit {
		cl.CommitMarkedOffsets(ctx) // a failure means the new owner re-reads: at-least-once
	}
	cs.onLost(ctx, cl, revoked)
}

func (cs *consumerState) onLost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	marked := cl.MarkedOffsets() // polled and not committed; kgo forgets them next
	cs.mu.Lock()
	defer cs.mu.Unlock()
	gone := func(t string, p int32) bool { return slices.Contains(lost[t], p) }
	// What the latest poll returned from them is not committed either,
	// and is never marked now: the partitions' next owner reads it again.
	pending := func(t string, p int32) bool {
		return slices.ContainsFunc(cs.pending, func(r *kgo.Record) bool { return r.Topic == t && r.Partition == p })
	}
	for t, ps := range lost {
		for _, p := range ps {
			_, isMarked := marked[t][p]
			if (isMarked || pending(t, p)) && !cs.deleted[t] && !slices.Contains(cs.uncommitted[t], p) {
				if cs.uncommitted == nil {
					cs.uncommitted = map[string][]int32{}
				}
				cs.uncommitted[t] = append(cs.uncommitted[t], p)
			}
		}
	}
	cs.pending = slices.DeleteFunc(cs.pending, func(r *kgo.Record) bool { return gone(r.Topic, r.Partition) })
	for t, ps := range lost {
		for _, p := range ps {
			delete(cs.assigned[t], p)
		}
	}
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
func (cs *consumerState) adjustOffsets(_ context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
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
	// A partition assigned again drops what it was left with.
	cs.positioned(func(t string, p int32) bool { _, ok := offsets[t][p]; return ok })
	if len(unpositioned) > 0 {
		for t, ps := range unpositioned {
			if cs.unpositioned[t] == nil {
				cs.unpositioned[t] = map[int32]bool{}
			}
			for _, p := range ps {
				cs.unpositioned[t][p] = true
			}
		}
		cs.h.cl.PauseFetchPartitions(unpositioned) // before kgo assigns them: never fetched at 0
		cs.wake()
		cs.wakeCtx, cs.wake = context.WithCancel(context.Background())
	}
	return offsets, nil
}

// positioned removes the partitions for which is returns true from
// unpositioned, and resumes fetching them: they were sought, revoked or
// dropped. Call it with cs.mu held, so that a partition is paused exactly
// while it is in unpositioned.
func (cs *consumerState) positioned(is func(t string, p int32) bool) {
	var resume map[string][]int32
	for t, ps := range cs.unpositioned {
		for p := range ps {
			if is(t, p) {
				delete(ps, p)
				if resume == nil {
					resume = map[string][]int32{}
				}
				resume[t] = append(resume[t], p)
			}
		}
		if len(ps) == 0 {
			delete(cs.unpositioned, t)
		}
	}
	if len(resume) > 0 {
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
	for _, t := range slices.Sorted(maps.Keys(cs.unpositioned)) {
		if topics != nil && !slices.Contains(topics, t) {
			continue
		}
		for _, p := range slices.Sorted(maps.Keys(cs.unpositioned[t])) {
			names = append(names, fmt.Sprintf("topic %q partition %d", t, p))
		}
	}
	if names == nil {
		return nil
	}
	return wrapf(errKafka, errNoOffset, "%s", strings.Join(names, ", "))
}

// subscription returns the subscribed topics, sorted. Every poll asks, so
// the sorted slice is kept until the subscription changes; callers must
// not modify it.
func (cs *consumerState) subscription() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.sorted == nil {
		cs.sorted = slices.Sorted(maps.Keys(cs.topics))
	}
	return cs.sorted
}

// subscribe adds topics to the subscription, or with replace makes it
// exactly topics. It returns the subscription after the call, sorted.
func (cs *consumerState) subscribe(ctx context.Context, topics []string, replace bool) ([]string, error) {
	for _, t := range topics {
		if err := checkTopic(t); err != nil {
			return nil, errorf(ErrInvalidArgument, "topics: %v", err)
		}
	}
	cs.subMu.Lock()
	defer cs.subMu.Unlock()

	cs.mu.Lock()
	var added, removed []string
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
		if !cs.topics[t] && !slices.Contains(added, t) {
			added = append(added, t)
		}
	}
	if replace {
		for t := range cs.topics {
			if !want[t] {
				removed = append(removed, t)
			}
		}
	}
	cs.mu.Unlock()

	if len(removed) > 0 {
		if err := cs.drop(ctx, removed); err != nil {
			return nil, err
		}
	}
	if len(added) > 0 {
		start, err := cs.startOffsets(ctx, added)
		if err != nil {
			return nil, err
		}
		cs.mu.Lock()
		for _, t := range added {
			cs.topics[t] = true
			cs.sorted = nil
			if start != nil {
				cs.start[t] = start[t]
			}
		}
		cs.mu.Unlock()
		cs.h.cl.AddConsumeTopics(added...)
	}
	return slices.Clone(cs.subscription()), nil
}

// drop removes topics from the subscription, committing what was polled
// from them first when auto-commit is on.
func (cs *consumerState) drop(ctx context.Context, topics []string) error {
	if cs.h.cfg.autoCommit {
		if err := cs.commitPolled(ctx); err != nil {
			return err
		}
	}
	cs.mu.Lock()
	for _, t := range topics {
		delete(cs.topics, t)
		cs.sorted = nil
		delete(cs.start, t)
		delete(cs.seeks, t)
	}
	cs.positioned(func(t string, _ int32) bool { return slices.Contains(topics, t) })
	cs.held = slices.DeleteFunc(cs.held, func(r *kgo.Record) bool { return slices.Contains(topics, r.Topic) })
	cs.mu.Unlock()
	cs.h.cl.PurgeTopicsFromConsuming(topics...)
	return nil
}

// startOffsets asks the brokers, under "latest", where each topic ends now;
// a topic that does not exist yet maps to an empty map (start from its
// beginning once it appears). When the consumer may create topics it first
// asks for them to be created, as Java's consumer does on subscribe. Under
// "earliest" and "none" it returns nil and asks nothing.
func (cs *consumerState) startOffsets(ctx context.Context, topics []string) (map[string]map[int32]int64, error) {
	cfg := cs.h.cfg
	if cfg.autoOffsetReset != resetLatest {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.requestTimeout)
	defer cancel()
	if cfg.allowAutoCreate {
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = true
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
		if _, err := req.RequestWith(ctx, cs.h.cl); err != nil {
			return nil, cs.h.requestError(ctx, err)
		}
	}
	list := cs.h.adm.ListEndOffsets
	if cfg.readCommitted {
		list = cs.h.adm.ListCommittedOffsets
	}
	listed, err := list(ctx, topics...)
	if err != nil {
		return nil, cs.h.requestError(ctx, err)
	}
	start := map[string]map[int32]int64{}
	for _, t := range topics {
		start[t] = map[int32]int64{}
		for p, o := range listed[t] {
			switch {
			case o.Err == nil:
				start[t][p] = o.Offset
			case errors.Is(o.Err, kerr.UnknownTopicOrPartition):
				// not created yet: from the beginning once it is
			default:
				return nil, wrapf(errKafka, o.Err, "topic %q partition %d", t, p)
			}
		}
	}
	return start, nil
}

// forget drops deleted topics from the consumer's client and subscribes to
// them again, so it reads them once they are created again. A topic
// created again is newer than the subscription, so it is read from its
// beginning (under "latest" too), and nothing of the old topic that a poll
// had not returned is kept.
func (cs *consumerState) forget(deleted []string) {
	cs.subMu.Lock()
	defer cs.subMu.Unlock()
	cs.mu.Lock()
	var topics []string
	for _, t := range deleted {
		if cs.topics[t] {
			topics = append(topics, t)
			cs.start[t] = map[int32]int64{} // known, with no partitions: from the beginning
			delete(cs.seeks, t)
			delete(cs.assigned, t)
			delete(cs.uncommitted, t)
			if cs.deleted == nil {
				cs.deleted = map[string]bool{}
			}
			cs.deleted[t] = true
		}
	}
	cs.positioned(func(t string, _ int32) bool { return slices.Contains(topics, t) })
	cs.held = slices.DeleteFunc(cs.held, func(r *kgo.Record) bool { return slices.Contains(topics, r.Topic) })
	cs.mu.Unlock()
	if len(topics) > 0 {
		cs.h.cl.PurgeTopicsFromClient(topics...)
		cs.h.cl.AddConsumeTopics(topics...)
	}
}

// subscribedToAny reports whether the consumer is subscribed to any of
// topics.
func (cs *consumerState) subscribedToAny(topics []string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, t := range topics {
		if cs.topics[t] {
			return true
		}
	}
	return false
}

// Subscribe sets a consumer's subscription to exactly topics and returns
// it, sorted; no topics unsubscribes from all.
//
// Subscribing is deterministic: once Subscribe returns, every message sent
// afterwards to a subscribed topic is returned by following polls, even
// with auto-offset-reset "latest". To make that so, under "latest"
// Subscribe asks the brokers for the new topics' end offsets (within
// request-timeout), and a partition with no committed offset starts there.
func (lib *Library) Subscribe(ctx context.Context, id string, topics []string) ([]string, error) {
	return withConsumer(lib, "kafka-subscribe", id, func(cs *consumerState) ([]string, error) {
		return cs.subscribe(ctx, topics, true)
	})
}

// Unsubscribe removes topics from a consumer's subscription (all topics
// when topics is nil) and returns what remains, sorted. With auto-commit on,
// what was polled from them is committed first.
func (lib *Library) Unsubscribe(ctx context.Context, id string, topics []string) ([]string, error) {
	return withConsumer(lib, "kafka-unsubscribe", id, func(cs *consumerState) ([]string, error) {
		if topics == nil {
			return cs.subscribe(ctx, nil, true)
		}
		cs.subMu.Lock()
		defer cs.subMu.Unlock()
		cs.mu.Lock()
		var drop []string
		for _, t := range topics {
			if cs.topics[t] && !slices.Contains(drop, t) {
				drop = append(drop, t)
			}
		}
		cs.mu.Unlock()
		if len(drop) > 0 {
			if err := cs.drop(ctx, drop); err != nil {
				return nil, err
			}
		}
		return slices.Clone(cs.subscription()), nil
	})
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
func (lib *Library) Commit(ctx context.Context, id string) error {
	_, err := withConsumer(lib, "kafka-commit", id, func(cs *consumerState) (struct{}, error) {
		return struct{}{}, cs.commit(ctx)
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
	cs.uncommitted = nil
	cs.mu.Unlock()
	if len(lost) == 0 {
		return nil
	}
	var where []string
	for _, t := range slices.Sorted(maps.Keys(lost)) {
		ps := slices.Sorted(slices.Values(lost[t]))
		where = append(where, fmt.Sprintf("topic %q partitions %v", t, ps))
	}
	return errorf(ErrNotCommitted, "%s: this consumer lost them (the group rebalanced, or its session ended) before the records it polled from them were committed; those records will be delivered again",
		strings.Join(where, ", "))
}

// commitPolled commits what was polled and is still this consumer's,
// within request-timeout.
func (cs *consumerState) commitPolled(ctx context.Context) error {
	cs.markPending()
	ctx, cancel := context.WithTimeout(ctx, cs.h.cfg.requestTimeout)
	defer cancel()
	if err := cs.h.cl.CommitMarkedOffsets(ctx); err != nil {
		return cs.h.requestError(ctx, err)
	}
	return nil
}

// markPending marks for commit what the latest poll returned: the caller
// has come back for more, or to commit, or to destroy the consumer.
func (cs *consumerState) markPending() {
	cs.mu.Lock()
	recs := cs.pending
	cs.pending = nil
	cs.mu.Unlock()
	if len(recs) > 0 {
		cs.h.cl.MarkCommitRecords(recs...) // sorts recs in place: they are ours alone now
	}
}

// leave commits what was polled when auto-commit is on, then leaves the
// group, each within request-timeout. The caller closes the client. Like
// Java's close, it does not report records lost to an earlier rebalance:
// only kafka-commit promises that everything polled is committed.
func (cs *consumerState) leave(ctx context.Context) error {
	var err error
	if cs.h.cfg.autoCommit {
		err = cs.commitPolled(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, cs.h.cfg.requestTimeout)
	defer cancel()
	if lerr := cs.h.cl.LeaveGroupContext(ctx); lerr != nil && err == nil && ctx.Err() != nil {
		err = cs.h.requestError(ctx, lerr)
	}
	return err
}

// Seek moves a consumer to pos on topic: on the given partitions, or on all
// of the topic's partitions when none are given. Partitions the consumer
// owns move at once. When it owns none of the topic yet (it just
// subscribed), the seek waits for the group's next assignment and applies
// to what that gives it; a named partition it does not own waits the same
// way. A waiting seek applies once and is then forgotten, so a later
// rebalance never moves a partition back: partitions another member read
// resume at its committed offsets. Under auto-offset-reset "none", a seek
// is how a partition with no committed offset gets a position (see
// [Library.Poll]).
func (lib *Library) Seek(ctx context.Context, id, topic string, pos Position, partitions ...int32) error {
	_, err := withConsumer(lib, "kafka-seek", id, func(cs *consumerState) (struct{}, error) {
		return struct{}{}, cs.seek(ctx, topic, pos, partitions)
	})
	return err
}

func (cs *consumerState) seek(ctx context.Context, topic string, pos Position, partitions []int32) error {
	if err := checkTopic(topic); err != nil {
		return errorf(ErrInvalidArgument, "topic: %v", err)
	}
	if !pos.time && pos.at < seekBeginning {
		return errorf(ErrInvalidArgument, "offset %d is negative", pos.at)
	}
	for _, p := range partitions {
		if p < 0 {
			return errorf(ErrInvalidArgument, "partition %d is negative", p)
		}
	}
	cs.markPending() // done with what the last poll returned, as at a poll
	cs.subMu.Lock()
	defer cs.subMu.Unlock()

	// Partitions owned now move at once, to offsets the brokers resolve.
	cs.mu.Lock()
	var owned []int32
	for p := range cs.assigned[topic] {
		if len(partitions) == 0 || slices.Contains(partitions, p) {
			owned = append(owned, p)
		}
	}
	cs.mu.Unlock()
	if len(owned) > 0 {
		offsets, err := cs.resolve(ctx, topic, pos, owned)
		if err != nil {
			return err
		}
		cs.h.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{topic: offsets})
		cs.mu.Lock()
		cs.positioned(func(t string, p int32) bool { return t == topic && slices.Contains(owned, p) })
		cs.mu.Unlock()
	}

	// The rest wait for the next assignment; a partition the topic does
	// not have would wait for ever.
	var waiting []int32
	for _, p := range partitions {
		if !slices.Contains(owned, p) {
			waiting = append(waiting, p)
		}
	}
	if len(waiting) > 0 {
		if err := cs.checkPartitions(ctx, topic, waiting); err != nil {
			return err
		}
	}
	var o kgo.Offset
	switch {
	case pos.time:
		o = kgo.NewOffset().AfterMilli(pos.at)
	case pos.at == seekBeginning:
		o = kgo.NewOffset().AtStart()
	case pos.at == seekEnd:
		o = kgo.NewOffset().AtEnd()
	default:
		o = kgo.NewOffset().At(pos.at)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.seeks[topic] == nil {
		cs.seeks[topic] = map[int32]kgo.Offset{}
	}
	// A seek of every partition waits only while the consumer owns none
	// of the topic (it just subscribed): stored otherwise, it would move
	// again, at the next rebalance, what it moved now and what other
	// members had read.
	if len(partitions) == 0 && len(cs.assigned[topic]) == 0 {
		cs.seeks[topic][-1] = o
	}
	for _, p := range waiting {
		cs.seeks[topic][p] = o
	}
	return nil
}

// checkPartitions fails when topic exists and lacks one of partitions. A
// topic the brokers do not know yet passes: it may be created (on first
// use, say) before the consumer is assigned it.
func (cs *consumerState) checkPartitions(ctx context.Context, topic string, partitions []int32) error {
	ctx, cancel := context.WithTimeout(ctx, cs.h.cfg.requestTimeout)
	defer cancel()
	resp, err := metadata(ctx, cs.h, []string{topic})
	if err != nil {
		return err
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) == 0 {
		return nil
	}
	n := int32(len(resp.Topics[0].Partitions))
	for _, p := range partitions {
		if p >= n {
			return errorf(ErrInvalidArgument, "topic %q has %d partitions (0 to %d); partition %d does not exist", topic, n, n-1, p)
		}
	}
	return nil
}

// resolve turns pos into exact offsets for partitions of topic.
func (cs *consumerState) resolve(ctx context.Context, topic string, pos Position, partitions []int32) (map[int32]kgo.EpochOffset, error) {
	out := map[int32]kgo.EpochOffset{}
	if !pos.time && pos.at >= 0 {
		for _, p := range partitions {
			out[p] = kgo.EpochOffset{Epoch: -1, Offset: pos.at}
		}
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, cs.h.cfg.requestTimeout)
	defer cancel()
	var listed kadm.ListedOffsets
	var err error
	switch {
	case pos.time:
		listed, err = cs.h.adm.ListOffsetsAfterMilli(ctx, pos.at, topic)
	case pos.at == seekBeginning:
		listed, err = cs.h.adm.ListStartOffsets(ctx, topic)
	default:
		listed, err = cs.h.adm.ListEndOffsets(ctx, topic)
	}
	if err != nil {
		return nil, cs.h.requestError(ctx, err)
	}
	for _, p := range partitions {
		o, ok := listed.Lookup(topic, p)
		if !ok || o.Err != nil {
			return nil, wrapf(errKafka, o.Err, "topic %q partition %d: cannot list offsets", topic, p)
		}
		out[p] = kgo.EpochOffset{Epoch: -1, Offset: o.Offset}
	}
	return out, nil
}

// withConsumer runs fn on a live consumer, wording its error for fn name.
func withConsumer[T any](lib *Library, name, id string, fn func(*consumerState) (T, error)) (T, error) {
	h, err := lib.acquire(id, Consumer)
	if err != nil {
		var zero T
		return zero, &Error{name, err}
	}
	defer h.calls.Done()
	v, err := fn(h.cons)
	if err != nil {
		return v, &Error{name, err}
	}
	return v, nil
}

// Poll returns the messages that arrived on a consumer's subscribed topics:
// every subscribed topic, sorted, with its new records in partition and
// offset order (none when nothing came). It returns as soon as one record
// is there, or when timeout passes: then with no records, not an error. A
// timeout of 0 returns what is already buffered; a negative one is an
// [ErrInvalidArgument] error. At most max-poll-records records are returned.
//
// The records a Poll returns count as consumed when the caller comes back
// to the consumer (the next Poll, Commit, Seek or Destroy), as
// with Java's consumer: auto-commit covers them from then on, never while
// the caller may still be working on them, so a crash redelivers them
// rather than losing them.
//
// When no broker could be reached during the wait, Poll fails with an
// [ErrTimeout] error naming the servers. Destroying the consumer makes a
// Poll in flight return at once. An error the brokers report for a
// partition (a KafkaError naming it, such as TOPIC_AUTHORIZATION_FAILED)
// fails the Poll; when it came together with records, those are returned
// first and the next Poll fails with it.
//
// With auto-offset-reset "none", a partition the group assigns with no
// committed offset has no position: nothing of it is read until a seek
// ([Library.Seek]) gives it one. Until then, as Java's poll throws
// NoOffsetForPartitionException, every Poll with no records to return
// fails with an error (of [ErrorType] "KafkaError") naming each such topic
// and partition: a Poll waiting for records fails as soon as the group
// assigns such a partition, and a later one without waiting. Unlike
// Java's, the consumer's other partitions are not held up: records already
// fetched from them are returned instead of the error, so a poll loop
// keeps reading them and sees the error between them.
func (lib *Library) Poll(ctx context.Context, id string, timeout time.Duration) (*Polled, error) {
	return withConsumer(lib, "kafka-poll", id, func(cs *consumerState) (*Polled, error) {
		return cs.poll(ctx, nil, timeout)
	})
}

// PollTopics is [Library.Poll] for some topics only: it first subscribes
// the consumer to any of topics it is not subscribed to (adding, never
// dropping others), then returns only those topics. Records of other
// topics that arrive meanwhile are kept for later polls, never lost.
func (lib *Library) PollTopics(ctx context.Context, id string, topics []string, timeout time.Duration) (*Polled, error) {
	return withConsumer(lib, "kafka-poll", id, func(cs *consumerState) (*Polled, error) {
		if topics == nil {
			topics = []string{}
		}
		return cs.poll(ctx, topics, timeout)
	})
}

// poll polls for topics (nil: the whole subscription).
func (cs *consumerState) poll(ctx context.Context, topics []string, timeout time.Duration) (*Polled, error) {
	if timeout < 0 {
		return nil, errorf(ErrInvalidArgument, "timeout %d ms is negative", timeout.Milliseconds())
	}
	if topics != nil {
		if _, err := cs.subscribe(ctx, topics, false); err != nil {
			return nil, err
		}
	}
	cs.markPending() // the caller is done with what the last poll returned
	max := cs.h.cfg.maxPollRecords
	recs := batches(cs.takeHeld(topics, max))
	if len(recs) == 0 {
		var err error
		if recs, err = cs.fetch(ctx, topics, timeout, max); err != nil {
			return nil, err
		}
	}
	if topics == nil {
		topics = cs.subscription()
	}
	return cs.result(topics, recs), nil
}

// takeHeld removes and returns up to max held records of topics (nil: all).
func (cs *consumerState) takeHeld(topics []string, max int) []*kgo.Record {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []*kgo.Record
	cs.held = slices.DeleteFunc(cs.held, func(r *kgo.Record) bool {
		if len(out) < max && (topics == nil || slices.Contains(topics, r.Topic)) {
			out = append(out, r)
			return true
		}
		return false
	})
	return out
}

// batch is a run of one partition's records, in offset order.
type batch struct {
	topic     string
	partition int32
	recs      []*kgo.Record
}

// batches splits records into runs of one partition each.
func batches(recs []*kgo.Record) []batch {
	var bs []batch
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].Partition == recs[i].Partition && recs[j].Topic == recs[i].Topic {
			j++
		}
		bs = append(bs, batch{recs[i].Topic, recs[i].Partition, recs[i:j]})
		i = j
	}
	return bs
}

// take sorts what a PollRecords returned: the records of topics (nil: all)
// as batches, the others held for later polls, and the first error that
// is the brokers' or the client's. An error that came with records is
// held for the next fetch rather than returned now, so that neither is
// lost.
func (cs *consumerState) take(fetches kgo.Fetches, topics []string) ([]batch, error) {
	var recs []batch
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		if topics == nil || slices.Contains(topics, p.Topic) {
			recs = append(recs, batch{p.Topic, p.Partition, p.Records})
			return
		}
		cs.mu.Lock()
		cs.held = append(cs.held, p.Records...)
		cs.mu.Unlock()
	})
	var err error
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
			continue // the poll's own wait ended
		}
		down := cs.h.net.dialFailure(fe.Err)
		switch {
		case errors.Is(fe.Err, kgo.ErrClientClosed):
			err = errorf(ErrClosed, "consumer destroyed during the poll")
		case down != nil:
			err = down
		case fe.Topic == "": // not a partition's: the group's (kgo.ErrGroupSession)
			err = wrapf(errKafka, fe.Err, "group %q", cs.h.cfg.group)
		default:
			err = wrapf(errKafka, fe.Err, "topic %q partition %d", fe.Topic, fe.Partition)
		}
		break
	}
	if err != nil && len(recs) > 0 {
		cs.mu.Lock()
		cs.heldErr = cmp.Or(cs.heldErr, err)
		cs.mu.Unlock()
		return recs, nil
	}
	return recs, err
}

// fetch waits up to timeout for records. Records of topics not asked for
// are held for later polls. While a partition of topics has no position it
// does not wait: it returns what is buffered, or else that error.
func (cs *consumerState) fetch(ctx context.Context, topics []string, timeout time.Duration, max int) ([]batch, error) {
	h := cs.h
	cs.mu.Lock()
	if err := cs.heldErr; err != nil {
		cs.heldErr = nil
		cs.mu.Unlock()
		return nil, err
	}
	if cs.noPosition(topics) != nil {
		// Report it at once, as Java's poll throws at once; what the
		// other partitions have fetched is still returned instead.
		timeout = 0
	}
	wakeCtx := cs.wakeCtx
	cs.mu.Unlock()
	var pctx context.Context // nil: return what is buffered, at once
	if timeout > 0 {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		stop := context.AfterFunc(h.ctx, cancel) // destroy ends the wait
		defer stop()
		if h.cfg.autoOffsetReset == resetNone { // so does a partition left with no position
			stopWake := context.AfterFunc(wakeCtx, cancel)
			defer stopWake()
		}
	}
	recs, err := cs.take(h.cl.PollRecords(pctx, max), topics)
	if len(recs) > 0 {
		return recs, nil
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case h.ctx.Err() != nil:
		return nil, errorf(ErrClosed, "consumer destroyed during the poll")
	case err != nil:
		return nil, err
	}
	cs.mu.Lock()
	err = cs.noPosition(topics)
	cs.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if timeout > 0 {
		if err := h.net.unreachable(); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// result sorts batches into topics. Keys and values are checked and
// decoded only when asked for, so a poll allocates nothing per record
// beyond its slot in one slice, and costs a few nanoseconds per record.
func (cs *consumerState) result(topics []string, bs []batch) *Polled {
	cfg := cs.h.cfg
	out := &Polled{Topics: make([]TopicRecords, len(topics), len(topics)+1)}
	for i, t := range topics {
		out.Topics[i].Topic = t
	}
	// A partition may come in two batches (two fetches); the stable sort
	// keeps them in offset order.
	slices.SortStableFunc(bs, func(a, b batch) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return cmp.Compare(a.partition, b.partition)
	})
	n := 0
	for _, b := range bs {
		n += len(b.recs)
	}
	all := make([]Record, 0, n)
	lasts := make([]*kgo.Record, 0, len(bs)) // the last record of each batch
	topicStart := 0
	for k, b := range bs {
		for _, r := range b.recs {
			all = append(all, Record{r, cfg})
		}
		lasts = append(lasts, b.recs[len(b.recs)-1])
		if k+1 < len(bs) && bs[k+1].topic == b.topic {
			continue // the batches of a topic are together: give it its share at its last
		}
		ti := slices.IndexFunc(out.Topics, func(tr TopicRecords) bool { return tr.Topic == b.topic })
		if ti < 0 { // unsubscribed while in flight: still delivered
			ti = len(out.Topics)
			out.Topics = append(out.Topics, TopicRecords{Topic: b.topic})
		}
		out.Topics[ti].Records = all[topicStart:len(all):len(all)]
		topicStart = len(all)
	}
	// What a poll returns counts as consumed once the caller comes back:
	// markPending marks it then. Marking the last record of a partition
	// marks all before it. (kgo sorts the slice it marks, unstably: it is
	// lasts, never records to return.)
	cs.mu.Lock()
	cs.pending = append(cs.pending, lasts...) // a concurrent poll's too
	cs.mu.Unlock()
	return out
}
