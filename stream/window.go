package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Windowed aggregation: per key, an aggregate per window of time, timed by
// the inputs' timestamps. A partition's stream time is the latest input
// timestamp it has seen; a window closes when the stream time passes its
// end by the grace period, and an input for a closed window is late.

// WindowKind is how a windowed stream cuts time.
type WindowKind int8

const (
	// Tumbling windows are Size long, back to back: [0, Size), [Size,
	// 2*Size), ... (in ms since the Unix epoch); each input is in one.
	Tumbling WindowKind = iota
	// Hopping windows are Size long and start every Advance (a divisor of
	// nothing in particular, less than Size): an input is in Size/Advance
	// of them, rounded up or down.
	Hopping
	// Session windows group a key's inputs that come at most Gap apart:
	// an input joins the key's session when it is at most Gap before the
	// session's first input or after its last, and one that bridges two
	// sessions merges them (with Merge). A session closes once stream time
	// passes its last input by more than Gap and Grace together: until
	// then an input could still join it.
	Session
)

// String returns "tumbling", "hopping" or "session".
func (k WindowKind) String() string {
	switch k {
	case Hopping:
		return "hopping"
	case Session:
		return "session"
	}
	return "tumbling"
}

// Emit is when a windowed stream writes a window's result.
type Emit int8

const (
	// EmitOnClose (the default) writes each window's result once, when it
	// closes: the stream time passed its end by the grace period.
	EmitOnClose Emit = iota
	// EmitOnUpdate writes the result after every input that changes the
	// window, and nothing when it closes.
	EmitOnUpdate
)

// String returns "close" or "update".
func (e Emit) String() string {
	if e == EmitOnUpdate {
		return "update"
	}
	return "close"
}

// LateRecords is what a windowed stream does with an input later than the
// grace period: one whose windows have all closed.
type LateRecords int8

const (
	// DropLate (the default) drops it, counting it in the store's Late.
	DropLate LateRecords = iota
	// DeadLetterLate writes it to the dead-letter topic, as
	// DeadLetterOnError does, with "dlq-error-type" LateRecord.
	DeadLetterLate
)

// String returns "drop" or "dead-letter".
func (l LateRecords) String() string {
	if l == DeadLetterLate {
		return "dead-letter"
	}
	return "drop"
}

// Window is a windowed stream's windows and functions.
//
// Hazard: a partition's stream time moves only with its inputs, so the
// last windows of a partition that receives nothing more stay open, unless
// Idle is set: then a partition without input for Idle moves its stream
// time on with the wall clock, and its windows close on time (for inputs
// timestamped by their producers, as IoT readings are).
type Window struct {
	Kind    WindowKind
	Size    time.Duration // Tumbling and Hopping: the window's length; at least 1 ms
	Advance time.Duration // Hopping: how much later each window starts than the last; 1 ms to Size
	Gap     time.Duration // Session: the silence that ends a session; at least 1 ms
	Grace   time.Duration // how far the stream time may pass a window's end before it closes; default 0
	Emit    Emit          // EmitOnClose by default
	Late    LateRecords   // DropLate by default
	Idle    time.Duration // 0 (the default): stream time moves with inputs only; see the hazard above

	// Aggregate folds an input into a window's aggregate, nil for a new
	// window, and returns the new one (a state value, as [Update]'s). An
	// error leaves the windows as they were and goes to OnError.
	Aggregate func(ctx context.Context, in *kafkabpl.Record, acc any) (any, error)
	// Merge (Session, required) merges the aggregates of two sessions an
	// input bridges, the earlier first.
	Merge func(ctx context.Context, a, b any) (any, error)
	// Result makes a window's outputs. nil writes one message to the
	// stream's To, keyed by the window's key, whose value is ("start" =>
	// ms "end" => ms "value" => aggregate). An error at a window's close
	// fails the stream under StopOnError; under the other policies that
	// window's result is skipped (counted in Skipped: there is no input to
	// dead-letter). Under EmitOnUpdate a session that merges others is
	// written anew; the results written for those are not withdrawn.
	Result func(ctx context.Context, w *WindowResult) ([]Output, error)
}

// WindowResult is a window's aggregate, handed to Window.Result.
type WindowResult struct {
	Key        any   // the window's key, as the key deserializer reads it
	Start, End int64 // ms since the Unix epoch: [Start, End) for time windows; a session's first and last input times
	Value      any   // the aggregate
	Final      bool  // the window closed (EmitOnClose); false for an update
}

// List returns the result as a BPL function gets it: ("key" => k "start"
// => ms "end" => ms "value" => v "final" => bool).
func (w *WindowResult) List() *value.List {
	l := &value.List{}
	l.AppendNamed("key", w.Key)
	l.AppendNamed("start", w.Start)
	l.AppendNamed("end", w.End)
	l.AppendNamed("value", w.Value)
	l.AppendNamed("final", w.Final)
	return l
}

func (w *Window) check() error {
	ms := func(d time.Duration) bool { return d >= time.Millisecond }
	switch {
	case w.Aggregate == nil:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"aggregate": a windowed stream needs an aggregate function`)
	case w.Kind < Tumbling || w.Kind > Session:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "window kind %d: want Tumbling, Hopping or Session", w.Kind)
	case w.Kind != Session && !ms(w.Size):
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `window "size" %v: want 1 ms or more`, w.Size)
	case w.Kind == Hopping && (!ms(w.Advance) || w.Advance > w.Size):
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `window "advance" %v: want 1 ms to the size, %v`, w.Advance, w.Size)
	case w.Kind == Session && !ms(w.Gap):
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `window "gap" %v: want 1 ms or more`, w.Gap)
	case w.Kind == Session && w.Merge == nil:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"merge": a session window needs a merge function, for the sessions an input bridges`)
	case w.Grace < 0 || w.Idle < 0:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `window "grace" %v, "idle" %v: want 0 or more`, w.Grace, w.Idle)
	case w.Emit < EmitOnClose || w.Emit > EmitOnUpdate:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "window emit %d: want EmitOnClose or EmitOnUpdate", w.Emit)
	case w.Late < DropLate || w.Late > DeadLetterLate:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "window late %d: want DropLate or DeadLetterLate", w.Late)
	}
	return nil
}

// spec is the store's cut of time for w; nil for nil.
func (w *Window) spec() *store.WindowSpec {
	if w == nil {
		return nil
	}
	ws := &store.WindowSpec{Size: w.Size, Advance: w.Size, Session: w.Kind == Session, Gap: w.Gap, Grace: w.Grace, Idle: w.Idle}
	if w.Kind == Hopping {
		ws.Advance = w.Advance
	}
	return ws
}

// windowedTransform is the Transform of a windowed stream: it folds each
// input into its windows and, under EmitOnUpdate, returns their results.
func (st *kafkaStore) windowedTransform() Transform {
	w := st.win
	return func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) {
		p, err := st.partOf(in)
		if err != nil {
			return nil, err
		}
		key := in.KeyBytes()
		if key == nil {
			_, err := stateKey(in)
			return nil, err
		}
		agg := func(acc any) (any, error) { return w.Aggregate(ctx, in, acc) }
		merge := func(a, b any) (any, error) { return w.Merge(ctx, a, b) }
		wins, err := st.state.Fold(p, key, in.Timestamp().UnixMilli(), agg, merge)
		if err != nil || w.Emit != EmitOnUpdate {
			return nil, err
		}
		var outs []Output
		for _, ws := range wins {
			o, err := st.result(ctx, in.Key(), ws, false)
			if err != nil {
				return nil, err
			}
			outs = append(outs, o...)
		}
		return outs, nil
	}
}

// result makes the outputs of window ws of key.
func (st *kafkaStore) result(ctx context.Context, key any, ws *store.Window, final bool) ([]Output, error) {
	acc, err := ws.Value()
	if err != nil {
		return nil, err
	}
	r := &WindowResult{Key: key, Start: ws.Start(), End: ws.End(), Value: acc, Final: final}
	if st.win.Result != nil {
		return st.win.Result(ctx, r)
	}
	v := &value.List{}
	v.AppendNamed("start", r.Start)
	v.AppendNamed("end", r.End)
	v.AppendNamed("value", r.Value)
	return []Output{{Message: kafkabpl.Message{Key: key, Value: v}}}, nil
}

// closeDue closes the windows of every partition whose close time the
// stream time reached, in the batch (so that the changelog tombstones
// them and the commit drops them), and, under EmitOnClose, returns their
// results, in close time order. A Result error under StopOnError ends the
// batch with it; under the other policies the window's result is skipped
// (and counted).
func (st *kafkaStore) closeDue(ctx context.Context, onError OnError, b *batchCounts) ([]Output, error) {
	if st.win.Emit != EmitOnClose {
		return nil, st.state.CloseDue(nil)
	}
	var outs []Output
	err := st.state.CloseDue(func(key string, w *store.Window) error {
		o, err := st.result(ctx, st.decodeKey(key), w, true)
		if err != nil {
			err = fmt.Errorf("the result of key %q's window at %d: %w", key, w.Start(), err)
			if onError == StopOnError {
				return err
			}
			b.skipped++
			b.lastErr = err
			return nil
		}
		outs = append(outs, o...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// decodeKey reads a state key as the key deserializer reads the input's.
func (st *kafkaStore) decodeKey(key string) any {
	r := st.cfg.Record(&kgo.Record{Topic: st.inputs[0], Key: []byte(key)})
	return r.Key()
}
