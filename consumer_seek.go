package kafkabpl

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Seeking: positions, and moving partitions now or at their next
// assignment.

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
//
// A seek made while the group assigns a partition to the consumer wins
// over the partition's committed offset and over auto-offset-reset. The
// group assigns in steps, in the background: it tells the consumer which
// partitions are its own, then fetches their committed offsets, then
// starts fetching records from them. A seek before the first step, or
// between the first two, waits and is applied to the fetched offsets; one
// after them moves the partition, and kgo keeps that position over the
// fetched one even before it starts the partition. When the group takes a
// partition away and gives it back while the seek is moving it, the seek
// moves it again; Seek fails with an error saying so when the group keeps
// doing that.
//
// Hazards:
//   - The seek is not committed. When the group later takes a partition
//     away (a member joins or leaves, or this consumer's session ends), the
//     partition's next owner, this consumer included, resumes at the
//     group's committed offset, not at the seek: commit after polling from
//     the new position when it must outlive a rebalance. A seek waiting
//     for an assignment is lost in the same way when the group gives the
//     partition to another member.
//   - A waiting seek to the beginning, the end or a timestamp is resolved
//     when the assignment comes: to the end at that moment, not at the
//     seek. A seek of owned partitions asks the brokers (within
//     request-timeout) at once.
//   - A seek of every partition, made while the consumer owns some of the
//     topic's partitions (or is being assigned them), moves those and no
//     others: partitions the group assigns it afterwards, even during the
//     seek, start at their committed offsets.
func (lib *Library) Seek(ctx context.Context, id, topic string, pos Position, partitions ...int32) error {
	_, err := withConsumer(lib, "kafka-seek", id, func(cs *consumerState) (struct{}, error) {
		return struct{}{}, cs.seek(ctx, topic, pos, partitions)
	})
	return err
}

func (cs *consumerState) seek(ctx context.Context, topic string, pos Position, partitions []int32) error {
	if err := topicname.Check(topic); err != nil {
		return Errorf(ErrInvalidArgument, "topic: %v", err)
	}
	if !pos.time && pos.at < seekBeginning {
		return Errorf(ErrInvalidArgument, "offset %d is negative", pos.at)
	}
	for _, p := range partitions {
		if p < 0 {
			return Errorf(ErrInvalidArgument, "partition %d is negative", p)
		}
	}
	cs.markPending() // done with what the last poll returned, as at a poll
	cs.subMu.Lock()
	defer cs.subMu.Unlock()

	// A named partition the consumer does not own waits for an
	// assignment; one the topic does not have would wait for ever.
	cs.mu.Lock()
	var unowned []int32
	for _, p := range partitions {
		if !cs.assigned.has(topic, p) {
			unowned = append(unowned, p)
		}
	}
	cs.mu.Unlock()
	if len(unowned) > 0 {
		if err := cs.checkPartitions(ctx, topic, unowned); err != nil {
			return err
		}
	}

	for range seekAttempts {
		live := cs.placeSeek(topic, pos.offset(), partitions)
		cs.at("seek placed")
		if len(live) == 0 {
			return nil
		}
		// Partitions whose offsets were fetched move at once, to offsets
		// the brokers resolve.
		offsets, err := cs.resolve(ctx, topic, pos, slices.Sorted(maps.Keys(live)))
		if err != nil {
			return err
		}
		cs.h.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{topic: offsets})
		// The group may have taken a partition meanwhile, and given it
		// back, starting from its committed offset: such partitions are
		// sought again, as named ones (one the consumer does not own now
		// waits for its next assignment). The others, still in the same
		// assignment, are positioned.
		cs.mu.Lock()
		same := func(t string, p int32) bool {
			n, ok := live[p]
			return t == topic && ok && cs.assigned[t][p] == n
		}
		cs.positioned(same)
		partitions = nil
		for p := range live {
			if !same(topic, p) {
				partitions = append(partitions, p)
			}
		}
		cs.mu.Unlock()
		if len(partitions) == 0 {
			return nil
		}
		slices.Sort(partitions)
	}
	return Errorf(ErrKafka, "topic %q partitions %v: the group assigned them again during each of %d tries to seek them; seek again", topic, partitions, seekAttempts)
}

// seekAttempts is how many times a seek tries again when the group
// assigns again partitions it is moving.
const seekAttempts = 3

// placeSeek stores the seek of topic's partitions (every partition when
// none are given) to o for those it must wait for, and returns those it
// must move now, each with the number of its assignment. It decides and
// stores under cs.mu, under which onAssigned and adjustOffsets record what
// the group gave, so no step of an assignment comes between the decision
// and what it stores (see [Library.Seek]):
//   - a partition whose committed offset kgo is fetching (onAssigned ran,
//     adjustOffsets did not) waits: adjustOffsets gives it the seek;
//   - a named partition the consumer does not own waits for an
//     assignment;
//   - a seek of every partition waits while the consumer has started none
//     of the topic's partitions (it just subscribed);
//   - the other partitions move now.
func (cs *consumerState) placeSeek(topic string, o kgo.Offset, partitions []int32) map[int32]uint64 {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	live := map[int32]uint64{}
	place := func(p int32, n uint64, owned bool) {
		if owned && !cs.starting.has(topic, p) {
			live[p] = n
		} else {
			cs.seeks.set(topic, p, o)
		}
	}
	if len(partitions) > 0 {
		for _, p := range partitions {
			n, owned := cs.assigned[topic][p]
			place(p, n, owned)
		}
		return live
	}
	for p, n := range cs.assigned[topic] {
		place(p, n, true)
	}
	// Stored otherwise, a seek of every partition would move again, at
	// the next rebalance, what it moved now and what other members had
	// read.
	if len(live) == 0 {
		cs.seeks.set(topic, -1, o)
	}
	return live
}

// offset is pos as kgo takes it for a partition not started yet.
func (pos Position) offset() kgo.Offset {
	switch {
	case pos.time:
		return kgo.NewOffset().AfterMilli(pos.at)
	case pos.at == seekBeginning:
		return kgo.NewOffset().AtStart()
	case pos.at == seekEnd:
		return kgo.NewOffset().AtEnd()
	default:
		return kgo.NewOffset().At(pos.at)
	}
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
			return Errorf(ErrInvalidArgument, "topic %q has %d partitions (0 to %d); partition %d does not exist", topic, n, n-1, p)
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
			return nil, Wrapf(ErrKafka, o.Err, "topic %q partition %d: cannot list offsets", topic, p)
		}
		out[p] = kgo.EpochOffset{Epoch: -1, Offset: o.Offset}
	}
	return out, nil
}
