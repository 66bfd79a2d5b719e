package kafkabpl

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
)

const pollUsage = "(kafka-poll id timeout-ms) or (kafka-poll id topics timeout-ms)"

func (lib *Library) bplPoll(ctx context.Context, l *value.List) (any, error) {
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
//
// Keys and values read as text are copies, made in one buffer per topic:
// a message kept after the poll holds its own text (and its neighbours'
// in that buffer), never the fetched batch, which can be megabytes.
func (p *Polled) List() *value.List {
	if len(p.Topics) == 1 {
		// The usual poll, one topic: its lists take one allocation.
		one := &struct {
			out, msgs value.List
			value     [1]any
			name      [1]string
		}{}
		fillMessages(&one.msgs, p.Topics[0].Records)
		one.value[0], one.name[0] = &one.msgs, p.Topics[0].Topic
		one.out.Reset(one.value[:], one.name[:])
		return &one.out
	}
	vals, names := make([]any, len(p.Topics)), make([]string, len(p.Topics))
	for i, t := range p.Topics {
		msgs := &value.List{}
		fillMessages(msgs, t.Records)
		vals[i], names[i] = msgs, t.Topic
	}
	return value.ListOf(vals, names)
}

// fillMessages makes msgs, an empty list, one topic's records as
// kafka-poll gives them. Keys and values read by the String deserializer
// (the default) are copied into one buffer, and the values' interfaces
// point into one slice of strings (see boxInPlace), so that a poll of n
// such messages makes four allocations rather than four per message.
// Other deserializers, and the records form, decode each record on its
// own.
func fillMessages(msgs *value.List, recs []Record) {
	vals := make([]any, len(recs))
	var names []string // nil until a record has a key
	size := 0
	for i := range recs {
		r := &recs[i]
		if r.cfg.pollRecords {
			continue // in the records form: Record.List copies its own
		}
		if r.cfg.keyDeser == serde.String {
			size += len(r.r.Key)
		}
		if r.cfg.valDeser == serde.String {
			size += len(r.r.Value)
		}
	}
	arena := newTextArena(size)
	// texts holds the names, then the String values (boxed in place).
	var texts []string
	for i := range recs {
		r := &recs[i]
		if r.cfg.pollRecords || r.Err() != nil {
			vals[i] = r.List()
			continue
		}
		if texts == nil {
			texts = make([]string, 2*len(recs))
		}
		switch {
		case r.r.Value == nil:
		case r.cfg.valDeser == serde.String:
			v := &texts[len(recs)+i]
			*v = arena.text(r.r.Value)
			boxInPlace(&vals[i], v)
		default:
			vals[i] = r.Value()
		}
		if r.r.Key == nil {
			continue
		}
		if names == nil {
			names = texts[:len(recs):len(recs)]
		}
		if r.cfg.keyDeser == serde.String {
			names[i] = arena.text(r.r.Key)
		} else {
			names[i] = keyName(r.Key())
		}
	}
	msgs.Reset(vals, names)
}

// keyName is the text a key names its message with.
func keyName(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case []byte:
		return string(k)
	}
	return value.Format(k)
}

// List returns the record in its BPL records form (see [Polled.List]).
// A stream's BPL transform gets one per input, so it is built in two
// allocations, the text and the rest, not one per element (see
// boxInPlace); headers, rare, take their own.
func (r *Record) List() *value.List {
	one := &struct {
		l, headers value.List
		values     [8]any
		names      [8]string
		ints       [3]int64  // partition, offset, timestamp
		texts      [3]string // topic, key, value
	}{}
	l := &one.l
	vals, names := one.values[:0], one.names[:0]
	// add appends an element named name and returns where its value goes.
	add := func(name string) *any {
		vals, names = append(vals, nil), append(names, name)
		return &vals[len(vals)-1]
	}
	size := 0
	if r.cfg.keyDeser == serde.String {
		size += len(r.r.Key)
	}
	if r.cfg.valDeser == serde.String {
		size += len(r.r.Value)
	}
	arena := newTextArena(size)
	failed := r.Err() != nil
	// text appends name => the text of b, as the String deserializer
	// reads it (and not when the record failed: its raw bytes then).
	text := func(name string, slot int, b []byte, s *serde.Serde) {
		switch {
		case b == nil:
			add(name)
		case s == serde.String && !failed:
			one.texts[slot] = arena.text(b)
			boxInPlace(add(name), &one.texts[slot])
		default:
			*add(name) = r.decoded(s, b)
		}
	}
	integer := func(name string, slot int, v int64) {
		one.ints[slot] = v
		boxInPlace(add(name), &one.ints[slot])
	}
	one.texts[0] = r.r.Topic
	boxInPlace(add("topic"), &one.texts[0])
	integer("partition", 0, int64(r.r.Partition))
	integer("offset", 1, r.r.Offset)
	integer("timestamp", 2, r.r.Timestamp.UnixMilli())
	text("key", 1, r.r.Key, r.cfg.keyDeser)
	text("value", 2, r.r.Value, r.cfg.valDeser)
	for _, h := range r.r.Headers {
		var v any
		if h.Value != nil {
			v = string(h.Value)
		}
		one.headers.AppendNamed(h.Key, v)
	}
	*add("headers") = &one.headers
	l.Reset(vals, names)
	if failed {
		l.AppendNamed("error", r.Err().Error())
	}
	return l
}

func (lib *Library) bplSubscribe(ctx context.Context, l *value.List) (any, error) {
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

func (lib *Library) bplUnsubscribe(ctx context.Context, l *value.List) (any, error) {
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

func (lib *Library) bplCommit(ctx context.Context, l *value.List) (any, error) {
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

func (lib *Library) bplSeek(ctx context.Context, l *value.List) (any, error) {
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
