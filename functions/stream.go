package functions

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// The BPL side of streams: kafka-stream, kafka-stream-status, and the
// values a transform returns, kafka-output and kafka-outputs.

const streamUsage = `(kafka-stream config "from" => topics "to" => topic "transform" => fn ["store" => name] | "store" => name "window" => (...) "aggregate" => fn ["merge" => fn "result" => fn] ["standbys" => n] | "store" => name "interval-join" => (...) "transform" => (function (left right) ...) "guarantee" => "exactly-once"|"at-least-once" "on-error" => "stop"|"skip"|"dead-letter" "dead-letter-topic" => topic "tables" => (name => topic|("topic" => topic "partitioned" => true "hold" => ms) ...) "join" => name "join-kind" => "inner"|"left" "config-key" => value ...)`

// streamNames are kafka-stream's own named arguments; any other is a config
// key.
var streamNames = append([]string{"from", "to", "transform", "guarantee", "on-error", "dead-letter-topic", "tables", "join", "join-kind", "on-commit"}, stateNames...)

func (lib table) bplStream(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-stream", l)
	if err != nil {
		return nil, err
	}
	spec := stream.Spec{}
	config := &value.List{}
	var transform value.Callable
	stateful := map[string]any{}
	for name, v := range a.named.All() {
		if !slices.Contains(streamNames, name) {
			config.AppendNamed(name, v)
			continue
		}
		if slices.Contains(stateNames, name) {
			stateful[name] = v
			continue
		}
		switch name {
		case "from":
			if spec.From, err = a.topics(v, `"from"`); err != nil {
				return nil, err
			}
		case "to":
			if spec.To, err = a.strValue(v, `"to"`); err != nil {
				return nil, err
			}
		case "dead-letter-topic":
			if spec.DeadLetterTopic, err = a.strValue(v, `"dead-letter-topic"`); err != nil {
				return nil, err
			}
		case "transform":
			fn, ok := v.(value.Callable)
			if !ok {
				return nil, a.errorf(`"transform": want a function, such as (function (in) ...), got %s`, value.Describe(v))
			}
			transform = fn
		case "guarantee":
			g, err := a.oneOf(v, `"guarantee"`, "exactly-once", "at-least-once")
			if err != nil {
				return nil, err
			}
			spec.Guarantee = stream.Guarantee(g)
		case "on-error":
			o, err := a.oneOf(v, `"on-error"`, "stop", "skip", "dead-letter")
			if err != nil {
				return nil, err
			}
			spec.OnError = stream.OnError(o)
		case "on-commit":
			fn, ok := v.(value.Callable)
			if !ok {
				return nil, a.errorf(`"on-commit": want a function, such as (function () (module-notify "@chart")), got %s`, value.Describe(v))
			}
			spec.OnCommit = func(ctx context.Context) error {
				_, err := fn.Call(ctx, &value.List{})
				return err
			}
		case "tables":
			if spec.Tables, err = a.tables(v); err != nil {
				return nil, err
			}
		case "join":
			name, err := a.strValue(v, `"join"`)
			if err != nil {
				return nil, err
			}
			if spec.Join == nil {
				spec.Join = &stream.Join{}
			}
			spec.Join.Table = name
		case "join-kind":
			k, err := a.oneOf(v, `"join-kind"`, "inner", "left")
			if err != nil {
				return nil, err
			}
			if spec.Join == nil {
				spec.Join = &stream.Join{}
			}
			spec.Join.Kind = stream.JoinKind(k)
		}
	}
	if spec.Join != nil && spec.Join.Table == "" {
		return nil, a.errorf(`"join-kind": want "join" => table too`)
	}
	if spec.To == "" {
		return nil, a.errorf(`"to": want the output topic; usage: %s`, streamUsage)
	}
	if err := a.readStateArgs(&spec, stateful, transform); err != nil {
		return nil, err
	}
	return stream.Of(lib.Library).Start(ctx, kafkabpl.Config{Base: a.pos[0], Keys: config}, spec)
}

// tables reads "tables": a topic, a list of topics, or (name => table
// ...), where a table is its topic or (tableUsage); a table without a name
// is named by its topic.
func (a *args) tables(v any) ([]stream.Table, error) {
	if s, ok := v.(string); ok {
		return []stream.Table{{Topic: s}}, nil
	}
	l, ok := v.(*value.List)
	if !ok {
		return nil, a.errorf(`"tables": want a topic, a list of topics or (name => topic ...), got %s`, value.Describe(v))
	}
	var ts []stream.Table
	for name, e := range l.All() {
		switch e := e.(type) {
		case string:
			ts = append(ts, stream.Table{Name: name, Topic: e})
		case *value.List:
			t, err := a.table(name, e)
			if err != nil {
				return nil, err
			}
			ts = append(ts, t)
		default:
			return nil, a.errorf(`"tables": want topic names or %s, got %s in %s`, tableUsage, value.Describe(e), value.Describe(v))
		}
	}
	return ts, nil
}

// tableUsage is the form of a table's settings in "tables".
const tableUsage = `("topic" => topic "partitioned" => true|false "hold" => ms)`

// table reads a table's settings, (tableUsage).
func (a *args) table(name string, l *value.List) (stream.Table, error) {
	t := stream.Table{Name: name}
	what := fmt.Sprintf(`"tables" %q`, name)
	for key, v := range l.All() {
		var err error
		switch key {
		case "topic":
			t.Topic, err = a.strValue(v, what+` "topic"`)
		case "partitioned":
			b, ok := v.(bool)
			if !ok {
				err = a.errorf(`%s "partitioned": want true or false, got %s`, what, value.Describe(v))
			}
			t.Partitioned = b
		case "hold":
			t.Hold, err = a.millis(v, what+` "hold"`)
		default:
			err = a.errorf(`%s: unknown setting %q; want %s`, what, key, tableUsage)
		}
		if err != nil {
			return t, err
		}
	}
	if t.Topic == "" {
		return t, a.errorf(`%s: want a "topic": %s`, what, tableUsage)
	}
	return t, nil
}

// bplLookup is (kafka-lookup table key): the value a stream's table holds
// for key, or null; only a stream's functions call it.
func bplLookup(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-lookup", l)
	if err != nil {
		return nil, err
	}
	name, err := a.strValue(a.pos[0], "table")
	if err != nil {
		return nil, err
	}
	v, _, err := stream.Lookup(ctx, name, a.pos[1])
	if err != nil {
		return nil, fnError("kafka-lookup", err)
	}
	return v, nil
}

// strValue reads a named argument's string.
func (a *args) strValue(v any, what string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", a.errorf("%s: want a string, got %s", what, value.Describe(v))
	}
	return s, nil
}

// oneOf reads a named argument that is one of choices, in any case, and
// returns its index: the choices are listed in their constants' order.
func (a *args) oneOf(v any, what string, choices ...string) (int, error) {
	s, err := a.strValue(v, what)
	if err != nil {
		return 0, err
	}
	for i, c := range choices {
		if strings.EqualFold(s, c) {
			return i, nil
		}
	}
	var want strings.Builder
	for i, c := range choices {
		switch {
		case i == len(choices)-1:
			want.WriteString(" or ")
		case i > 0:
			want.WriteString(", ")
		}
		want.WriteString(strconv.Quote(c))
	}
	return 0, a.errorf("%s: want %s, got %s", what, want.String(), value.Describe(v))
}

// bplTransform adapts a BPL function to a Transform: it gets the input as
// a record list and returns null (no output), a kafka-output or
// kafka-outputs value, or any other value, which is one output to the
// stream's "to" with the input's key.
//
// The slice of one output it returns is reused by its next call, which
// the stream makes only after writing the outputs of this one (the
// transforms of a stream run one at a time): an input costs no slice.
func bplTransform(fn value.Callable) stream.Transform {
	var one [1]stream.Output
	return func(ctx context.Context, in *kafkabpl.Record) ([]stream.Output, error) {
		rec := in.List()
		key := inputKey(in, rec)
		v, err := callFn(ctx, fn, rec, nil, 1)
		if err != nil {
			return nil, err
		}
		return outputsInto(one[:0], v, key)
	}
}

// outputsOf reads what a BPL function returned as outputs: null (none), a
// kafka-output or kafka-outputs value, or any other value, which is one
// output to the stream's "to"; outputs that set no key get key.
func outputsOf(v, key any) ([]stream.Output, error) {
	return outputsInto(nil, v, key)
}

// outputsInto is outputsOf appending one output (the usual case) to buf.
func outputsInto(buf []stream.Output, v, key any) ([]stream.Output, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case *streamOutputs:
		outs := make([]stream.Output, len(v.outs))
		for i, o := range v.outs {
			outs[i] = o.Output
			if !o.keySet {
				outs[i].Key = key
			}
		}
		return outs, nil
	case *value.List:
		for _, e := range v.Values() {
			if _, ok := e.(*streamOutputs); ok {
				return nil, invalidf("the function returned a list holding a kafka-output: to write several messages, return (kafka-outputs ...)")
			}
		}
		if value.MayCycle() && value.Cyclic(v) {
			// BPL lets a list contain itself, as brain4it does; a
			// serializer would follow it without end (the arguments of
			// kafka-output and the library functions are checked as
			// they are called)
			return nil, invalidf("the function returned a list that contains itself, which no message can hold")
		}
	}
	return append(buf, stream.Output{Message: kafkabpl.Message{Key: key, Value: v}}), nil
}

// streamOutputs is what kafka-output and kafka-outputs return: messages a
// transform writes. It is a value of its own, never a list, so that a list
// a transform returns is always one message's value.
type streamOutputs struct {
	outs []streamOutput
}

// streamOutput is one output; keySet says whether the transform set the
// key (to null, maybe) or leaves the input's.
type streamOutput struct {
	stream.Output
	keySet bool
}

// String prints the outputs as the call that makes them.
func (o *streamOutputs) String() string {
	var b strings.Builder
	if len(o.outs) != 1 {
		b.WriteString("(kafka-outputs")
	}
	for i, out := range o.outs {
		if len(o.outs) != 1 || i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("(kafka-output ")
		b.WriteString(value.Format(out.Value))
		if out.Topic != "" {
			fmt.Fprintf(&b, ` "topic" => %s`, value.Format(out.Topic))
		}
		if out.keySet {
			fmt.Fprintf(&b, ` "key" => %s`, value.Format(out.Key))
		}
		if out.Partition != nil {
			fmt.Fprintf(&b, ` "partition" => %d`, *out.Partition)
		}
		if len(out.Headers) > 0 {
			h := &value.List{}
			for _, hd := range out.Headers {
				h.AppendNamed(hd.Key, string(hd.Value))
			}
			fmt.Fprintf(&b, ` "headers" => %s`, value.Format(h))
		}
		b.WriteByte(')')
	}
	if len(o.outs) != 1 {
		b.WriteByte(')')
	}
	return b.String()
}

const outputUsage = `(kafka-output value "topic" => t "key" => k "partition" => p "headers" => ("h" => v ...) "timestamp" => ms)`

// bplOutput is (kafka-output value ...): one message with its own topic,
// key, partition, headers or timestamp.
func bplOutput(_ context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-output", l)
	if err != nil {
		return nil, err
	}
	var o streamOutput
	o.Value = a.pos[0]
	fields := &value.List{}
	for name, v := range a.named.All() {
		switch name {
		case "topic":
			if o.Topic, err = a.strValue(v, `"topic"`); err != nil {
				return nil, err
			}
		case "key":
			o.keySet = true
			fields.AppendNamed(name, v)
		default:
			fields.AppendNamed(name, v)
		}
	}
	if err := a.recordFields(&o.Message, fields, 0, []string{"key", "partition", "headers", "timestamp"}); err != nil {
		return nil, err
	}
	return &streamOutputs{outs: []streamOutput{o}}, nil
}

// bplOutputs is (kafka-outputs a b ...): several messages, each a value
// (to "to" with the input's key) or a kafka-output.
func bplOutputs(_ context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-outputs", l)
	if err != nil {
		return nil, err
	}
	out := &streamOutputs{}
	for _, v := range a.pos {
		if o, ok := v.(*streamOutputs); ok {
			out.outs = append(out.outs, o.outs...)
			continue
		}
		out.outs = append(out.outs, streamOutput{Output: stream.Output{Message: kafkabpl.Message{Value: v}}})
	}
	return out, nil
}

func (lib table) bplStreamStatus(ctx context.Context, l *value.List) (any, error) {
	_, id, err := readIDArgs("kafka-stream-status", l)
	if err != nil {
		return nil, err
	}
	st, err := stream.Of(lib.Library).Status(ctx, id)
	if err != nil {
		return nil, err
	}
	return st.List(), nil
}
