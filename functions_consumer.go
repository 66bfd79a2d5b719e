package kafkabpl

import (
	"context"
	"math"
	"strings"
	"time"
)

const pollUsage = "(kafka-poll id timeout-ms) or (kafka-poll id topics timeout-ms)"

func (lib *Library) bplPoll(ctx context.Context, l *List) (any, error) {
	a, id, err := readIDArgs("kafka-poll", l, 2, 3, pollUsage, []string{})
	if err != nil {
		return nil, err
	}
	ms, err := a.int(a.pos[len(a.pos)-1], "timeout-ms", 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(ms) * time.Millisecond
	var p *Polled
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

// List returns the poll as BPL shows it: ("topic" => (messages) ...). With
// the default poll-format "values" a message is its value, named by its key
// when the key is not null; with "records" it is ("topic" => t "partition"
// => p "offset" => o "timestamp" => ms "key" => k "value" => v "headers" =>
// ("h" => "v" ...)). A record that could not be deserialized is always in
// the records form, with its raw key and value and an "error" element
// saying why.
func (p *Polled) List() *List {
	out := &List{}
	for _, t := range p.Topics {
		msgs := &List{values: make([]any, 0, len(t.Records))}
		for i := range t.Records {
			r := &t.Records[i]
			switch {
			case r.cfg.pollRecords || r.Err() != nil:
				msgs.Append(r.List())
			case r.r.Key == nil:
				msgs.Append(r.Value())
			default:
				msgs.AppendNamed(keyName(r.Key()), r.Value())
			}
		}
		out.AppendNamed(t.Topic, msgs)
	}
	return out
}

// keyName is the text a key names its message with.
func keyName(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case []byte:
		return string(k)
	}
	return Format(k)
}

// List returns the record in its BPL records form (see [Polled.List]).
func (r *Record) List() *List {
	headers := &List{}
	for _, h := range r.r.Headers {
		var v any
		if h.Value != nil {
			v = string(h.Value)
		}
		headers.AppendNamed(h.Key, v)
	}
	l := &List{}
	l.AppendNamed("topic", r.r.Topic)
	l.AppendNamed("partition", int64(r.r.Partition))
	l.AppendNamed("offset", r.r.Offset)
	l.AppendNamed("timestamp", r.r.Timestamp.UnixMilli())
	l.AppendNamed("key", r.Key())
	l.AppendNamed("value", r.Value())
	l.AppendNamed("headers", headers)
	if err := r.Err(); err != nil {
		l.AppendNamed("error", err.Error())
	}
	return l
}

func (lib *Library) bplSubscribe(ctx context.Context, l *List) (any, error) {
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

func (lib *Library) bplUnsubscribe(ctx context.Context, l *List) (any, error) {
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

func (lib *Library) bplCommit(ctx context.Context, l *List) (any, error) {
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

func (lib *Library) bplSeek(ctx context.Context, l *List) (any, error) {
	a, id, err := readIDArgs("kafka-seek", l, 3, 3, seekUsage, []string{"partition"})
	if err != nil {
		return nil, err
	}
	topic, err := a.str(1, "topic")
	if err != nil {
		return nil, err
	}
	var pos Position
	switch v := a.pos[2].(type) {
	case string:
		switch strings.ToLower(v) {
		case "beginning", "earliest":
			pos = SeekBeginning()
		case "end", "latest":
			pos = SeekEnd()
		default:
			return nil, a.errorf(`position %s: want "beginning", "end", an offset or ("timestamp" => ms)`, describe(v))
		}
	case *List:
		ts, ok := v.Get("timestamp")
		if !ok || v.Len() != 1 {
			return nil, a.errorf(`position %s: want "beginning", "end", an offset or ("timestamp" => ms)`, describe(v))
		}
		ms, err := a.int(ts, `position "timestamp"`, 0, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		pos = SeekTimestamp(time.UnixMilli(ms))
	default:
		off, err := a.int(v, "position", 0, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		pos = SeekOffset(off)
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
