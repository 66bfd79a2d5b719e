package kafkabpl

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The poll path: fetching, holding what a poll cannot return yet, and
// sorting records into the result.

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
// With a schema deserializer (Avro, Protobuf, JSON Schema), a Poll that
// has records asks the schema registry, within ctx (not timeout, which is
// the wait for records), for the schemas they were written with that the
// consumer has not seen yet, once each, so that decoding them does no I/O
// (see [Record.Key]).
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
//
// A share consumer's Poll first accepts what its latest poll returned and
// was not acknowledged (see [Library.Ack]); records it cannot read for
// want of the schema registry are released, to be delivered again, since
// it cannot hold them back.
func (lib *Library) Poll(ctx context.Context, id string, timeout time.Duration) (*Polled, error) {
	return withConsumers(lib, "kafka-poll", id, func(cs *consumerState) (*Polled, error) {
		return cs.poll(ctx, nil, timeout)
	}, func(ss *shareState) (*Polled, error) {
		return ss.poll(ctx, nil, timeout)
	})
}

// PollTopics is [Library.Poll] for some topics only: it first subscribes
// the consumer to any of topics it is not subscribed to (adding, never
// dropping others), then returns only those topics. Records of other
// topics that arrive meanwhile are kept for later polls, never lost.
//
// A share consumer polls its whole subscription: after subscribing to
// topics, PollTopics fails with [ErrInvalidArgument] if the subscription
// has other topics too.
func (lib *Library) PollTopics(ctx context.Context, id string, topics []string, timeout time.Duration) (*Polled, error) {
	if topics == nil {
		topics = []string{}
	}
	return withConsumers(lib, "kafka-poll", id, func(cs *consumerState) (*Polled, error) {
		return cs.poll(ctx, topics, timeout)
	}, func(ss *shareState) (*Polled, error) {
		return ss.poll(ctx, topics, timeout)
	})
}

// poll polls for topics (nil: the whole subscription). A consumer
// subscribed to nothing fails with ErrNotSubscribed rather than return
// nothing for ever.
func (cs *consumerState) poll(ctx context.Context, topics []string, timeout time.Duration) (*Polled, error) {
	if timeout < 0 {
		return nil, Errorf(ErrInvalidArgument, "timeout %d ms is negative", timeout.Milliseconds())
	}
	if topics != nil {
		if _, err := cs.subscribe(ctx, topics, false); err != nil {
			return nil, err
		}
	}
	if len(cs.subscription()) == 0 {
		return nil, Errorf(ErrNotSubscribed, "the consumer is subscribed to no topic: subscribe first (kafka-subscribe, the \"topics\" config key, or kafka-poll with topics)")
	}
	cs.markPending() // the caller is done with what the last poll returned
	deadline := time.Now().Add(timeout)
	max := cs.h.cfg.maxPollRecords
	var buf [4]batch // a poll's batches, most often: no allocation for them
	recs := batches(cs.takeHeld(topics, max))
	if len(recs) == 0 {
		var err error
		if recs, err = cs.fetch(ctx, topics, timeout, max, buf[:0]); err != nil {
			return nil, err
		}
	}
	if topics == nil {
		topics = cs.subscription()
	}
	if err := prepareBatches(ctx, cs.h.cfg, recs, deadline); err != nil {
		cs.holdBack(recs)
		return nil, err
	}
	return cs.result(topics, recs), nil
}

// registryWait is the least a poll gives the schema registry to answer for
// the schemas of the records it has, past its own timeout when that is
// shorter: a poll with timeout 0 must be able to read records of a schema
// it has not met yet.
const registryWait = time.Second

// prepareBatches asks the registry for the schemas of recs (see
// config.prepareSchemas), until deadline or registryWait from now, asking
// again while it is unavailable. When it never answered, the error says
// that the records are held back, as SchemaRegistryError, or is ctx's.
func prepareBatches(ctx context.Context, cfg *config, recs []batch, deadline time.Time) error {
	if len(recs) == 0 || !cfg.keyDeser.NeedsRegistry() && !cfg.valDeser.NeedsRegistry() {
		return nil // the usual poll: no context, no timer
	}
	pctx, cancel := context.WithDeadline(ctx, later(deadline, time.Now().Add(registryWait)))
	defer cancel()
	for {
		var err error
		for _, b := range recs {
			if err = cfg.prepareSchemas(pctx, b.recs); err != nil {
				break
			}
		}
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		}
		select {
		case <-pctx.Done():
			// The registry's error, as text: the poll's own deadline
			// is not the caller's, nor a Timeout.
			return &kindError{kind: ErrRegistryUnavailable, cause: Errorf(ErrSchemaRegistry,
				"records held back, to be returned once the schema registry answers for their schemas: %v", err)}
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// holdBack puts records a poll could not return back in front of the held
// ones, in order, for the next poll: they are not marked, so no commit
// covers them, and a rebalance that takes their partition drops them, as
// it drops every held record.
func (cs *consumerState) holdBack(recs []batch) {
	var back []*kgo.Record
	for _, b := range recs {
		back = append(back, b.recs...)
	}
	cs.mu.Lock()
	cs.held = append(back, cs.held...)
	cs.mu.Unlock()
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
// as batches, appended to recs, the others held for later polls, and the
// first error that is the brokers' or the client's. An error that came
// with records is held for the next fetch rather than returned now, so
// that neither is lost.
func (cs *consumerState) take(fetches kgo.Fetches, topics []string, recs []batch) ([]batch, error) {
	cs.h.group.polled(fetches)
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
	err := fetchError(cs.h, fetches)
	if err != nil && len(recs) > 0 {
		cs.mu.Lock()
		cs.heldErr = cmp.Or(cs.heldErr, err)
		cs.mu.Unlock()
		return recs, nil
	}
	return recs, err
}

// fetchError is the first error of fetches that is the brokers' or the
// client's, worded for the consumer of h; nil when there is none (the end
// of a poll's own wait is none).
func fetchError(h *handle, fetches kgo.Fetches) error {
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
			continue // the poll's own wait ended
		}
		down := h.net.dialFailure(fe.Err)
		switch {
		case errors.Is(fe.Err, kgo.ErrClientClosed):
			return Errorf(ErrClosed, "consumer destroyed during the poll")
		case down != nil:
			return down
		case fe.Topic == "": // not a partition's: the group's (kgo.ErrGroupSession)
			return Wrapf(ErrKafka, fe.Err, "group %q", h.cfg.group)
		default:
			return Wrapf(ErrKafka, fe.Err, "topic %q partition %d", fe.Topic, fe.Partition)
		}
	}
	return nil
}

// fetch waits up to timeout for records, and returns them as batches
// appended to buf. Records of topics not asked for are held for later
// polls. While a partition of topics has no position it does not wait: it
// returns what is buffered, or else that error.
func (cs *consumerState) fetch(ctx context.Context, topics []string, timeout time.Duration, max int, buf []batch) ([]batch, error) {
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
	cs.revalidate(ctx)
	// What is buffered first (a nil context: at once), so that a busy
	// consumer's polls, which nearly always find records, do not pay for
	// the contexts of a wait.
	recs, err := cs.pollKgo(nil, topics, max, buf)
	if len(recs) == 0 && err == nil && timeout > 0 {
		deadline := time.Now().Add(timeout)
		for {
			var due bool
			recs, due, err = cs.wait(ctx, wakeCtx, deadline, topics, max, buf)
			if !due || len(recs) > 0 || err != nil || time.Until(deadline) <= 0 {
				break
			}
			cs.revalidate(ctx) // and wait on
		}
	}
	if len(recs) > 0 {
		return recs, nil
	}
	if err := emptyPollError(ctx, h, err); err != nil {
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

// emptyPollError is why a poll of h's consumer that got no records
// ended: its context, the consumer's destruction, or err (nil: its
// timeout passed).
func emptyPollError(ctx context.Context, h *handle, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case h.ctx.Err() != nil:
		return Errorf(ErrClosed, "consumer destroyed during the poll")
	}
	return err
}

// pollKgo polls kgo with ctx (nil: what is buffered, at once), sharing
// the gate with other polls (see revalidation), and appends the batches
// to buf.
func (cs *consumerState) pollKgo(ctx context.Context, topics []string, max int, buf []batch) ([]batch, error) {
	cs.gate.RLock()
	defer cs.gate.RUnlock()
	return cs.take(cs.h.cl.PollRecords(ctx, max), topics, buf)
}

// wait polls kgo until deadline, the consumer's destruction or, under
// "none", a partition left with no position; or until a check of
// positions falls due, and then says so. The batches are appended to buf.
func (cs *consumerState) wait(ctx, wakeCtx context.Context, deadline time.Time, topics []string, max int, buf []batch) (recs []batch, due bool, err error) {
	h := cs.h
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel) // destroy ends the wait
	defer stop()
	if h.cfg.autoOffsetReset == resetNone { // so does a partition left with no position
		stopWake := context.AfterFunc(wakeCtx, cancel)
		defer stopWake()
	}
	check := cs.rv.waiting()
	stopCheck := context.AfterFunc(check, cancel)
	defer stopCheck()
	recs, err = cs.pollKgo(pctx, topics, max, buf)
	return recs, check.Err() != nil, err
}

// result sorts batches into topics (see polledOf) and keeps the last
// record of each batch, to be marked for commit when the caller comes
// back.
func (cs *consumerState) result(topics []string, bs []batch) *Polled {
	var buf [16]*kgo.Record // a poll's batches, most often: no allocation for them
	out, lasts := polledOf(cs.h.cfg, topics, bs, buf[:0])
	// What a poll returns counts as consumed once the caller comes back:
	// markPending marks it then. Marking the last record of a partition
	// marks all before it. (kgo sorts the slice it marks, unstably: it is
	// lasts, never records to return.)
	cs.mu.Lock()
	cs.pending = append(cs.pending, lasts...) // a concurrent poll's too
	cs.mu.Unlock()
	return out
}

// polledOf sorts batches into topics, and returns with them the last
// record of each batch, appended to lasts. Keys and values are checked and decoded only when
// asked for, so a poll allocates nothing per record beyond its slot in
// one slice, and costs a few nanoseconds per record.
func polledOf(cfg *config, topics []string, bs []batch, lasts []*kgo.Record) (*Polled, []*kgo.Record) {
	var out *Polled
	if len(topics) == 1 {
		// The usual poll, of one topic: the result and its topic in one
		// allocation.
		one := &struct {
			p Polled
			t [1]TopicRecords
		}{}
		out = &one.p
		out.Topics = one.t[:]
	} else {
		out = &Polled{Topics: make([]TopicRecords, len(topics), len(topics)+1)}
	}
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
	topicStart := 0
	for k, b := range bs {
		for _, r := range b.recs {
			all = append(all, Record{r: r, cfg: cfg})
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
	return out, lasts
}
