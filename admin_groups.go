package kafkabpl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group admin functions: listing consumer groups and describing one,
// with its members, their assignments and the group's lag.

// GroupListing is one consumer group as [Library.ListGroups] shows it.
type GroupListing struct {
	Group string
	// State is the group's state as the brokers name it: "Stable",
	// "Empty", "PreparingRebalance", "CompletingRebalance" or "Dead".
	State string
	// Type is the group's protocol as the brokers name it: "classic",
	// "consumer" (KIP-848's), "share" (a share group: see
	// [ShareConsumer]) or "streams"; "" from a broker older than Kafka
	// 3.8, which does not say.
	Type string
}

// GroupInfo describes a consumer group, its members and how far behind it
// is.
type GroupInfo struct {
	Group string
	State string // as in GroupListing
	// Type is "classic", "consumer" (KIP-848's protocol) or "share" (a
	// share group: see [ShareConsumer]).
	Type string
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
			out = append(out, GroupListing{Group: g.Group, State: g.State, Type: g.GroupType})
		}
		return out, nil
	})
}

// DescribeGroup describes a consumer group: its state, its members with
// what each is assigned, and per partition the committed offset, the end
// offset and the lag, with the lags' total. A group that does not exist is
// an error wrapping kerr.GroupIDNotFound (older brokers instead answer with
// the state "Dead" and no members). A group of KIP-848's protocol
// ("group-protocol" "consumer") is described as the broker's
// ConsumerGroupDescribe shows it, with the same fields, and a share group
// (see [ShareConsumer]) as its ShareGroupDescribe and
// DescribeShareGroupOffsets show it: per partition, Committed is the
// share-partition start offset (every record before it is acknowledged),
// and Lag the records from there to the end not acknowledged yet (the
// broker's count; End − Committed from brokers before Kafka 4.2). The
// lag covers the partitions the group keeps share state for: those it
// has started reading.
//
// The group's lag is what it has committed: a consumer that polled
// messages but has not committed them yet (kafka-commit, or auto-commit
// every auto-commit-interval) still counts them as lag.
//
// In BPL, (kafka-describe-group target "g") returns its [GroupInfo.List].
func (lib *Library) DescribeGroup(ctx context.Context, target any, group string) (*GroupInfo, error) {
	const fn = "kafka-describe-group"
	if group == "" {
		return nil, NewError(fn, Errorf(ErrInvalidArgument, "group: want a group name, got \"\""))
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
		if err := l.Error(); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			if isKafkaErr(err) {
				return nil, Wrapf(ErrKafka, err, "group %q", group)
			}
			return nil, h.requestError(ctx, err)
		}
		info := groupInfo(l)
		if l.Error() != nil || len(info.Members) == 0 && info.State != "Empty" && info.State != "Dead" {
			// Not found, or active with no members: it may be a group of
			// KIP-848's protocol, which the classic DescribeGroups that
			// kadm's Lag asks does not show.
			found, assigned, err := describeOtherProtocols(ctx, h, adm, info)
			if err == nil && len(assigned) > 0 {
				err = addUncommittedLag(ctx, adm, info, assigned)
			}
			if err != nil {
				return nil, h.requestError(ctx, err)
			}
			if !found && l.Error() != nil {
				return nil, Wrapf(ErrKafka, l.Error(), "group %q", group)
			}
		}
		return info, nil
	})
}

// describeOtherProtocols completes info, which the classic
// DescribeGroups showed with no members or not at all, from the describes
// of KIP-848's groups and of share groups. found is false when neither
// knows the group; assigned is what a KIP-848 group's members hold.
func describeOtherProtocols(ctx context.Context, h *handle, adm *kadm.Client, info *GroupInfo) (found bool, assigned kadm.TopicsSet, err error) {
	found, assigned, err = describeConsumerGroup(ctx, h.cl, adm, info)
	if err == nil && !found {
		found, err = describeShareGroup(ctx, adm, info)
	}
	return found, assigned, err
}

// describeConsumerGroup completes info with what the broker says of a
// group of KIP-848's protocol ("group-protocol" "consumer"): its state,
// its members and their assignments, which it also returns. found is
// false when the group is no such group, or the broker knows no such
// groups (before Kafka 4.0).
func describeConsumerGroup(ctx context.Context, cl *kgo.Client, adm *kadm.Client, info *GroupInfo) (found bool, assigned kadm.TopicsSet, err error) {
	// The request itself, not kadm's DescribeConsumerGroups: a broker may
	// name an assignment's topics by id alone (kfake does), and kadm
	// keeps only their names.
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{info.Group}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
		return false, nil, nil
	}
	g := resp.Groups[0]
	var names map[[16]byte]string // topic ids to names, asked for once if needed
	name := func(tp kmsg.AssignmentTopicPartition) (string, error) {
		if tp.Topic != "" {
			return tp.Topic, nil
		}
		if names == nil {
			topics, err := adm.ListTopics(ctx)
			if err != nil {
				return "", err
			}
			names = map[[16]byte]string{}
			for _, td := range topics {
				names[td.ID] = td.Topic
			}
		}
		return names[tp.TopicID], nil
	}
	info.State, info.Type = g.State, "consumer"
	info.Members = info.Members[:0]
	assigned = kadm.TopicsSet{}
	for _, m := range g.Members {
		gm := GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: memberHost(m.ClientHost), Assignment: []TopicPartitions{}}
		for _, tp := range m.Assignment.TopicPartitions {
			t, err := name(tp)
			if err != nil {
				return true, nil, err
			}
			gm.Assignment = append(gm.Assignment, TopicPartitions{Topic: t, Partitions: slices.Sorted(slices.Values(tp.Partitions))})
			assigned.Add(t, tp.Partitions...)
		}
		slices.SortFunc(gm.Assignment, func(a, b TopicPartitions) int { return strings.Compare(a.Topic, b.Topic) })
		info.Members = append(info.Members, gm)
	}
	slices.SortFunc(info.Members, func(a, b GroupMember) int { return strings.Compare(a.MemberID, b.MemberID) })
	return true, assigned, nil
}

// addUncommittedLag adds to info the lag of the partitions assigned that
// the group has committed nothing to, which kadm's Lag computes only for
// the classic protocol's members: the messages in each.
func addUncommittedLag(ctx context.Context, adm *kadm.Client, info *GroupInfo, assigned kadm.TopicsSet) error {
	for _, tl := range info.Lag { // the partitions committed to have their lag
		for _, p := range tl.Partitions {
			delete(assigned[tl.Topic], p.Partition)
		}
	}
	topics := slices.DeleteFunc(assigned.Topics(), func(t string) bool { return len(assigned[t]) == 0 })
	if len(topics) == 0 {
		return nil
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	for _, t := range topics {
		i, found := slices.BinarySearchFunc(info.Lag, t, func(tl TopicLag, t string) int { return strings.Compare(tl.Topic, t) })
		if !found {
			info.Lag = slices.Insert(info.Lag, i, TopicLag{Topic: t, Partitions: []PartitionLag{}})
		}
		tl := &info.Lag[i]
		for _, p := range slices.Sorted(maps.Keys(assigned[t])) {
			// Nothing committed: the lag is the messages in the partition.
			pl := PartitionLag{Partition: p, Committed: -1, End: -1, Lag: -1}
			start, sok := starts.Lookup(t, p)
			end, eok := ends.Lookup(t, p)
			switch {
			case !sok || !eok:
				pl.Err = fmt.Errorf("no offsets listed for %s partition %d", t, p)
			case cmp.Or(start.Err, end.Err) != nil:
				pl.Err = cmp.Or(start.Err, end.Err)
			default:
				pl.End, pl.Lag = end.Offset, end.Offset-start.Offset
				info.TotalLag += pl.Lag
			}
			j, _ := slices.BinarySearchFunc(tl.Partitions, p, func(pl PartitionLag, p int32) int { return cmp.Compare(pl.Partition, p) })
			tl.Partitions = slices.Insert(tl.Partitions, j, pl)
		}
	}
	return nil
}

// describeShareGroup completes info with what the brokers say of a share
// group: its state, its members and their assignments, and per partition
// its start offset, end offset and lag. found is false when the group is
// no share group, or the brokers know none (before Kafka 4.0).
func describeShareGroup(ctx context.Context, adm *kadm.Client, info *GroupInfo) (found bool, err error) {
	described, err := adm.DescribeShareGroups(ctx, info.Group)
	g, ok := described[info.Group]
	if err != nil || !ok || g.Err != nil || g.GroupState == "Dead" {
		return false, nil
	}
	info.State, info.Type = g.GroupState, "share"
	info.Members = info.Members[:0]
	for _, m := range g.Members {
		gm := GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, Host: memberHost(m.ClientHost), Assignment: []TopicPartitions{}}
		for _, t := range m.Assignment.Sorted() {
			gm.Assignment = append(gm.Assignment, TopicPartitions{Topic: t.Topic, Partitions: t.Partitions})
		}
		info.Members = append(info.Members, gm)
	}
	offsets, err := adm.DescribeShareGroupOffsets(ctx, info.Group)
	if err != nil {
		return true, err
	}
	started := offsets[info.Group].Offsets
	if len(started) == 0 {
		return true, nil
	}
	ends, err := adm.ListEndOffsets(ctx, slices.Sorted(maps.Keys(started))...)
	if err != nil {
		return true, err
	}
	info.Lag, info.TotalLag = info.Lag[:0], 0
	for _, t := range slices.Sorted(maps.Keys(started)) {
		tl := TopicLag{Topic: t, Partitions: []PartitionLag{}}
		for _, p := range slices.Sorted(maps.Keys(started[t])) {
			o := started[t][p]
			pl := PartitionLag{Partition: p, Committed: max(o.StartOffset, -1), End: -1, Lag: -1, Err: o.Err}
			end, ok := ends.Lookup(t, p)
			switch {
			case o.Err != nil:
			case !ok:
				pl.Err = fmt.Errorf("no end offset listed for %s partition %d", t, p)
			case end.Err != nil:
				pl.Err = end.Err
			default:
				pl.End = end.Offset
				pl.Lag = o.Lag
				if pl.Lag < 0 && pl.Committed >= 0 { // a broker before Kafka 4.2
					pl.Lag = max(end.Offset-pl.Committed, 0)
				}
			}
			if pl.Lag > 0 {
				info.TotalLag += pl.Lag
			}
			tl.Partitions = append(tl.Partitions, pl)
		}
		info.Lag = append(info.Lag, tl)
	}
	return true, nil
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
	info := &GroupInfo{Group: l.Group, State: l.State, Type: "classic", Members: []GroupMember{}, Lag: []TopicLag{}}
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

// List returns the group as describe-group shows it (a share group adds
// "type" => "share" after its "state"):
//
//	("group" => "g" "state" => "Stable"
//	 "members" => (("member-id" => "m" "client-id" => "kafkabpl" "host" => "/127.0.0.1"
//	                "assignment" => ("t" => (0 1))) ...)
//	 "lag" => ("t" => (("partition" => 0 "committed" => 5 "end" => 9 "lag" => 4) ...))
//	 "total-lag" => 4)
//
// A partition the group has committed nothing to shows "committed" =>
// null; one whose lag could not be computed shows "lag" => null and an
// "error" element after it saying why.
func (g *GroupInfo) List() *value.List {
	members := &value.List{}
	for _, m := range g.Members {
		assigned := &value.List{}
		for _, a := range m.Assignment {
			assigned.AppendNamed(a.Topic, int32List(a.Partitions))
		}
		ml := &value.List{}
		ml.AppendNamed("member-id", m.MemberID)
		ml.AppendNamed("client-id", m.ClientID)
		ml.AppendNamed("host", m.Host)
		ml.AppendNamed("assignment", assigned)
		members.Append(ml)
	}
	lag := &value.List{}
	for _, t := range g.Lag {
		parts := &value.List{}
		for _, p := range t.Partitions {
			pl := &value.List{}
			pl.AppendNamed("partition", int64(p.Partition))
			pl.AppendNamed("committed", offsetValue(p.Committed))
			pl.AppendNamed("end", offsetValue(p.End))
			pl.AppendNamed("lag", offsetValue(p.Lag))
			if p.Err != nil {
				pl.AppendNamed("error", p.Err.Error())
			}
			parts.Append(pl)
		}
		lag.AppendNamed(t.Topic, parts)
	}
	l := &value.List{}
	l.AppendNamed("group", g.Group)
	l.AppendNamed("state", g.State)
	if g.Type == "share" {
		l.AppendNamed("type", g.Type)
	}
	l.AppendNamed("members", members)
	l.AppendNamed("lag", lag)
	l.AppendNamed("total-lag", g.TotalLag)
	return l
}

// offsetValue is an offset or lag in BPL: null when unknown (-1).
func offsetValue(n int64) any {
	if n < 0 {
		return nil
	}
	return n
}

func int32List(ns []int32) *value.List {
	vals := make([]any, len(ns))
	for i, n := range ns {
		vals[i] = int64(n)
	}
	return value.ListOf(vals, nil)
}
