package kafkabpl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The admin functions: topics, partitions, the cluster, groups and lag, on
// kadm. (The package docs describe targets; the methods below say the rest.)
//
// Targets: a string with the form of a handle id is always read as one, so
// a dead id is an UnknownHandle error rather than a server named "a3f...";
// anything else is a config, for a one-shot client that is closed after
// the call. Every call runs under the target's request-timeout.
//
// Metadata is asked for with raw requests that never ask the brokers to
// create a topic, and fresh (not from kgo's cache), so describe-topics
// shows a leader change at once and describing a missing topic does not
// create it on a cluster that auto-creates topics.

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

// ClusterInfo describes a cluster: its id, its controller and its brokers.
type ClusterInfo struct {
	ClusterID string
	// Controller is the id of the broker that manages the cluster's
	// metadata (topics and partitions); -1 when the brokers do not say.
	Controller int32
	// Brokers are all the brokers, by id. Each one answers metadata
	// requests for the whole cluster.
	Brokers []BrokerInfo
}

// BrokerInfo is one broker: its id and the address it advertises.
type BrokerInfo struct {
	ID   int32
	Host string
	Port int32
}

// GroupListing is one consumer group as [Library.ListGroups] shows it.
type GroupListing struct {
	Group string
	// State is the group's state as the brokers name it: "Stable",
	// "Empty", "PreparingRebalance", "CompletingRebalance" or "Dead".
	State string
}

// GroupInfo describes a consumer group, its members and how far behind it
// is.
type GroupInfo struct {
	Group string
	State string // as in GroupListing
	// Members are the consumers in the group, with what each was
	// assigned; none when the group is Empty.
	Members []GroupMember
	// Lag is, per topic (sorted) and partition (in order), where the
	// group is: every partition a member is assigned or the group has
	// committed to.
	Lag []TopicLag
	// TotalLag is the sum of the partitions' lags (those that could be
	// computed).
	TotalLag int64
}

// GroupMember is one consumer in a group.
type GroupMember struct {
	MemberID string
	ClientID string // the member's client-id config
	Host     string // the address the member connects from, as the broker saw it
	// Assignment is what the member consumes: topics sorted, each with
	// its partitions in order.
	Assignment []TopicPartitions
}

// TopicPartitions is a topic and some of its partitions.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// TopicLag is a group's lag on one topic, partition by partition.
type TopicLag struct {
	Topic      string
	Partitions []PartitionLag
}

// PartitionLag is where a group stands on one partition.
type PartitionLag struct {
	Partition int32
	// Committed is the offset the group committed: the next message it
	// will read. -1 when it has committed nothing there.
	Committed int64
	// End is the partition's end offset: the offset the next message
	// written will get.
	End int64
	// Lag is the number of messages the group has yet to read: End -
	// Committed, or, with nothing committed, the messages in the
	// partition. -1 when it could not be computed; Err then says why.
	Lag int64
	Err error
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
		return nil, newError(fn, errorf(ErrInvalidArgument, "partitions %d, replication factor %d: want 0 (the broker's default) or more", opts.Partitions, opts.ReplicationFactor))
	}
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) (map[string]bool, error) {
		topics = unique(topics)
		var valid []string
		failed := map[string]error{}
		for _, t := range topics {
			if err := topicname.Check(t); err != nil {
				failed[t] = wrapf(errKafka, kerr.InvalidTopicException, "%v", err)
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

// DescribeCluster returns the cluster's id, its controller and its brokers.
// In BPL, (kafka-describe-cluster target) returns its [ClusterInfo.List].
func (lib *Library) DescribeCluster(ctx context.Context, target any) (*ClusterInfo, error) {
	return withAdmin(ctx, lib, "kafka-describe-cluster", target, func(ctx context.Context, h *handle, _ *kadm.Client) (*ClusterInfo, error) {
		resp, err := metadata(ctx, h, []string{})
		if err != nil {
			return nil, err
		}
		info := &ClusterInfo{Controller: resp.ControllerID, Brokers: make([]BrokerInfo, 0, len(resp.Brokers))}
		if resp.ClusterID != nil {
			info.ClusterID = *resp.ClusterID
		}
		for _, b := range resp.Brokers {
			info.Brokers = append(info.Brokers, BrokerInfo{ID: b.NodeID, Host: b.Host, Port: b.Port})
		}
		slices.SortFunc(info.Brokers, func(a, b BrokerInfo) int { return int(a.ID) - int(b.ID) })
		return info, nil
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
		return false, newError(fn, errorf(ErrInvalidArgument, "topic: %v", err))
	}
	if count < 1 || count > math.MaxInt32 {
		return false, newError(fn, errorf(ErrInvalidArgument, "count %d: want 1 to %d partitions in all", count, math.MaxInt32))
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
			return false, wrapf(errKafka, kerr.InvalidPartitions, "topic %q has %d partitions, more than %d; Kafka cannot remove partitions", topic, have, count)
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

// ListGroups returns the cluster's consumer groups, sorted by name, with
// their states. In BPL, (kafka-list-groups target) returns ("g1" =>
// "Stable" "g2" => "Empty").
func (lib *Library) ListGroups(ctx context.Context, target any) ([]GroupListing, error) {
	return withAdmin(ctx, lib, "kafka-list-groups", target, func(ctx context.Context, h *handle, adm *kadm.Client) ([]GroupListing, error) {
		listed, err := adm.ListGroups(ctx)
		if err != nil {
			return nil, h.requestError(ctx, err)
		}
		out := make([]GroupListing, 0, len(listed))
		for _, g := range listed.Sorted() {
			out = append(out, GroupListing{Group: g.Group, State: g.State})
		}
		return out, nil
	})
}

// DescribeGroup describes a consumer group: its state, its members with
// what each is assigned, and per partition the committed offset, the end
// offset and the lag, with the lags' total. A group that does not exist is
// an error wrapping kerr.GroupIDNotFound (older brokers instead answer with
// the state "Dead" and no members).
//
// The group's lag is what it has committed: a consumer that polled
// messages but has not committed them yet (kafka-commit, or auto-commit
// every auto-commit-interval) still counts them as lag.
//
// In BPL, (kafka-describe-group target "g") returns its [GroupInfo.List].
func (lib *Library) DescribeGroup(ctx context.Context, target any, group string) (*GroupInfo, error) {
	const fn = "kafka-describe-group"
	if group == "" {
		return nil, newError(fn, errorf(ErrInvalidArgument, "group: want a group name, got \"\""))
	}
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) (*GroupInfo, error) {
		// On a cluster no group has used yet, the brokers first create
		// the offsets topic and answer COORDINATOR_NOT_AVAILABLE until
		// it is ready: ask again, as Java's admin client does.
		var lags kadm.DescribedGroupLags
		var err error
		for wait := 50 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
			lags, err = adm.Lag(ctx, group)
			l := lags[group]
			groupErr := l.Error()
			if !coordinatorPending(err) && (err != nil || !coordinatorPending(groupErr)) {
				break
			}
			select {
			case <-ctx.Done():
				return nil, h.requestError(ctx, cmp.Or(err, groupErr))
			case <-time.After(wait):
			}
		}
		if err != nil {
			return nil, h.requestError(ctx, err)
		}
		l, ok := lags[group]
		if !ok {
			return nil, unanswered("group", group)
		}
		if err := l.Error(); err != nil {
			if isKafkaErr(err) {
				return nil, wrapf(errKafka, err, "group %q", group)
			}
			return nil, h.requestError(ctx, err)
		}
		return groupInfo(l), nil
	})
}

// memberHost is a member's address as brokers report it, alike from all:
// Kafka says "/127.0.0.1", as Java prints an address, and kfake
// "127.0.0.1:54321", with the client's port.
func memberHost(h string) string {
	h = strings.TrimPrefix(h, "/")
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// coordinatorPending reports whether err says only that a group's
// coordinator is not ready yet, which passes by itself.
func coordinatorPending(err error) bool {
	if err == nil {
		return false
	}
	pending := func(err error) bool {
		return errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.NotCoordinator)
	}
	if se, ok := errors.AsType[*kadm.ShardErrors](err); ok {
		for _, e := range se.Errs {
			if !pending(e.Err) {
				return false
			}
		}
		return len(se.Errs) > 0
	}
	return pending(err)
}

// groupInfo converts kadm's view of a group and its lag.
func groupInfo(l kadm.DescribedGroupLag) *GroupInfo {
	info := &GroupInfo{Group: l.Group, State: l.State, Members: []GroupMember{}, Lag: []TopicLag{}}
	for _, m := range l.Members {
		gm := GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: memberHost(m.ClientHost), Assignment: []TopicPartitions{}}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				gm.Assignment = append(gm.Assignment, TopicPartitions{Topic: t.Topic, Partitions: slices.Sorted(slices.Values(t.Partitions))})
			}
			slices.SortFunc(gm.Assignment, func(a, b TopicPartitions) int { return strings.Compare(a.Topic, b.Topic) })
		}
		info.Members = append(info.Members, gm)
	}
	for _, t := range slices.Sorted(maps.Keys(l.Lag)) {
		tl := TopicLag{Topic: t, Partitions: []PartitionLag{}}
		for _, p := range slices.Sorted(maps.Keys(l.Lag[t])) {
			ml := l.Lag[t][p]
			pl := PartitionLag{Partition: p, Committed: ml.Commit.At, End: ml.End.Offset, Lag: ml.Lag, Err: ml.Err}
			if pl.Committed < 0 {
				pl.Committed = -1
			}
			if ml.Err != nil {
				pl.Lag = -1
				if ml.End.Err != nil {
					pl.End = -1
				}
			}
			if pl.Lag > 0 {
				info.TotalLag += pl.Lag
			}
			tl.Partitions = append(tl.Partitions, pl)
		}
		info.Lag = append(info.Lag, tl)
	}
	return info
}

// withAdmin runs call on target's admin client under the request-timeout,
// and words its error for fn. target is an admin handle's id, or a config
// for a client of the call's own, closed when it returns.
func withAdmin[T any](ctx context.Context, lib *Library, fn string, target any, call func(context.Context, *handle, *kadm.Client) (T, error)) (T, error) {
	h, release, err := lib.adminTarget(target)
	if err != nil {
		var zero T
		return zero, newError(fn, err)
	}
	defer release()
	cctx, cancel := context.WithTimeout(ctx, h.cfg.requestTimeout)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel) // destroying the handle ends the call
	defer stop()
	// A kadm client per call: its request timeout (how long the brokers
	// may take to create or delete) follows the handle's request-timeout.
	adm := kadm.NewClient(h.cl)
	adm.SetTimeoutMillis(int32(min(h.cfg.requestTimeout.Milliseconds(), math.MaxInt32)))
	v, err := call(cctx, h, adm)
	if err != nil {
		switch {
		case ctx.Err() != nil: // the caller's own context ended: the caller's error
			err = ctx.Err()
		case h.ctx.Err() != nil:
			err = errorf(ErrClosed, "admin handle destroyed during the call")
		}
		return v, newError(fn, err)
	}
	return v, nil
}

// adminTarget returns the handle an admin call runs on and the function to
// call when done with it.
func (lib *Library) adminTarget(target any) (*handle, func(), error) {
	if id, ok := target.(string); ok && kindOfID(id) != "" {
		h, err := lib.acquire(id, Admin)
		if err != nil {
			return nil, nil, err
		}
		return h, h.calls.Done, nil
	}
	lib.mu.RLock()
	closed := lib.closed
	lib.mu.RUnlock()
	if closed {
		return nil, nil, errorf(ErrClosed, "library closed")
	}
	cfg, err := parseConfig(target, nil)
	if err != nil {
		return nil, nil, err
	}
	h, err := newHandle(Admin, cfg)
	if err != nil {
		return nil, nil, err
	}
	return h, func() { h.cancel(); h.cl.Close() }, nil
}

// unanswered is the error for a topic or group (what) that a response
// left out.
func unanswered(what, name string) error {
	return errorf(errKafka, "%s %q: the brokers did not answer for it", what, name)
}

// metadata asks the brokers for fresh metadata of topics (nil: all topics;
// empty: none), never asking them to create a topic.
func metadata(ctx context.Context, h *handle, topics []string) (*kmsg.MetadataResponse, error) {
	return metadataRequest(ctx, h, topics, false)
}

// metadataRequest is metadata, asking the brokers to create the topics
// that do not exist when create is true (they still decide, by their
// auto.create.topics.enable).
func metadataRequest(ctx context.Context, h *handle, topics []string, create bool) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = create
	if topics != nil {
		req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(topics))
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	resp, err := req.RequestWith(ctx, h.cl)
	if err != nil {
		return nil, h.requestError(ctx, err)
	}
	return resp, nil
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
// its request-timeout. What is left then finishes in the background.
func (lib *Library) forgetTopics(ctx context.Context, topics []string) {
	if len(topics) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, h := range lib.liveHandles() {
		wg.Go(func() {
			defer h.calls.Done()
			if h.kind == Consumer {
				h.cons.forget(topics)
			} else {
				h.cl.PurgeTopicsFromClient(topics...)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
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
		return wrapf(errKafka, err, "topic %q (%s)", topic, brokerMsg)
	}
	return wrapf(errKafka, err, "topic %q", topic)
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
