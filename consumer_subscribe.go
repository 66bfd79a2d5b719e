package kafkabpl

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Subscribing and unsubscribing, and the start offsets that make a
// subscription deterministic.

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
		if err := topicname.Check(t); err != nil {
			return nil, Errorf(ErrInvalidArgument, "topics: %v", err)
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
		if _, err := metadataRequest(ctx, cs.h, topics, true); err != nil {
			return nil, err
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
				return nil, Wrapf(ErrKafka, o.Err, "topic %q partition %d", t, p)
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
			delete(cs.starting, t)
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
//
// A share consumer's subscription asks the brokers nothing: its share
// group decides where it reads (see [ShareConsumer]).
func (lib *Library) Subscribe(ctx context.Context, id string, topics []string) ([]string, error) {
	return withConsumers(lib, "kafka-subscribe", id, func(cs *consumerState) ([]string, error) {
		return cs.subscribe(ctx, topics, true)
	}, func(ss *shareState) ([]string, error) {
		return ss.subscribe(topics, true)
	})
}

// Unsubscribe removes topics from a consumer's subscription (all topics
// when topics is nil) and returns what remains, sorted. With auto-commit on,
// what was polled from them is committed first.
func (lib *Library) Unsubscribe(ctx context.Context, id string, topics []string) ([]string, error) {
	return withConsumers(lib, "kafka-unsubscribe", id, func(cs *consumerState) ([]string, error) {
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
	}, func(ss *shareState) ([]string, error) {
		return ss.unsubscribe(topics)
	})
}
