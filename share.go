package kafkabpl

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Share consumers: members of a share group (KIP-932, queues for Kafka),
// which share every partition's records record by record, and
// acknowledge each. See [ShareConsumer] and [Library.Ack].

// AckType is how a share consumer acknowledges a record a poll returned
// (see [Library.Ack]).
type AckType string

// The acknowledgements, as kafka-ack names them.
const (
	// AckAccept: the record is processed; the group is done with it.
	AckAccept AckType = "accept"
	// AckRelease gives the record back to the group, to be delivered
	// again, to this member or another, with its delivery count one
	// higher. A record delivered as many times as the group's
	// share.delivery.count.limit (5 by default) is archived instead,
	// never to be delivered again.
	AckRelease AckType = "release"
	// AckReject: the record cannot be processed; the group archives it
	// and never delivers it again.
	AckReject AckType = "reject"
	// AckRenew keeps the record, extending its acquisition lock by the
	// group's lock duration (Kafka 4.2 and later). It acknowledges
	// nothing: the next poll or commit accepts the record unless an
	// accept, release or reject comes first. The record's
	// AcquisitionDeadline stays the one it was delivered with. Renew well
	// ahead of the deadline: like every acknowledgement, a renew reaches
	// the broker with the consumer's next fetch, up to about a second
	// later (see [Library.Ack]).
	AckRenew AckType = "renew"
)

// status is the kgo acknowledgement of a.
func (a AckType) status() (kgo.AckStatus, bool) {
	switch a {
	case AckAccept:
		return kgo.AckAccept, true
	case AckRelease:
		return kgo.AckRelease, true
	case AckReject:
		return kgo.AckReject, true
	case AckRenew:
		return kgo.AckRenew, true
	}
	return 0, false
}

// RecordID names a record by where it is: its topic, partition and
// offset. [Record.ID] gives a polled record's.
type RecordID struct {
	Topic     string
	Partition int32
	Offset    int64
}

func (id RecordID) String() string {
	return fmt.Sprintf("topic %q partition %d offset %d", id.Topic, id.Partition, id.Offset)
}

// ID returns where the record is, as [Library.Ack] takes it.
func (r *Record) ID() RecordID { return RecordID{r.r.Topic, r.r.Partition, r.r.Offset} }

// DeliveryCount returns how many times the record's share group has
// delivered it, this delivery included: 1 the first time, 2 once it was
// released (or its acquisition lock ended) and delivered again, and so
// on. It is 0 for a record a consumer, not a share consumer, polled.
func (r *Record) DeliveryCount() int { return int(r.r.DeliveryCount()) }

// AcquisitionDeadline returns when the record's acquisition lock ends: a
// share consumer that has not acknowledged the record by then loses it,
// and the group delivers it again (to any member). The broker starts the
// lock before it sends the record, and an acknowledgement takes time to
// reach it: count on a few seconds less. A poll may return a record whose
// deadline has passed already, one the consumer fetched long before the
// poll: another member may hold it by then. It is the zero time for a
// record a consumer, not a share consumer, polled.
func (r *Record) AcquisitionDeadline() time.Time { return r.r.AcquisitionDeadline() }

// shareState is what a share consumer handle keeps beside its kgo client.
type shareState struct {
	h *handle
	// pollMu makes polls one at a time: each kgo poll accepts what the
	// one before returned, which a concurrent poll's caller would still be
	// working on.
	pollMu sync.Mutex

	mu     sync.Mutex
	topics map[string]bool
	// latest holds the records the latest poll returned, until the next
	// poll or commit accepts those not acknowledged.
	latest map[RecordID]*shareEntry
	// refused holds, per partition, the first acknowledgement the
	// brokers refused since the last commit, which reports them.
	refused partitions[error]
	heldErr error // fetched with records; the next poll returns it
}

// shareEntry is a record the latest poll returned.
type shareEntry struct {
	r     *kgo.Record
	acked AckType // "" until accepted, released or rejected
}

func newShareState(h *handle) *shareState {
	return &shareState{h: h, topics: map[string]bool{}, refused: partitions[error]{}}
}

// shareIdleTimeout is how long a share consumer keeps an idle connection
// open: Java's connections.max.idle.ms, under the broker's 10 minutes.
// The broker ties a share session to its connection and releases the
// records it holds when that closes, and kgo stops fetching while it
// holds a fetch no poll has taken: with kgo's 20 s, a script working on a
// poll's records for longer than that without polling, while more came,
// would lose them to other members (kgo's ShareGroup warns of it).
const shareIdleTimeout = 9 * time.Minute

// opts are the kgo options of a share consumer. max-poll-records is also
// the most records a fetch acquires (Java's max.poll.records does the
// same), so that a member does not hold records it will not return soon:
// a broker may still hand over a whole batch that holds more.
func (ss *shareState) opts() []kgo.Opt {
	cfg := ss.h.cfg
	return []kgo.Opt{
		kgo.ShareGroup(cfg.group),
		kgo.ShareMaxRecords(int32(cfg.maxPollRecords)),
		kgo.ShareAckCallback(ss.acked),
		kgo.FetchMaxPartitionBytes(int32(max(cfg.maxMessageBytes, 1<<20))),
		kgo.ConnIdleTimeout(shareIdleTimeout),
	}
}

// checkShareConfig checks what a share consumer's config needs.
func checkShareConfig(cfg *config) error {
	if !cfg.given["group"] {
		return Errorf(ErrInvalidConfig, `config: a share consumer needs "group", the share group it joins`)
	}
	if cfg.given["auto-offset-reset"] && cfg.autoOffsetReset == resetNone {
		return Errorf(ErrInvalidConfig, `config "auto-offset-reset" "none": a share group starts a partition at "earliest" or "latest"`)
	}
	return nil
}

// start sets the group's share.auto.offset.reset when the config gives
// "auto-offset-reset", then subscribes to the config's topics.
func (ss *shareState) start(ctx context.Context) error {
	cfg := ss.h.cfg
	if cfg.given["auto-offset-reset"] {
		reset := "latest"
		if cfg.autoOffsetReset == resetEarliest {
			reset = "earliest"
		}
		ctx, cancel := context.WithTimeout(ctx, cfg.requestTimeout)
		defer cancel()
		set := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "share.auto.offset.reset", Value: &reset}}
		if err := alterConfigs(ctx, ss.h, GroupConfigs(cfg.group), set); err != nil {
			return err
		}
	}
	if len(cfg.topics) > 0 {
		if _, err := ss.subscribe(cfg.topics, false); err != nil {
			return err
		}
	}
	return nil
}

// acked is kgo's ShareAckCallback: it keeps what the brokers refused.
func (ss *shareState) acked(_ *kgo.Client, results kgo.ShareAckResults) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, r := range results {
		if r.Err != nil && !ss.refused.has(r.Topic, r.Partition) {
			ss.refused.set(r.Topic, r.Partition, r.Err)
		}
	}
}

// withConsumers runs cons on a consumer, or share on a share consumer.
func withConsumers[T any](lib *Library, name, id string, cons func(*consumerState) (T, error), share func(*shareState) (T, error)) (T, error) {
	h, err := lib.acquireOf(id, Consumer, ShareConsumer)
	if err != nil {
		var zero T
		return zero, NewError(name, err)
	}
	defer h.calls.Done()
	var v T
	if h.kind == ShareConsumer {
		v, err = share(h.share)
	} else {
		v, err = cons(h.cons)
	}
	if err != nil {
		return v, NewError(name, err)
	}
	return v, nil
}

// subscription returns the subscribed topics, sorted.
func (ss *shareState) subscription() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return slices.Sorted(maps.Keys(ss.topics))
}

// subscribe adds topics to the subscription, or with replace makes it
// exactly topics, and returns it. A share group has no positions to keep:
// the brokers decide where its members read.
func (ss *shareState) subscribe(topics []string, replace bool) ([]string, error) {
	for _, t := range topics {
		if err := topicname.Check(t); err != nil {
			return nil, Errorf(ErrInvalidArgument, "topics: %v", err)
		}
	}
	ss.mu.Lock()
	var added, removed []string
	for _, t := range topics {
		if !ss.topics[t] {
			ss.topics[t] = true
			added = append(added, t)
		}
	}
	if replace {
		for t := range ss.topics {
			if !slices.Contains(topics, t) {
				delete(ss.topics, t)
				removed = append(removed, t)
			}
		}
	}
	ss.mu.Unlock()
	if len(removed) > 0 {
		ss.h.cl.PurgeTopicsFromConsuming(removed...)
	}
	if len(added) > 0 {
		ss.h.cl.AddConsumeTopics(added...)
	}
	return ss.subscription(), nil
}

// unsubscribe removes topics (nil: all) and returns what remains.
func (ss *shareState) unsubscribe(topics []string) ([]string, error) {
	if topics == nil {
		return ss.subscribe(nil, true)
	}
	keep := slices.DeleteFunc(ss.subscription(), func(t string) bool { return slices.Contains(topics, t) })
	return ss.subscribe(keep, true)
}

// poll returns the records the group gives this member, after the
// records of the latest poll that were not acknowledged are accepted.
// With topics, it subscribes to them first, and they must then be the
// whole subscription: a share consumer cannot keep records of other
// topics for later polls, since each poll accepts what the one before
// returned.
func (ss *shareState) poll(ctx context.Context, topics []string, timeout time.Duration) (*Polled, error) {
	if timeout < 0 {
		return nil, Errorf(ErrInvalidArgument, "timeout %d ms is negative", timeout.Milliseconds())
	}
	if topics != nil {
		sub, err := ss.subscribe(topics, false)
		if err != nil {
			return nil, err
		}
		if extra := slices.DeleteFunc(sub, func(t string) bool { return slices.Contains(topics, t) }); len(extra) > 0 {
			return nil, Errorf(ErrInvalidArgument, "topics %q: a share consumer polls its whole subscription, which also has %q; poll without topics, or unsubscribe from those", topics, extra)
		}
	}
	sub := ss.subscription()
	if len(sub) == 0 {
		return nil, Errorf(ErrNotSubscribed, "the share consumer is subscribed to no topic: subscribe first (kafka-subscribe, the \"topics\" config key, or kafka-poll with topics)")
	}
	ss.pollMu.Lock()
	defer ss.pollMu.Unlock()
	ss.mu.Lock()
	ss.latest = nil // kgo's poll below accepts what was not acknowledged
	held := ss.heldErr
	ss.heldErr = nil
	ss.mu.Unlock()
	if held != nil {
		return nil, held
	}
	recs, err := ss.fetch(ctx, timeout)
	if len(recs) > 0 && err != nil {
		ss.mu.Lock()
		ss.heldErr = err // with the records: the next poll's
		ss.mu.Unlock()
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if err := prepareBatches(ctx, ss.h.cfg, recs, time.Now().Add(timeout)); err != nil {
		// They cannot be read now, and cannot be kept: the next poll
		// would accept them. The group delivers them again.
		var back []*kgo.Record
		for _, b := range recs {
			back = append(back, b.recs...)
		}
		ss.h.cl.MarkAcks(kgo.AckRelease, back...)
		return nil, err
	}
	out, _ := polledOf(ss.h.cfg, sub, recs, nil)
	latest := map[RecordID]*shareEntry{}
	for _, b := range recs {
		for _, r := range b.recs {
			latest[RecordID{r.Topic, r.Partition, r.Offset}] = &shareEntry{r: r}
		}
	}
	ss.mu.Lock()
	ss.latest = latest
	ss.mu.Unlock()
	return out, nil
}

// fetch returns what kgo has buffered, or waits up to timeout for
// records, the consumer's destruction or an error.
func (ss *shareState) fetch(ctx context.Context, timeout time.Duration) ([]batch, error) {
	h := ss.h
	max := h.cfg.maxPollRecords
	fetches := h.cl.PollRecords(nil, max) // a nil context: what is buffered, at once
	if fetches.NumRecords() == 0 && fetchError(h, fetches) == nil && timeout > 0 {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		stop := context.AfterFunc(h.ctx, cancel) // destroy ends the wait
		fetches = h.cl.PollRecords(pctx, max)
		stop()
		cancel()
	}
	var recs []batch
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) > 0 {
			recs = append(recs, batch{p.Topic, p.Partition, p.Records})
		}
	})
	err := fetchError(h, fetches)
	if len(recs) > 0 {
		return recs, err
	}
	if err := emptyPollError(ctx, h, err); err != nil || timeout == 0 {
		return nil, err
	}
	return nil, h.net.unreachable()
}

// ack acknowledges records of the latest poll (none: all it returned that
// are not acknowledged yet). It checks every id before it acknowledges
// any.
func (ss *shareState) ack(ack AckType, ids []RecordID) error {
	status, ok := ack.status()
	if !ok {
		return Errorf(ErrInvalidArgument, "acknowledgement %q: want %q, %q, %q or %q", string(ack), AckAccept, AckRelease, AckReject, AckRenew)
	}
	recs, err := ss.take(ack, ids)
	if err != nil || len(recs) == 0 {
		return err // MarkAcks with no records would acknowledge every one
	}
	ss.h.cl.MarkAcks(status, recs...)
	return nil
}

// take marks the records ids name as acknowledged by ack (but for renew)
// and returns them.
func (ss *shareState) take(ack AckType, ids []RecordID) ([]*kgo.Record, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var entries []*shareEntry
	if len(ids) == 0 {
		for _, e := range ss.latest {
			if e.acked == "" {
				entries = append(entries, e)
			}
		}
	}
	for _, id := range ids {
		e := ss.latest[id]
		switch {
		case e == nil:
			return nil, Errorf(ErrInvalidArgument, "%s is not a record the latest poll returned: the next poll or commit accepts what a poll returned", id)
		case e.acked != "":
			return nil, Errorf(ErrInvalidArgument, "%s is acknowledged already (%s)", id, e.acked)
		}
		if !slices.Contains(entries, e) {
			entries = append(entries, e)
		}
	}
	recs := make([]*kgo.Record, len(entries))
	for i, e := range entries {
		recs[i] = e.r
		if ack != AckRenew {
			e.acked = ack
		}
	}
	return recs, nil
}

// commit accepts the records of the latest poll that are not
// acknowledged, sends every acknowledgement made, and reports the ones the
// brokers refused since the last commit.
func (ss *shareState) commit(ctx context.Context) error {
	if err := ss.ack(AckAccept, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ss.h.cfg.requestTimeout)
	defer cancel()
	if err := ss.h.cl.FlushAcks(ctx); err != nil {
		return ss.h.requestError(ctx, err)
	}
	ss.mu.Lock()
	refused := ss.refused
	ss.refused = partitions[error]{}
	ss.mu.Unlock()
	if len(refused) == 0 {
		return nil
	}
	var where []string
	var first error
	for _, tp := range refused.sorted() {
		for _, p := range tp.Partitions {
			err := refused[tp.Topic][p]
			first = cmp.Or(first, err)
			where = append(where, fmt.Sprintf("topic %q partition %d (%v)", tp.Topic, p, err))
		}
	}
	return Wrapf(ErrNotCommitted, first, "the brokers refused acknowledgements of records of %s: the records' acquisition locks had ended, or the connection that held them closed; the group delivers them again, unless they reached its delivery count limit",
		strings.Join(where, ", "))
}

// leave sends the acknowledgements made and leaves the group, within
// request-timeout: the records of the latest poll that were not
// acknowledged, and those kgo fetched that no poll returned, go back to
// the group (kgo releases them, as Java's share consumer does on close).
func (ss *shareState) leave(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ss.h.cfg.requestTimeout)
	defer cancel()
	if err := ss.h.cl.LeaveGroupContext(ctx); err != nil && ctx.Err() != nil {
		return ss.h.requestError(ctx, err)
	}
	return nil
}

// Ack acknowledges records that the latest [Library.Poll] of share
// consumer id returned (ids, from [Record.ID]; none: every record it
// returned that is not acknowledged yet): accept, release or reject, or
// renew (see [AckType]). A record is acknowledged once; renew does not
// count. An id that is not a record of the latest poll, or one already
// acknowledged, is an [ErrInvalidArgument] error, and then no record is
// acknowledged.
//
// Ack does not wait: the acknowledgements go to the brokers with the
// consumer's next fetch, within a second or so; [Library.Commit] sends
// them at once and reports those the brokers refused. The records of a
// poll that are not acknowledged when the next Poll or Commit comes are
// accepted then (Java's share.acknowledgement.mode "implicit", its
// default); a consumer destroyed first gives them back to the group, to
// be delivered again with their delivery count one higher.
func (lib *Library) Ack(id string, ack AckType, ids ...RecordID) error {
	h, err := lib.acquire(id, ShareConsumer)
	if err != nil {
		return NewError("kafka-ack", err)
	}
	defer h.calls.Done()
	if err := h.share.ack(ack, ids); err != nil {
		return NewError("kafka-ack", err)
	}
	return nil
}
