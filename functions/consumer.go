package functions

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
)

const pollUsage = "(kafka-poll id timeout-ms) or (kafka-poll id topics timeout-ms)"

func (lib table) bplPoll(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-poll", l, 2, 3, pollUsage, []string{})
	if err != nil {
		return nil, err
	}
	ms, err := a.int(a.pos[len(a.pos)-1], "timeout-ms", 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(ms) * time.Millisecond
	var p *kafkabpl.Polled
	if len(a.pos) == 3 {
		var topics []string
		if topics, err = a.topics(a.pos[1], "topics"); err != nil {
			return nil, err
		}
		p, err = lib.PollTopics(ctx, id, topics, timeout)
	} else {
		p, err = lib.Poll(ctx, id, timeout)
	}
	if err != nil {
		return nil, err
	}
	return p.List(), nil
}

func (lib table) bplSubscribe(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-subscribe", l, 2, 2, "(kafka-subscribe id topics)", []string{})
	if err != nil {
		return nil, err
	}
	topics, err := a.topics(a.pos[1], "topics")
	if err != nil {
		return nil, err
	}
	sub, err := lib.Subscribe(ctx, id, topics)
	if err != nil {
		return nil, err
	}
	return stringList(sub), nil
}

func (lib table) bplUnsubscribe(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-unsubscribe", l, 1, 2, "(kafka-unsubscribe id [topics])", []string{})
	if err != nil {
		return nil, err
	}
	topics, err := a.optionalTopics(1)
	if err != nil {
		return nil, err
	}
	sub, err := lib.Unsubscribe(ctx, id, topics)
	if err != nil {
		return nil, err
	}
	return stringList(sub), nil
}

func (lib table) bplCommit(ctx context.Context, l *value.List) (any, error) {
	_, id, err := readIDArgs("kafka-commit", l, 1, 1, "(kafka-commit id)", []string{})
	if err != nil {
		return nil, err
	}
	if err := lib.Commit(ctx, id); err != nil {
		return nil, err
	}
	return true, nil
}

const seekUsage = `(kafka-seek id topic "beginning"|"end"|offset|("timestamp" => ms) "partition" => p)`

func (lib table) bplSeek(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-seek", l, 3, 3, seekUsage, []string{"partition"})
	if err != nil {
		return nil, err
	}
	topic, err := a.str(1, "topic")
	if err != nil {
		return nil, err
	}
	var pos kafkabpl.Position
	switch v := a.pos[2].(type) {
	case string:
		switch strings.ToLower(v) {
		case "beginning", "earliest":
			pos = kafkabpl.SeekBeginning()
		case "end", "latest":
			pos = kafkabpl.SeekEnd()
		default:
			return nil, a.errorf(`position: want "beginning", "end", an offset or ("timestamp" => ms), got %s`, value.Describe(v))
		}
	case *value.List:
		ts, ok := v.Get("timestamp")
		if !ok || v.Len() != 1 {
			return nil, a.errorf(`position: want "beginning", "end", an offset or ("timestamp" => ms), got %s`, value.Describe(v))
		}
		ms, err := a.int(ts, `position "timestamp"`, 0, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		pos = kafkabpl.SeekTimestamp(time.UnixMilli(ms))
	default:
		off, err := a.int(v, "position", 0, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		pos = kafkabpl.SeekOffset(off)
	}
	var partitions []int32
	if p, ok := a.named.Get("partition"); ok {
		n, err := a.int(p, `"partition"`, 0, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		partitions = []int32{int32(n)}
	}
	if err := lib.Seek(ctx, id, topic, pos, partitions...); err != nil {
		return nil, err
	}
	return true, nil
}
