package kafkabpl

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The offset admin functions an operator reaches for: listing a topic's
// offsets, deleting records before an offset, resetting a group's
// committed offsets, and deleting a group.

// OffsetSpec says where in each partition of a topic: see
// [OffsetEarliest], [OffsetLatest], [OffsetAt], [OffsetAtTime] and
// [OffsetsOf]. The zero OffsetSpec is OffsetEarliest.
type OffsetSpec struct {
	kind  offsetKind
	n     int64  // OffsetAt's offset, OffsetAtTime's milliseconds
	group string // OffsetsOf's group
}

type offsetKind int8

const (
	offsetEarliest offsetKind = iota
	offsetLatest
	offsetExact
	offsetTime
	offsetGroup
)

// OffsetEarliest is each partition's earliest offset still stored (its
// start, or log start offset).
func OffsetEarliest() OffsetSpec { return OffsetSpec{kind: offsetEarliest} }

// OffsetLatest is each partition's end: the offset the next record
// written will get.
func OffsetLatest() OffsetSpec { return OffsetSpec{kind: offsetLatest} }

// OffsetAt is the same offset in every partition, for
// [Library.ResetGroupOffsets]. An offset past a partition's end is that
// end, and one before its start is its start, as Kafka's tools clamp it.
func OffsetAt(offset int64) OffsetSpec { return OffsetSpec{kind: offsetExact, n: offset} }

// OffsetAtTime is each partition's first record whose timestamp is at or
// after t, or its end when it has none.
func OffsetAtTime(t time.Time) OffsetSpec { return OffsetSpec{kind: offsetTime, n: t.UnixMilli()} }

// OffsetsOf is what another group committed, for
// [Library.ResetGroupOffsets]: a partition it committed nothing to is
// left as it is, and a group that does not exist is an error wrapping
// kerr.GroupIDNotFound.
func OffsetsOf(group string) OffsetSpec { return OffsetSpec{kind: offsetGroup, group: group} }

// String returns the spec as the BPL functions take it: "earliest",
// "latest", an offset, ("timestamp" => ms) or ("group" => "name").
func (s OffsetSpec) String() string {
	switch s.kind {
	case offsetLatest:
		return `"latest"`
	case offsetExact:
		return fmt.Sprint(s.n)
	case offsetTime:
		return fmt.Sprintf(`("timestamp" => %d)`, s.n)
	case offsetGroup:
		return fmt.Sprintf(`("group" => %q)`, s.group)
	}
	return `"earliest"`
}

// PartitionOffset is one partition's offset in the result of an offset
// admin function, or why there is none.
type PartitionOffset struct {
	Partition int32
	// Offset is the offset listed, the new start after a delete, or
	// the offset committed by a reset; -1 with Err.
	Offset int64
	// Timestamp is the record's time at Offset, in ms, for OffsetAtTime;
	// otherwise -1.
	Timestamp int64
	Err       error
}

// ListOffsets lists each partition of topic at spec: [OffsetEarliest],
// [OffsetLatest] or [OffsetAtTime]; the partitions in order. A topic that
// does not exist is an error wrapping kerr.UnknownTopicOrPartition. In
// BPL, (kafka-list-offsets target "t" "earliest") returns
// (("partition" => 0 "offset" => 0) ...).
func (lib *Library) ListOffsets(ctx context.Context, target any, topic string, spec OffsetSpec) ([]PartitionOffset, error) {
	const fn = "kafka-list-offsets"
	if err := checkOffsetTopic(fn, topic); err != nil {
		return nil, err
	}
	if spec.kind == offsetExact || spec.kind == offsetGroup {
		return nil, NewError(fn, Errorf(ErrInvalidArgument, `offset: want "earliest", "latest" or ("timestamp" => ms), got %s`, spec))
	}
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) ([]PartitionOffset, error) {
		listed, err := listAt(ctx, adm, topic, spec)
		if err != nil {
			return nil, h.requestError(ctx, err)
		}
		return partitionOffsets(listed[topic]), nil
	})
}

// checkOffsetTopic checks an offset function's topic argument.
func checkOffsetTopic(fn, topic string) error {
	if topic == "" {
		return NewError(fn, Errorf(ErrInvalidArgument, "topic: want a topic name, got \"\""))
	}
	return nil
}

// listAt lists topic's partitions at spec (earliest, latest or a time).
// A topic that does not exist is an error.
func listAt(ctx context.Context, adm *kadm.Client, topic string, spec OffsetSpec) (kadm.ListedOffsets, error) {
	var listed kadm.ListedOffsets
	var err error
	switch spec.kind {
	case offsetLatest:
		listed, err = adm.ListEndOffsets(ctx, topic)
	case offsetTime:
		listed, err = adm.ListOffsetsAfterMilli(ctx, spec.n, topic)
	default:
		listed, err = adm.ListStartOffsets(ctx, topic)
	}
	if err != nil {
		return nil, err
	}
	if lo, ok := listed.Lookup(topic, -1); ok && lo.Err != nil || len(listed[topic]) == 0 {
		return nil, Wrapf(ErrKafka, kerr.UnknownTopicOrPartition, "topic %q", topic)
	}
	return listed, nil
}

// partitionOffsets is listed's partitions, in order.
func partitionOffsets(listed map[int32]kadm.ListedOffset) []PartitionOffset {
	out := make([]PartitionOffset, 0, len(listed))
	for _, p := range slices.Sorted(maps.Keys(listed)) {
		lo := listed[p]
		po := PartitionOffset{Partition: p, Offset: lo.Offset, Timestamp: lo.Timestamp, Err: lo.Err}
		if lo.Err != nil {
			po.Offset, po.Timestamp = -1, -1
		}
		out = append(out, po)
	}
	return out
}

// DeleteRecords deletes the records of topic before the given offset of
// each partition named in before (-1: its end, every record), as
// kafka-delete-records does: the partition's start moves up to it, and
// consumers can no longer read what was before. The result has one
// element per partition asked, in order, with its new start offset or
// why it failed (an offset past the partition's end fails with
// kerr.OffsetOutOfRange). In BPL, (kafka-delete-records target "t"
// ("0" => 100 "1" => -1)).
//
// Hazard: deleted records are gone for every reader, for good.
func (lib *Library) DeleteRecords(ctx context.Context, target any, topic string, before map[int32]int64) ([]PartitionOffset, error) {
	const fn = "kafka-delete-records"
	if err := checkOffsetTopic(fn, topic); err != nil {
		return nil, err
	}
	if len(before) == 0 {
		return nil, NewError(fn, Errorf(ErrInvalidArgument, "offsets: want at least one partition and offset"))
	}
	offsets := kadm.Offsets{}
	for p, o := range before {
		if p < 0 || o < -1 {
			return nil, NewError(fn, Errorf(ErrInvalidArgument, "offsets: partition %d offset %d: want a partition of 0 or more and an offset of -1 (the end) or more", p, o))
		}
		offsets.Add(kadm.Offset{Topic: topic, Partition: p, At: o})
	}
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) ([]PartitionOffset, error) {
		if _, err := listAt(ctx, adm, topic, OffsetEarliest()); err != nil {
			return nil, h.requestError(ctx, err)
		}
		deleted, err := adm.DeleteRecords(ctx, offsets)
		if err != nil {
			return nil, h.requestError(ctx, err)
		}
		out := make([]PartitionOffset, 0, len(before))
		for _, p := range slices.Sorted(maps.Keys(before)) {
			po := PartitionOffset{Partition: p, Offset: -1, Timestamp: -1}
			switch r, ok := deleted.Lookup(topic, p); {
			case !ok:
				po.Err = unanswered("partition", fmt.Sprintf("%s %d", topic, p))
			case r.Err != nil:
				po.Err = Wrapf(ErrKafka, r.Err, "partition %d", p)
			default:
				po.Offset = r.LowWatermark
			}
			out = append(out, po)
		}
		return out, nil
	})
}

// ResetGroupOffsets sets what group has committed on every partition of
// topic to spec, as kafka-consumer-groups --reset-offsets --execute and
// rpk group seek do: [OffsetEarliest], [OffsetLatest], [OffsetAt],
// [OffsetAtTime] or [OffsetsOf] another group. The group's consumers
// start there when they next join. The result has one element per
// partition, in order, with the offset committed or why not.
//
// A share group (see [ShareConsumer]) is reset as kafka-share-groups
// --reset-offsets does: each partition's share-partition start offset
// moves to spec, and the group delivers the records from there when a
// member next joins, each as new (delivery count 1: what the group had
// accepted, released or rejected there is forgotten). [OffsetsOf] is
// then what a consumer group committed, as for any group.
//
// The group must have no active members: a group with members is refused
// with an error wrapping kerr.NonEmptyGroup (its members would overwrite
// the reset with their next commit, or a share group's go on from where
// they were). A group that does not exist yet is made, a consumer group,
// as Kafka's tools do. In BPL, (kafka-reset-offsets target "g" "t"
// "earliest").
func (lib *Library) ResetGroupOffsets(ctx context.Context, target any, group, topic string, spec OffsetSpec) ([]PartitionOffset, error) {
	const fn = "kafka-reset-offsets"
	if group == "" {
		return nil, NewError(fn, Errorf(ErrInvalidArgument, "group: want a group name, got \"\""))
	}
	if err := checkOffsetTopic(fn, topic); err != nil {
		return nil, err
	}
	if spec.kind == offsetGroup && spec.group == "" {
		return nil, NewError(fn, Errorf(ErrInvalidArgument, `offset: want ("group" => name) with a group name`))
	}
	if spec.kind == offsetExact && spec.n < 0 {
		return nil, NewError(fn, Errorf(ErrInvalidArgument, "offset: want an offset of 0 or more, got %d", spec.n))
	}
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) ([]PartitionOffset, error) {
		typ, err := checkInactive(ctx, h, adm, group)
		if err != nil {
			return nil, err
		}
		if spec.kind == offsetGroup {
			// Kafka answers an offset fetch of a group that does
			// not exist with no offsets and no error: ask first.
			src, err := groupState(ctx, h, adm, spec.group)
			if err != nil {
				return nil, err
			}
			if src.State == "Dead" {
				return nil, Wrapf(ErrKafka, kerr.GroupIDNotFound, "offset: group %q", spec.group)
			}
		}
		to, err := resetTargets(ctx, adm, topic, spec)
		if err != nil {
			return nil, h.requestError(ctx, err)
		}
		offsets := kadm.Offsets{}
		for _, po := range to {
			if po.Err == nil {
				offsets.Add(kadm.Offset{Topic: topic, Partition: po.Partition, At: po.Offset, LeaderEpoch: -1})
			}
		}
		if len(offsets) == 0 {
			return to, nil
		}
		// result is a partition's error, and whether the brokers
		// answered for it.
		var result func(p int32) (error, bool)
		if typ == "share" {
			altered, err := adm.AlterShareGroupOffsets(ctx, group, offsets)
			if err != nil {
				if isKafkaErr(err) {
					return nil, Wrapf(ErrKafka, err, "share group %q", group)
				}
				return nil, h.requestError(ctx, err)
			}
			result = func(p int32) (error, bool) { return altered.Lookup(topic, p) }
		} else {
			committed, err := adm.CommitOffsets(ctx, group, offsets)
			if err != nil {
				return nil, h.requestError(ctx, err)
			}
			result = func(p int32) (error, bool) {
				r, ok := committed.Lookup(topic, p)
				return r.Err, ok
			}
		}
		for i, po := range to {
			if po.Err != nil {
				continue
			}
			switch err, ok := result(po.Partition); {
			case !ok && typ == "share":
				to[i].Offset, to[i].Err = -1, unanswered("partition", fmt.Sprintf("%s %d", topic, po.Partition))
			case err != nil:
				to[i].Offset, to[i].Err = -1, Wrapf(ErrKafka, err, "partition %d", po.Partition)
			}
		}
		return to, nil
	})
}

// checkInactive fails when group has active members, of any group
// protocol, and otherwise returns its type: "share" for a share group,
// "consumer" for one of KIP-848's protocol, else "classic" (a group that
// does not exist too).
func checkInactive(ctx context.Context, h *handle, adm *kadm.Client, group string) (string, error) {
	info, err := groupState(ctx, h, adm, group)
	if err != nil {
		return "", err
	}
	if len(info.Members) > 0 || info.State != "Empty" && info.State != "Dead" {
		return "", Wrapf(ErrKafka, kerr.NonEmptyGroup, "group %q has %d active members (state %s): stop them first, or they overwrite the reset", group, len(info.Members), info.State)
	}
	return info.Type, nil
}

// groupState describes group, of any group protocol, as far as its type,
// its state and its number of members (Members holds that many zero
// members). A group that no protocol knows is a classic one in the state
// "Dead": Kafka describes a group that does not exist so, or answers
// GROUP_ID_NOT_FOUND.
func groupState(ctx context.Context, h *handle, adm *kadm.Client, group string) (*GroupInfo, error) {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return nil, h.requestError(ctx, err)
	}
	info := &GroupInfo{Group: group, State: "Dead", Type: "classic"}
	if d, ok := described[group]; ok && d.Err == nil {
		info.State = d.State
		info.Members = make([]GroupMember, len(d.Members))
	}
	if len(info.Members) == 0 {
		if _, _, err := describeOtherProtocols(ctx, h, adm, info); err != nil {
			return nil, h.requestError(ctx, err)
		}
	}
	return info, nil
}

// resetTargets is the offset to commit on each of topic's partitions for
// spec; a partition another group committed nothing to is left out.
func resetTargets(ctx context.Context, adm *kadm.Client, topic string, spec OffsetSpec) ([]PartitionOffset, error) {
	starts, err := listAt(ctx, adm, topic, OffsetEarliest())
	if err != nil {
		return nil, err
	}
	switch spec.kind {
	case offsetEarliest:
		return partitionOffsets(starts[topic]), nil
	case offsetLatest, offsetTime:
		listed, err := listAt(ctx, adm, topic, spec)
		if err != nil {
			return nil, err
		}
		return partitionOffsets(listed[topic]), nil
	case offsetGroup:
		fetched, err := adm.FetchOffsetsForTopics(ctx, spec.group, topic)
		if err != nil {
			if isKafkaErr(err) {
				return nil, Wrapf(ErrKafka, err, "group %q", spec.group)
			}
			return nil, err
		}
		var out []PartitionOffset
		for _, po := range partitionOffsets(starts[topic]) {
			if r, ok := fetched.Lookup(topic, po.Partition); ok && r.Err == nil && r.At >= 0 {
				out = append(out, PartitionOffset{Partition: po.Partition, Offset: r.At, Timestamp: -1})
			}
		}
		return out, nil
	}
	ends, err := listAt(ctx, adm, topic, OffsetLatest())
	if err != nil {
		return nil, err
	}
	out := partitionOffsets(starts[topic])
	for i, po := range out {
		if end, ok := ends.Lookup(topic, po.Partition); ok && po.Err == nil && end.Err == nil {
			out[i].Offset = min(max(spec.n, po.Offset), end.Offset)
		}
	}
	return out, nil
}

// DeleteGroup deletes group and what it committed, as
// kafka-consumer-groups --delete does; a share group (see
// [ShareConsumer]) with its start offsets and the state of its records,
// as kafka-share-groups --delete does. A group with active members is
// refused by the brokers (an error wrapping kerr.NonEmptyGroup), and one
// that does not exist is an error wrapping kerr.GroupIDNotFound. In BPL,
// (kafka-delete-group target "g") returns true.
func (lib *Library) DeleteGroup(ctx context.Context, target any, group string) error {
	const fn = "kafka-delete-group"
	if group == "" {
		return NewError(fn, Errorf(ErrInvalidArgument, "group: want a group name, got \"\""))
	}
	_, err := withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) (bool, error) {
		resp, err := adm.DeleteGroup(ctx, group)
		switch {
		case err != nil && isKafkaErr(err):
			return false, Wrapf(ErrKafka, err, "group %q", group)
		case err != nil:
			return false, h.requestError(ctx, err)
		case resp.Err != nil:
			return false, Wrapf(ErrKafka, resp.Err, "group %q", group)
		}
		return true, nil
	})
	return err
}
