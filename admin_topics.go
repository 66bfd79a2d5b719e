package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The topic admin functions: creating, deleting, listing and describing
// topics and growing their partitions, then waiting for the brokers'
// metadata to show the change and telling this Library's clients of it.

// TopicOptions are the settings of the topics [Library.CreateTopics]
// creates. The zero value takes the brokers' defaults for everything.
type TopicOptions struct {
	// Partitions is the number of partitions of each topic; 0 takes the
	// broker's num.partitions. It must not be negative.
	Partitions int32
	// ReplicationFactor is the number of copies of each partition; 0
	// takes the broker's default.replication.factor. More than the number
	// of brokers fails the topic with kerr.InvalidReplicationFactor.
	ReplicationFactor int16
	// Configs are topic configs, such as "retention.ms" => "60000" or
	// "cleanup.policy" => "compact"; keys not given take the broker's
	// defaults.
	Configs map[string]string
}

// TopicInfo describes one topic: its partitions, in partition order.
type TopicInfo struct {
	Topic      string
	Partitions []PartitionInfo
}

// PartitionInfo is one partition as the brokers' metadata shows it.
type PartitionInfo struct {
	Partition int32
	// Leader is the id of the broker that leads the partition: it takes
	// every write and, by default, every read. -1 when there is none.
	Leader int32
	// Replicas are the brokers that hold a copy, the preferred leader
	// first; ISR (in-sync replicas) are those of them that are up to date.
	Replicas []int32
	ISR      []int32
}

// CreateTopics creates topics with the settings in opts and reports, for
// each topic created, true, and for each that already existed, false (its
// settings are left as they were).
//
// Every topic is tried. When some fail (an invalid name, a replication
// factor above the number of brokers, no authorization), the error names
// each failed topic and its reason, and also says which topics were
// created; errors.Is reaches each reason's kerr code (such as
// kerr.InvalidReplicationFactor, or kerr.InvalidTopicException for a name
// Kafka does not allow). The map is then still returned, with the topics
// that did not fail. Repeated names count once.
//
// It returns once the brokers' metadata shows each created topic with a
// leader for every partition (a Kafka broker applies the change a moment
// after the controller made it), so the next call sees the topics; and
// consumers of this Library subscribed to a created topic are told at
// once, so they start reading it without waiting for their next metadata
// refresh.
//
// target, here and in every admin method, is an admin handle's id or a
// config (servers) for a client of the call's own, closed when the call
// returns. The call ends within the target's request-timeout; when the
// brokers do not answer in time it fails with an [ErrTimeout] error naming
// the servers.
//
// In BPL, (kafka-create-topics target ("t1" "t2") "partitions" => 3
// "replication-factor" => 2 "configs" => ("retention.ms" => 60000))
// returns ("t1" => true "t2" => false), in the order given.
func (lib *Library) CreateTopics(ctx context.Context, target any, topics []string, opts TopicOptions) (map[string]bool, error) {
	const fn = "kafka-create-topics"
	if opts.Partitions < 0 || opts.ReplicationFactor < 0 {
		return nil, NewError(fn, Errorf(ErrInvalidArgument, "partitions %d, replication factor %d: want 0 (the broker's default) or more", opts.Partitions, opts.ReplicationFactor))
	}
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) (map[string]bool, error) {
		topics = unique(topics)
		var valid []string
		failed := map[string]error{}
		for _, t := range topics {
			if err := topicname.Check(t); err != nil {
				failed[t] = Wrapf(ErrKafka, kerr.InvalidTopicException, "%v", err)
				continue
			}
			valid = append(valid, t)
		}
		p, rf := int32(-1), int16(-1) // -1: the broker's default
		if opts.Partitions > 0 {
			p = opts.Partitions
		}
		if opts.ReplicationFactor > 0 {
			rf = opts.ReplicationFactor
		}
		var configs map[string]*string
		if len(opts.Configs) > 0 {
			configs = make(map[string]*string, len(opts.Configs))
			for k, v := range opts.Configs {
				configs[k] = &v
			}
		}
		done := map[string]bool{}
		if len(valid) > 0 {
			resp, err := adm.CreateTopics(ctx, p, rf, configs, valid...)
			if err != nil {
				return nil, h.requestError(ctx, err)
			}
			for _, t := range valid {
				r, ok := resp[t]
				switch {
				case !ok:
					failed[t] = unanswered("topic", t)
				case errors.Is(r.Err, kerr.TopicAlreadyExists):
					done[t] = false
				case r.Err != nil:
					failed[t] = topicError(t, r.Err, r.ErrMessage)
				default:
					done[t] = true
				}
			}
		}
		settle(ctx, h, trueKeys(done), func(t *kmsg.MetadataResponseTopic) bool { return led(t, 1) })
		lib.announceTopics(done)
		return done, topicsFailure(topics, done, failed, "created", "already existed")
	})
}

// DeleteTopics deletes topics and their messages and reports, for each
// topic deleted, true, and for each that did not exist, false. Failures are
// reported as in [Library.CreateTopics].
//
// It returns once the brokers' metadata no longer shows the deleted
// topics. A topic can be created again with the same name afterwards, and the
// producers and consumers of this Library that knew the deleted topic keep
// working with the new one: they forget the old topic at once (what a
// producer still held for it fails), and a consumer subscribed to it stays
// subscribed and reads the new topic from its beginning. Messages a
// consumer had fetched from the old topic but a poll had not returned yet
// are dropped with the topic.
//
// Hazards, as with any Kafka client: on a cluster that creates topics on
// first use, a consumer still subscribed to a deleted topic (here or in any
// other process) may create it again at once, with the broker's default
// settings; delete topics nobody consumes, or unsubscribe first. Clients in
// other processes, or of another Library, are not told: franz-go clients
// then refuse the new topic until they are re-created, and older brokers
// may hand them stale offsets.
//
// In BPL, (kafka-delete-topics target ("t1" "t9")) returns ("t1" => true
// "t9" => false).
func (lib *Library) DeleteTopics(ctx context.Context, target any, topics []string) (map[string]bool, error) {
	return withAdmin(ctx, lib, "kafka-delete-topics", target, func(ctx context.Context, h *handle, adm *kadm.Client) (map[string]bool, error) {
		topics = unique(topics)
		done := map[string]bool{}
		failed := map[string]error{}
		if len(topics) > 0 {
			resp, err := adm.DeleteTopics(ctx, topics...)
			if err != nil {
				return nil, h.requestError(ctx, err)
			}
			for _, t := range topics {
				r, ok := resp[t]
				switch {
				case !ok:
					failed[t] = unanswered("topic", t)
				case errors.Is(r.Err, kerr.UnknownTopicOrPartition):
					done[t] = false
				case r.Err != nil:
					failed[t] = topicError(t, r.Err, r.ErrMessage)
				default:
					done[t] = true
				}
			}
		}
		// Forget only once no broker's answer shows the old topic:
		// a consumer re-subscribing earlier could learn the old topic's
		// id again and then refuse the new one.
		deleted := trueKeys(done)
		settle(ctx, h, deleted, func(t *kmsg.MetadataResponseTopic) bool {
			return t.ErrorCode == kerr.UnknownTopicOrPartition.Code
		})
		lib.forgetTopics(ctx, deleted)
		return done, topicsFailure(topics, done, failed, "deleted", "did not exist")
	})
}

// ListTopics returns the names of the cluster's topics, sorted. Internal
// topics, such as __consumer_offsets, are left out. In BPL,
// (kafka-list-topics target) returns ("t1" "t2").
func (lib *Library) ListTopics(ctx context.Context, target any) ([]string, error) {
	return withAdmin(ctx, lib, "kafka-list-topics", target, func(ctx context.Context, h *handle, _ *kadm.Client) ([]string, error) {
		resp, err := metadata(ctx, h, nil)
		if err != nil {
			return nil, err
		}
		names := []string{}
		for _, t := range resp.Topics {
			if t.Topic != nil && !t.IsInternal && t.ErrorCode == 0 {
				names = append(names, *t.Topic)
			}
		}
		slices.Sort(names)
		return names, nil
	})
}

// DescribeTopics returns the partitions of topics, each with its leader,
// replicas and in-sync replicas, as the brokers' metadata shows them now.
// With no topics it describes every topic but the internal ones, sorted;
// otherwise the topics in the order given. A topic that does not exist is
// an error (wrapping kerr.UnknownTopicOrPartition) naming it; the topics
// that do exist are still returned.
//
// In BPL, (kafka-describe-topics target ["t"]) returns, per topic, its
// [TopicInfo.List]: ("t" => ("partitions" => (("partition" => 0 "leader"
// => 1 "replicas" => (1 2 0) "isr" => (1 2 0)) ...)) ...).
func (lib *Library) DescribeTopics(ctx context.Context, target any, topics ...string) ([]TopicInfo, error) {
	return withAdmin(ctx, lib, "kafka-describe-topics", target, func(ctx context.Context, h *handle, _ *kadm.Client) ([]TopicInfo, error) {
		all := len(topics) == 0
		topics = unique(topics)
		if all {
			topics = nil
		}
		resp, err := metadata(ctx, h, topics)
		if err != nil {
			return nil, err
		}
		byName := map[string]*kmsg.MetadataResponseTopic{}
		for i := range resp.Topics {
			if t := &resp.Topics[i]; t.Topic != nil && !(all && (t.IsInternal || t.ErrorCode != 0)) {
				byName[*t.Topic] = t
			}
		}
		if all {
			topics = slices.Sorted(maps.Keys(byName))
		}
		infos := []TopicInfo{}
		found := map[string]bool{}
		failed := map[string]error{}
		for _, name := range topics {
			t := byName[name]
			switch {
			case t == nil:
				failed[name] = unanswered("topic", name)
				continue
			case t.ErrorCode != 0:
				failed[name] = topicError(name, kerr.ErrorForCode(t.ErrorCode), "")
				continue
			}
			info := TopicInfo{Topic: name, Partitions: make([]PartitionInfo, 0, len(t.Partitions))}
			for _, p := range t.Partitions {
				info.Partitions = append(info.Partitions, PartitionInfo{
					Partition: p.Partition,
					Leader:    p.Leader,
					Replicas:  slices.Clone(p.Replicas),
					ISR:       slices.Clone(p.ISR),
				})
			}
			slices.SortFunc(info.Partitions, func(a, b PartitionInfo) int { return int(a.Partition) - int(b.Partition) })
			infos = append(infos, info)
			found[name] = true
		}
		if len(failed) > 0 {
			return infos, topicsFailure(topics, found, failed, "described", "")
		}
		return infos, nil
	})
}

// CreatePartitions grows topic to count partitions in all and returns
// true; it returns false when the topic already has count partitions.
// Kafka cannot remove partitions: a smaller count is an error wrapping
// kerr.InvalidPartitions, and a topic that does not exist one wrapping
// kerr.UnknownTopicOrPartition.
//
// It returns once the brokers' metadata shows the new partitions, each
// with a leader.
//
// Adding partitions changes which partition a key goes to, so messages
// with the same key may no longer all be in one partition, in order.
//
// In BPL, (kafka-create-partitions target "t" 6) returns true or false.
func (lib *Library) CreatePartitions(ctx context.Context, target any, topic string, count int) (bool, error) {
	const fn = "kafka-create-partitions"
	if err := topicname.Check(topic); err != nil {
		return false, NewError(fn, Errorf(ErrInvalidArgument, "topic: %v", err))
	}
	if count < 1 || count > math.MaxInt32 {
		return false, NewError(fn, Errorf(ErrInvalidArgument, "count %d: want 1 to %d partitions in all", count, math.MaxInt32))
	}
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) (bool, error) {
		// Kafka fails a count equal to the current one and kfake
		// accepts it: ask first, so both answer false.
		resp, err := metadata(ctx, h, []string{topic})
		if err != nil {
			return false, err
		}
		if len(resp.Topics) != 1 {
			return false, unanswered("topic", topic)
		}
		if code := resp.Topics[0].ErrorCode; code != 0 {
			return false, topicError(topic, kerr.ErrorForCode(code), "")
		}
		have := len(resp.Topics[0].Partitions)
		switch {
		case count == have:
			return false, nil
		case count < have:
			return false, Wrapf(ErrKafka, kerr.InvalidPartitions, "topic %q has %d partitions, more than %d; Kafka cannot remove partitions", topic, have, count)
		}
		rs, err := adm.UpdatePartitions(ctx, count, topic)
		if err != nil {
			return false, h.requestError(ctx, err)
		}
		r, ok := rs[topic]
		if !ok {
			return false, unanswered("topic", topic)
		}
		if r.Err != nil {
			return false, topicError(topic, r.Err, r.ErrMessage)
		}
		settle(ctx, h, []string{topic}, func(t *kmsg.MetadataResponseTopic) bool { return led(t, count) })
		lib.announceTopics(map[string]bool{topic: true})
		return true, nil
	})
}

// settle waits until the brokers' metadata shows, for every topic, what a
// create, grow or delete did: shown reports it for one topic. A broker
// applies the controller's change a moment after the call that made it
// returns (kfake at once, Kafka some milliseconds later), and a script's
// next call must see it. settle gives up quietly when ctx ends, as the
// change itself was made. One broker answers each check; brokers learn of
// a change at about the same time.
func settle(ctx context.Context, h *handle, topics []string, shown func(*kmsg.MetadataResponseTopic) bool) {
	if len(topics) == 0 {
		return
	}
	wait := 10 * time.Millisecond
	for {
		if resp, err := metadata(ctx, h, topics); err == nil && allShown(resp, topics, shown) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

func allShown(resp *kmsg.MetadataResponse, topics []string, shown func(*kmsg.MetadataResponseTopic) bool) bool {
	for _, name := range topics {
		i := slices.IndexFunc(resp.Topics, func(t kmsg.MetadataResponseTopic) bool { return t.Topic != nil && *t.Topic == name })
		if i < 0 || !shown(&resp.Topics[i]) {
			return false
		}
	}
	return true
}

// led reports whether t exists with at least n partitions, each with a
// leader: ready for producers and consumers.
func led(t *kmsg.MetadataResponseTopic, n int) bool {
	if t.ErrorCode != 0 || len(t.Partitions) < n {
		return false
	}
	for _, p := range t.Partitions {
		if p.ErrorCode != 0 || p.Leader < 0 {
			return false
		}
	}
	return true
}

// trueKeys returns, in order, the topics whose value in done is true.
func trueKeys(done map[string]bool) []string {
	var ts []string
	for _, t := range slices.Sorted(maps.Keys(done)) {
		if done[t] {
			ts = append(ts, t)
		}
	}
	return ts
}

// forgetTopics makes the clients of lib forget deleted topics, so that they
// work with topics created again under the same names (franz-go otherwise
// refuses a topic whose id changed). Producers and admin clients purge
// them; consumers subscribed to them purge them and subscribe again.
//
// It waits for that until ctx ends, and no longer: a consumer busy
// subscribing on an unreachable cluster must not hold the admin call past
// its request-timeout. What is left then finishes in the background, and
// Close waits for it.
func (lib *Library) forgetTopics(ctx context.Context, topics []string) {
	if len(topics) == 0 {
		return
	}
	hs := lib.liveHandles()
	forgot := make(chan struct{}, len(hs)) // room for all: the sends never block
	for _, h := range hs {
		lib.bg.Go(fmt.Sprintf("%s %s forgetting deleted topics", h.kind, h.id), func() {
			defer func() { forgot <- struct{}{} }()
			defer h.calls.Done()
			if h.kind == Consumer {
				h.cons.forget(topics)
			} else {
				h.client().PurgeTopicsFromClient(topics...)
			}
		})
	}
	for range hs {
		select {
		case <-forgot:
		case <-ctx.Done():
			return
		}
	}
}

// announceTopics tells the consumers of lib subscribed to topics just
// created (or grown) to refresh their metadata now, rather than at their
// next periodic refresh.
func (lib *Library) announceTopics(created map[string]bool) {
	var topics []string
	for t, ok := range created {
		if ok {
			topics = append(topics, t)
		}
	}
	if len(topics) == 0 {
		return
	}
	for _, h := range lib.liveHandles() {
		if h.kind == Consumer && h.cons.subscribedToAny(topics) {
			h.cl.ForceMetadataRefresh()
		}
		h.calls.Done()
	}
}

// liveHandles returns every live handle, each counted as a call in flight:
// the caller must call h.calls.Done on each.
func (lib *Library) liveHandles() []*handle {
	lib.mu.RLock()
	defer lib.mu.RUnlock()
	hs := make([]*handle, 0, len(lib.handles))
	for _, h := range lib.handles {
		h.calls.Add(1) // under the registry lock, as acquire does
		hs = append(hs, h)
	}
	return hs
}

// unique returns ss without repeats, in first-seen order.
func unique(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// topicError is the failure of one topic, with the broker's own message
// when it adds to the error code's.
func topicError(topic string, err error, brokerMsg string) error {
	if brokerMsg != "" && !strings.Contains(err.Error(), brokerMsg) {
		return Wrapf(ErrKafka, err, "topic %q (%s)", topic, brokerMsg)
	}
	return Wrapf(ErrKafka, err, "topic %q", topic)
}

// topicsError is the error of a call that failed for some of its topics.
// It names each failed topic and its reason, then says what happened to
// the others; errors.Is reaches every reason.
type topicsError struct {
	msg  string
	errs []error
}

func (e *topicsError) Error() string   { return e.msg }
func (e *topicsError) Unwrap() []error { return e.errs }

// topicsFailure returns the error of a call on topics (in the caller's
// order) that failed for those in failed, or nil when none failed. done
// holds the others: true ones are reported as yes, false ones as no.
func topicsFailure(topics []string, done map[string]bool, failed map[string]error, yes, no string) error {
	if len(failed) == 0 {
		return nil
	}
	var b strings.Builder
	if len(topics) == 1 {
		b.WriteString(failed[topics[0]].Error())
		return &topicsError{msg: b.String(), errs: []error{failed[topics[0]]}}
	}
	fmt.Fprintf(&b, "%d of %d topics failed", len(failed), len(topics))
	var errs []error
	var yeses, nos []string
	for _, t := range topics {
		if err, bad := failed[t]; bad {
			b.WriteString("; ")
			b.WriteString(err.Error())
			errs = append(errs, err)
		} else if done[t] {
			yeses = append(yeses, strconv.Quote(t))
		} else {
			nos = append(nos, strconv.Quote(t))
		}
	}
	if len(yeses) > 0 {
		fmt.Fprintf(&b, "; %s: %s", yes, strings.Join(yeses, ", "))
	}
	if len(nos) > 0 && no != "" {
		fmt.Fprintf(&b, "; %s: %s", no, strings.Join(nos, ", "))
	}
	return &topicsError{msg: b.String(), errs: errs}
}

// List returns the topic's description as describe-topics shows it under
// the topic's name: ("partitions" => (("partition" => 0 "leader" => 1
// "replicas" => (1 2 0) "isr" => (1 2 0)) ...)).
func (t *TopicInfo) List() *value.List {
	parts := &value.List{}
	for _, p := range t.Partitions {
		l := &value.List{}
		l.AppendNamed("partition", int64(p.Partition))
		l.AppendNamed("leader", int64(p.Leader))
		l.AppendNamed("replicas", int32List(p.Replicas))
		l.AppendNamed("isr", int32List(p.ISR))
		parts.Append(l)
	}
	return (&value.List{}).AppendNamed("partitions", parts)
}
