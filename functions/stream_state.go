package functions

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
)

// The BPL side of stateful streams: kafka-stream's "store", "window",
// "aggregate", "merge" and "result", and kafka-state, what a stateful
// transform returns.

// stateResult is what kafka-state returns: a key's new state and the
// outputs of its input.
type stateResult struct {
	state any
	outs  *streamOutputs
}

// String prints the result as the call that makes it.
func (r *stateResult) String() string {
	var b strings.Builder
	b.WriteString("(kafka-state ")
	b.WriteString(value.Format(r.state))
	for _, o := range r.outs.outs {
		b.WriteByte(' ')
		b.WriteString((&streamOutputs{outs: []streamOutput{o}}).String())
	}
	b.WriteByte(')')
	return b.String()
}

// bplState is (kafka-state state output ...): a stateful transform's new
// state for its input's key (null deletes it) and its outputs, each a
// value (to "to" with the input's key) or a kafka-output.
func bplState(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-state", l)
	if err != nil {
		return nil, err
	}
	outs, err := bplOutputs(ctx, value.ListOf(a.pos[1:], nil))
	if err != nil {
		return nil, err
	}
	return &stateResult{state: a.pos[0], outs: outs.(*streamOutputs)}, nil
}

// stateNames are kafka-stream's named arguments of stateful streams.
var stateNames = []string{"store", "window", "aggregate", "merge", "result", "on-timer", "silence", "rekey", "interval-join", "standbys"}

// readStateArgs reads the named arguments of a stateful stream into spec;
// transform is the "transform" function, nil if none was given.
func (a *args) readStateArgs(spec *stream.Spec, named map[string]any, transform value.Callable) error {
	if v, ok := named["store"]; ok {
		s, err := a.strValue(v, `"store"`)
		if err != nil {
			return err
		}
		spec.Store = s
	}
	if v, ok := named["interval-join"]; ok {
		return a.readIntervalJoin(spec, v, named, transform)
	}
	fn := func(name, shape string) (value.Callable, error) {
		v, ok := named[name]
		if !ok {
			return nil, nil
		}
		f, ok := v.(value.Callable)
		if !ok {
			return nil, a.errorf(`%q: want a function, such as %s, got %s`, name, shape, value.Describe(v))
		}
		return f, nil
	}
	aggregate, err := fn("aggregate", "(function (in acc) ...)")
	if err != nil {
		return err
	}
	merge, err := fn("merge", "(function (a b) ...)")
	if err != nil {
		return err
	}
	result, err := fn("result", "(function (w) ...)")
	if err != nil {
		return err
	}
	onTimer, err := fn("on-timer", "(function (timer state) ...)")
	if err != nil {
		return err
	}
	if onTimer != nil {
		spec.OnTimer = bplOnTimer(onTimer)
	}
	rekey, err := fn("rekey", "(function (in) new-key)")
	if err != nil {
		return err
	}
	if rekey != nil {
		spec.Rekey = func(ctx context.Context, in *kafkabpl.Record) (any, error) {
			return callFn(ctx, rekey, in.List(), nil, 1)
		}
	}
	if v, ok := named["standbys"]; ok {
		n, err := a.int(v, `"standbys"`, 0, math.MaxInt32)
		if err != nil {
			return err
		}
		spec.Standbys = int(n)
	}
	if v, ok := named["silence"]; ok {
		ms, err := a.int(v, `"silence" (ms)`, 1, math.MaxInt64/int64(time.Millisecond))
		if err != nil {
			return err
		}
		spec.Silence = time.Duration(ms) * time.Millisecond
	}
	wv, windowed := named["window"]
	if !windowed {
		for _, name := range []string{"aggregate", "merge", "result"} {
			if _, ok := named[name]; ok {
				return a.errorf(`%q: only a windowed stream takes it; give a "window"`, name)
			}
		}
		if spec.Store != "" && transform != nil {
			spec.Update = bplUpdate(transform)
		} else if transform != nil {
			spec.Transform = bplTransform(transform)
		}
		return nil
	}
	if transform != nil {
		return a.errorf(`"transform": a windowed stream takes an "aggregate" (and a "result"), not a transform`)
	}
	w, err := a.window(wv)
	if err != nil {
		return err
	}
	if aggregate == nil {
		return a.errorf(`"aggregate": a windowed stream needs one, such as (function (in acc) (+ (if (= acc null) 0 acc) 1))`)
	}
	w.Aggregate = bplAggregate(aggregate)
	if merge != nil {
		w.Merge = bplMerge(merge)
	}
	if result != nil {
		w.Result = bplResult(result)
	}
	spec.Window = w
	return nil
}

const windowUsage = `("type" => "tumbling"|"hopping"|"session" "size" => ms "advance" => ms "gap" => ms "grace" => ms "emit" => "close"|"update" "late" => "drop"|"dead-letter" "idle" => ms)`

var windowNames = []string{"type", "size", "advance", "gap", "grace", "emit", "late", "idle"}

// window reads a "window" list.
func (a *args) window(v any) (*stream.Window, error) {
	w := &stream.Window{}
	typed := false
	err := a.settings(v, `"window"`, windowUsage, windowNames, func(name string, v any) error {
		var err error
		var k int
		switch name {
		case "type":
			k, err = a.oneOf(v, `"window" "type"`, "tumbling", "hopping", "session")
			w.Kind, typed = stream.WindowKind(k), true
		case "emit":
			k, err = a.oneOf(v, `"window" "emit"`, "close", "update")
			w.Emit = stream.Emit(k)
		case "late":
			k, err = a.oneOf(v, `"window" "late"`, "drop", "dead-letter")
			w.Late = stream.LateRecords(k)
		case "size":
			w.Size, err = a.millis(v, `"window" "size"`)
		case "advance":
			w.Advance, err = a.millis(v, `"window" "advance"`)
		case "gap":
			w.Gap, err = a.millis(v, `"window" "gap"`)
		case "grace":
			w.Grace, err = a.millis(v, `"window" "grace"`)
		case "idle":
			w.Idle, err = a.millis(v, `"window" "idle"`)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !typed {
		return nil, a.errorf(`"window": want a "type", "tumbling", "hopping" or "session": %s`, windowUsage)
	}
	return w, nil
}

// inputKey is the key of an input's outputs that keep it: the one its
// record list holds, read before a function could change the list, when
// it is a string (not decoded a second time); else decoded anew, so that a
// function changing a key list changes no output.
func inputKey(in *kafkabpl.Record, rec *value.List) any {
	key, _ := rec.Get("key")
	if _, ok := key.(string); !ok {
		key = in.Key()
	}
	return key
}

// callFn calls fn with args, in one allocation for the list and its values.
func callFn(ctx context.Context, fn value.Callable, a0, a1 any, n int) (any, error) {
	if c, ok := fn.(argsCaller); ok { // a BPL function: no argument list
		return c.CallArgs(ctx, n, a0, a1)
	}
	args := &struct {
		l value.List
		v [2]any
	}{}
	args.v[0], args.v[1] = a0, a1
	args.l.Reset(args.v[:n], nil)
	return fn.Call(ctx, &args.l)
}

// argsCaller is a callable that takes up to two positional arguments
// without a list of them (bpl.Function).
type argsCaller interface {
	CallArgs(ctx context.Context, n int, a0, a1 any) (any, error)
}

// bplUpdate adapts a BPL function (in state) to an Update: it returns
// (kafka-state new-state output ...), or null to keep the state (as the
// function left it) and write nothing.
func bplUpdate(fn value.Callable) stream.Update {
	return func(ctx context.Context, in *kafkabpl.Record, state any) ([]stream.Output, any, error) {
		rec := in.List()
		key := inputKey(in, rec)
		v, err := callFn(ctx, fn, rec, state, 2)
		if err != nil {
			return nil, nil, err
		}
		switch v := v.(type) {
		case nil:
			return nil, state, nil
		case *stateResult:
			outs, err := outputsOf(v.outs, key)
			return outs, v.state, err
		}
		return nil, nil, invalidf("a stateful transform returns (kafka-state new-state output ...), or null to keep the state; got %s", value.Describe(v))
	}
}

// bplOnTimer adapts a BPL function (timer state) to an OnTimer: timer is
// ("key" "kind" "at" "partition"); it returns (kafka-state new-state
// output ...), whose outputs are keyed by the timer's key unless they say
// otherwise, or null to keep the state and write nothing.
func bplOnTimer(fn value.Callable) stream.OnTimer {
	return func(ctx context.Context, ev *stream.TimerEvent, state any) ([]stream.Output, any, error) {
		v, err := callFn(ctx, fn, ev.List(), state, 2)
		if err != nil {
			return nil, nil, err
		}
		switch v := v.(type) {
		case nil:
			return nil, state, nil
		case *stateResult:
			outs, err := outputsOf(v.outs, ev.Key)
			return outs, v.state, err
		}
		return nil, nil, invalidf(`"on-timer" returns (kafka-state new-state output ...), or null to keep the state; got %s`, value.Describe(v))
	}
}

// bplSetTimer is (kafka-set-timer "wall-clock"|"stream-time" ms): from a
// stateful stream's function, the timer of the key in hand.
func bplSetTimer(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-set-timer", l)
	if err != nil {
		return nil, err
	}
	k, err := a.oneOf(a.pos[0], "kind", "stream-time", "wall-clock")
	if err != nil {
		return nil, err
	}
	ms, err := a.int(a.pos[1], "ms", math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	if err := stream.SetTimer(ctx, stream.TimerKind(k), time.UnixMilli(ms)); err != nil {
		return nil, fnError("kafka-set-timer", err)
	}
	return true, nil
}

// bplCancelTimer is (kafka-cancel-timer): the key in hand's timer goes.
func bplCancelTimer(ctx context.Context, l *value.List) (any, error) {
	if _, err := readArgs("kafka-cancel-timer", l); err != nil {
		return nil, err
	}
	if err := stream.CancelTimer(ctx); err != nil {
		return nil, fnError("kafka-cancel-timer", err)
	}
	return true, nil
}

// bplAggregate adapts a BPL function (in acc) to an aggregate. A BPL
// function gets its input lazily: a count, which never reads it, does not
// pay for the record list.
func bplAggregate(fn value.Callable) func(context.Context, *kafkabpl.Record, any) (any, error) {
	lazy := value.TakesLazy(fn)
	return func(ctx context.Context, in *kafkabpl.Record, acc any) (any, error) {
		var v any
		var err error
		if lazy {
			// The arguments and the lazy input in one allocation.
			args := &struct {
				l  value.List
				v  [2]any
				in value.Lazy
			}{}
			args.in = value.Lazy{Make: recordList, Arg: in}
			args.v[0], args.v[1] = &args.in, acc
			args.l.Reset(args.v[:], nil)
			v, err = fn.Call(ctx, &args.l)
		} else {
			v, err = callFn(ctx, fn, in.List(), acc, 2)
		}
		if err != nil {
			return nil, err
		}
		switch v.(type) {
		case *streamOutputs, *stateResult:
			return nil, invalidf(`the aggregate returns the window's new aggregate, a value; got %s (outputs are the "result" function's)`, value.Describe(v))
		}
		return v, nil
	}
}

// recordList makes an input's record list, for a lazy argument.
func recordList(in any) any { return in.(*kafkabpl.Record).List() }

// bplMerge adapts a BPL function (a b) to a session window's merge.
func bplMerge(fn value.Callable) func(context.Context, any, any) (any, error) {
	return func(ctx context.Context, x, y any) (any, error) {
		return callFn(ctx, fn, x, y, 2)
	}
}

// bplResult adapts a BPL function (w) to a window's Result: it returns
// what a transform does (null, a value, kafka-output or kafka-outputs),
// keyed by the window's key.
func bplResult(fn value.Callable) func(context.Context, *stream.WindowResult) ([]stream.Output, error) {
	return func(ctx context.Context, w *stream.WindowResult) ([]stream.Output, error) {
		v, err := callFn(ctx, fn, w.List(), nil, 1)
		if err != nil {
			return nil, err
		}
		return outputsOf(v, w.Key)
	}
}
