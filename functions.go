package kafkabpl

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Functions returns the BPL function table, to register in a BPL runtime:
// the seed's names (kafka-create, kafka-send, kafka-poll, kafka-destroy,
// ...) and those of brain4it's Java Kafka library (kafka-producer,
// kafka-consumer, kafka-delete-app), so its scripts run unchanged. Each
// function is a thin adapter over the typed methods of l: it checks and
// converts the arguments, calls the method and converts the result. Errors
// start with the function's name. The map is new on every call.
func (lib *Library) Functions() map[string]Func {
	m := map[string]Func{
		"kafka-create":      lib.bplCreate,
		"kafka-producer":    lib.bplKindCreate("kafka-producer", Producer),
		"kafka-consumer":    lib.bplKindCreate("kafka-consumer", Consumer),
		"kafka-destroy":     lib.bplDestroy("kafka-destroy"),
		"kafka-delete-app":  lib.bplDestroy("kafka-delete-app"),
		"kafka-send":        lib.bplSend,
		"kafka-poll":        lib.bplPoll,
		"kafka-subscribe":   lib.bplSubscribe,
		"kafka-unsubscribe": lib.bplUnsubscribe,
		"kafka-commit":      lib.bplCommit,
		"kafka-seek":        lib.bplSeek,
	}
	lib.addAdminFunctions(m)
	return m
}

// args holds a BPL call's arguments, split into positional and named ones.
type args struct {
	fn    string
	pos   []any
	named *List
}

// readArgs checks a call's arity and named arguments. usage is the call's
// shape, shown when the arity is wrong; names are the named arguments the
// function takes (nil: any, checked by the callee).
func readArgs(fn string, l *List, min, max int, usage string, names []string) (*args, error) {
	a := &args{fn: fn, named: &List{}}
	for name, v := range l.All() {
		if name == "" {
			a.pos = append(a.pos, v)
			continue
		}
		if names != nil && !slices.Contains(names, name) {
			return nil, &Error{fn, errorf(ErrInvalidArgument, "unknown named argument %q%s; usage: %s", name, suggest(name, names), usage)}
		}
		a.named.AppendNamed(name, v)
	}
	if len(a.pos) < min || len(a.pos) > max {
		want := fmt.Sprintf("%d", min)
		switch {
		case max == math.MaxInt:
			want = fmt.Sprintf("at least %d", min)
		case max > min:
			want = fmt.Sprintf("%d to %d", min, max)
		}
		return nil, &Error{fn, errorf(ErrInvalidArgument, "want %s arguments, got %d; usage: %s", want, len(a.pos), usage)}
	}
	return a, nil
}

// suggest returns ` (did you mean "x"?)` for the closest of names.
func suggest(name string, names []string) string {
	best, dist := "", math.MaxInt
	for _, n := range names {
		if d := editDistance(name, n); d < dist {
			best, dist = n, d
		}
	}
	if best == "" || dist > max(2, len(name)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func (a *args) errorf(format string, v ...any) error {
	return &Error{a.fn, errorf(ErrInvalidArgument, format, v...)}
}

// str reads positional argument i as a string; what names it in errors.
func (a *args) str(i int, what string) (string, error) {
	s, ok := a.pos[i].(string)
	if !ok {
		return "", a.errorf("%s: want a string, got %s", what, describe(a.pos[i]))
	}
	return s, nil
}

// topics reads a topic name or a list of them.
func (a *args) topics(v any, what string) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case *List:
		ts := make([]string, 0, v.Len())
		for _, e := range v.Values() {
			s, ok := e.(string)
			if !ok {
				return nil, a.errorf("%s: want topic names, got %s in %s", what, describe(e), describe(v))
			}
			ts = append(ts, s)
		}
		return ts, nil
	}
	return nil, a.errorf("%s: want a topic name or a list of them, got %s", what, describe(v))
}

// int reads an integer (an integral float will do) in [lo, hi].
func (a *args) int(v any, what string, lo, hi int64) (int64, error) {
	n, ok := v.(int64)
	if f, isFloat := v.(float64); isFloat && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
		n, ok = int64(f), true
	}
	if !ok || n < lo || n > hi {
		return 0, a.errorf("%s: want an integer from %d to %d, got %s", what, lo, hi, describe(v))
	}
	return n, nil
}

// readIDArgs is readArgs for functions whose first argument is a handle
// id: it also returns the id.
func readIDArgs(fn string, l *List, min, max int, usage string, names []string) (*args, string, error) {
	a, err := readArgs(fn, l, min, max, usage, names)
	if err != nil {
		return nil, "", err
	}
	id, err := a.str(0, "id")
	return a, id, err
}

func (lib *Library) bplCreate(ctx context.Context, l *List) (any, error) {
	a, err := readArgs("kafka-create", l, 2, 2, `(kafka-create "producer"|"consumer"|"admin" config)`, []string{})
	if err != nil {
		return nil, err
	}
	kind, err := a.str(0, "kind")
	if err != nil {
		return nil, err
	}
	return lib.create(ctx, a.fn, Kind(strings.ToLower(kind)), a.pos[1], nil)
}

// bplKindCreate is brain4it's (kafka-producer servers "key" => value ...):
// the named arguments are config keys.
func (lib *Library) bplKindCreate(fn string, kind Kind) Func {
	return func(ctx context.Context, l *List) (any, error) {
		a, err := readArgs(fn, l, 1, 1, "("+fn+` servers "config-key" => value ...)`, nil)
		if err != nil {
			return nil, err
		}
		return lib.create(ctx, fn, kind, a.pos[0], a.named)
	}
}

func (lib *Library) bplDestroy(fn string) Func {
	return func(ctx context.Context, l *List) (any, error) {
		_, id, err := readIDArgs(fn, l, 1, 1, "("+fn+" id)", []string{})
		if err != nil {
			return nil, err
		}
		ok, err := lib.Destroy(ctx, id)
		if err != nil {
			err.(*Error).Func = fn
		}
		return ok, err
	}
}

const sendUsage = `(kafka-send id topics messages "key" => k "partition" => n "headers" => (...) "timestamp" => ms "records" => true)`

func (lib *Library) bplSend(ctx context.Context, l *List) (any, error) {
	a, id, err := readIDArgs("kafka-send", l, 3, 3, sendUsage, []string{"key", "partition", "headers", "timestamp", "records"})
	if err != nil {
		return nil, err
	}
	topics, err := a.topics(a.pos[1], "topics")
	if err != nil {
		return nil, err
	}
	msgs, err := a.messages(a.pos[2])
	if err != nil {
		return nil, err
	}
	n, err := lib.Send(ctx, id, topics, msgs)
	return int64(n), err
}

// messages reads kafka-send's messages and its call-wide named arguments.
func (a *args) messages(v any) ([]Message, error) {
	var common Message
	if err := a.recordFields(&common, a.named, 0, []string{"key", "partition", "headers", "timestamp"}); err != nil {
		return nil, err
	}
	asRecords := false
	if r, ok := a.named.Get("records"); ok {
		b, isBool := r.(bool)
		if !isBool {
			return nil, a.errorf(`"records": want true or false, got %s`, describe(r))
		}
		asRecords = b
	}
	list, isList := v.(*List)
	if !isList {
		list = NewList(v)
	}
	msgs := make([]Message, list.Len())
	for i := range list.Len() {
		m, name, val := common, list.Name(i), list.At(i)
		if asRecords {
			rec, ok := val.(*List)
			if !ok {
				return nil, a.errorf("message %d: with \"records\" => true each message is a record list (\"key\" \"value\" \"partition\" \"headers\" \"timestamp\"), got %s", i+1, describe(val))
			}
			if err := a.recordFields(&m, rec, i+1, []string{"key", "value", "partition", "headers", "timestamp"}); err != nil {
				return nil, err
			}
		} else {
			m.Value = val
			if name != "" {
				m.Key = name
			}
		}
		msgs[i] = m
	}
	return msgs, nil
}

// recordFields stores the named fields of src (a record list, message pos,
// or the call's named arguments, pos 0) into m.
func (a *args) recordFields(m *Message, src *List, pos int, allowed []string) error {
	where := "" // prefixes the field in errors
	if pos > 0 {
		where = fmt.Sprintf("message %d ", pos)
	}
	for name, v := range src.All() {
		if !slices.Contains(allowed, name) {
			if name == "records" && where == "" {
				continue
			}
			return a.errorf("%sfield %q: want one of %s%s", where, name, strings.Join(allowed, ", "), suggest(name, allowed))
		}
		switch name {
		case "key":
			m.Key = v
		case "value":
			m.Value = v
		case "partition":
			p, err := a.int(v, where+`"partition"`, 0, math.MaxInt32)
			if err != nil {
				return err
			}
			m.Partition = new(int32(p))
		case "timestamp":
			ms, err := a.int(v, where+`"timestamp"`, 0, math.MaxInt64)
			if err != nil {
				return err
			}
			m.Timestamp = time.UnixMilli(ms)
		case "headers":
			hl, ok := v.(*List)
			if !ok || hl.Len() > 0 && !hl.Named() {
				return a.errorf(`%s"headers": want a named list ("name" => value ...), got %s`, where, describe(v))
			}
			m.Headers = make([]Header, 0, hl.Len())
			for hn, hv := range hl.All() {
				if hn == "" {
					return a.errorf(`%s"headers": element %s has no name`, where, describe(hv))
				}
				b, err := serdeString.encodeAt(hv, pos, "header "+hn)
				if err != nil {
					return &Error{a.fn, err}
				}
				m.Headers = append(m.Headers, Header{hn, b})
			}
		}
	}
	return nil
}

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
			case p.records || r.Err() != nil:
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

func stringList(ss []string) *List {
	l := &List{values: make([]any, len(ss))}
	for i, s := range ss {
		l.values[i] = s
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
	var topics []string
	if len(a.pos) == 2 {
		if topics, err = a.topics(a.pos[1], "topics"); err != nil {
			return nil, err
		}
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
