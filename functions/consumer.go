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
	a, id, err := readIDArgs("kafka-poll", l)
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
	a, id, err := readIDArgs("kafka-subscribe", l)
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
	a, id, err := readIDArgs("kafka-unsubscribe", l)
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
	_, id, err := readIDArgs("kafka-commit", l)
	if err != nil {
		return nil, err
	}
	if err := lib.Commit(ctx, id); err != nil {
		return nil, err
	}
	return true, nil
}

const ackUsage = `(kafka-ack id "accept"|"release"|"reject"|"renew") or (kafka-ack id records type)`

// bplAck is (kafka-ack id type), every record of the latest poll not
// acknowledged yet, or (kafka-ack id records type), records a record in
// the records form (a list with "topic", "partition" and "offset": what
// kafka-poll returns with "poll-format" "records") or a list of them.
func (lib table) bplAck(_ context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-ack", l)
	if err != nil {
		return nil, err
	}
	typ, err := a.str(len(a.pos)-1, "type")
	if err != nil {
		return nil, err
	}
	var ids []kafkabpl.RecordID
	if len(a.pos) == 3 {
		if ids, err = a.recordIDs(a.pos[1]); err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, a.errorf("records: want a record or a list of records, got ()")
		}
	}
	if err := lib.Ack(id, kafkabpl.AckType(strings.ToLower(typ)), ids...); err != nil {
		return nil, err
	}
	return true, nil
}

// recordIDs reads a record in the records form, or a list of them, as
// where each is.
func (a *args) recordIDs(v any) ([]kafkabpl.RecordID, error) {
	l, ok := v.(*value.List)
	if !ok {
		return nil, a.errorf(`records: want a record ("topic" => t "partition" => p "offset" => o ...) or a list of them, got %s`, value.Describe(v))
	}
	if l.Named() {
		id, err := a.recordID(l)
		return []kafkabpl.RecordID{id}, err
	}
	ids := make([]kafkabpl.RecordID, 0, l.Len())
	for _, e := range l.Values() {
		r, ok := e.(*value.List)
		if !ok {
			return nil, a.errorf(`records: want records ("topic" => t "partition" => p "offset" => o ...), got %s in the list`, value.Describe(e))
		}
		id, err := a.recordID(r)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// recordID reads where a record in the records form is.
func (a *args) recordID(r *value.List) (kafkabpl.RecordID, error) {
	topic, _ := r.Get("topic")
	t, ok := topic.(string)
	if !ok {
		return kafkabpl.RecordID{}, a.errorf(`record: want "topic" => name, "partition" and "offset" (poll with "poll-format" "records"), got %s`, value.Describe(r))
	}
	partition, _ := r.Get("partition")
	p, err := a.int(partition, `record "partition"`, 0, math.MaxInt32)
	if err != nil {
		return kafkabpl.RecordID{}, err
	}
	offset, _ := r.Get("offset")
	o, err := a.int(offset, `record "offset"`, 0, math.MaxInt64)
	return kafkabpl.RecordID{Topic: t, Partition: int32(p), Offset: o}, err
}

const seekUsage = `(kafka-seek id topic "beginning"|"end"|offset|("timestamp" => ms) "partition" => p)`

func (lib table) bplSeek(ctx context.Context, l *value.List) (any, error) {
	a, id, err := readIDArgs("kafka-seek", l)
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
