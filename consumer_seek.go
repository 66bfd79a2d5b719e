package kafkabpl

import (
	"context"
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
func (lib *Library) Seek(ctx context.Context, id, topic string, pos Position, partitions ...int32) error {
	_, err := withConsumer(lib, "kafka-seek", id, func(cs *consumerState) (struct{}, error) {
		return struct{}{}, cs.seek(ctx, topic, pos, partitions)
	})
	return err
}

func (cs *consumerState) seek(ctx context.Context, topic string, pos Position, partitions []int32) error {
	if err := topicname.Check(topic); err != nil {
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
	// A seek of every partition waits only while the consumer owns none
	// of the topic (it just subscribed): stored otherwise, it would move
	// again, at the next rebalance, what it moved now and what other
	// members had read.
	if len(partitions) == 0 && len(cs.assigned[topic]) == 0 {
		cs.seeks.set(topic, -1, o)
	}
	for _, p := range waiting {
		cs.seeks.set(topic, p, o)
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
