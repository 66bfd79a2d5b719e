package kafkabpl

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

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
	Aggregate func(ctx context.Context, in *Record, acc any) (any, error)
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
	Result func(ctx context.Context, w *WindowResult) ([]StreamOutput, error)
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
		return errorf(ErrInvalidArgument, `"aggregate": a windowed stream needs an aggregate function`)
	case w.Kind < Tumbling || w.Kind > Session:
		return errorf(ErrInvalidArgument, "window kind %d: want Tumbling, Hopping or Session", w.Kind)
	case w.Kind != Session && !ms(w.Size):
		return errorf(ErrInvalidArgument, `window "size" %v: want 1 ms or more`, w.Size)
	case w.Kind == Hopping && (!ms(w.Advance) || w.Advance > w.Size):
		return errorf(ErrInvalidArgument, `window "advance" %v: want 1 ms to the size, %v`, w.Advance, w.Size)
	case w.Kind == Session && !ms(w.Gap):
		return errorf(ErrInvalidArgument, `window "gap" %v: want 1 ms or more`, w.Gap)
	case w.Kind == Session && w.Merge == nil:
		return errorf(ErrInvalidArgument, `"merge": a session window needs a merge function, for the sessions an input bridges`)
	case w.Grace < 0 || w.Idle < 0:
		return errorf(ErrInvalidArgument, `window "grace" %v, "idle" %v: want 0 or more`, w.Grace, w.Idle)
	case w.Emit < EmitOnClose || w.Emit > EmitOnUpdate:
		return errorf(ErrInvalidArgument, "window emit %d: want EmitOnClose or EmitOnUpdate", w.Emit)
	case w.Late < DropLate || w.Late > DeadLetterLate:
		return errorf(ErrInvalidArgument, "window late %d: want DropLate or DeadLetterLate", w.Late)
	}
	return nil
}

// closeAt is the stream time at which window w closes. A time window's
// end is past its last millisecond; a session's end is its last input,
// and an input Gap after it still joins it.
func (w *Window) closeAt(ws *win) int64 {
	end := ws.end
	if w.Kind == Session {
		end = satAdd(end, w.Gap.Milliseconds()+1)
	}
	return satAdd(end, w.Grace.Milliseconds())
}

// satAdd adds without overflowing.
func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// floorDiv divides rounding down, for timestamps before 1970.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// fold is a window's new aggregate for an input: kept (see keep) once
// every window of the input has one, so that an input failing in its
// second window leaves the first as it was.
type fold struct {
	w          *win // the window, nil for a new one
	start, end int64
	enc        []byte // the aggregate's encoding, in the fold's buffer, reused input after input
	val        any
	merged     []*win // a session's: the sessions it replaces
}

// windowedTransform is the Transform of a windowed stream: it folds each
// input into its windows and, under EmitOnUpdate, returns their results.
func (st *kafkaStore) windowedTransform() Transform {
	w := st.win
	return func(ctx context.Context, in *Record) ([]StreamOutput, error) {
		p, err := st.partOf(in)
		if err != nil {
			return nil, err
		}
		// The key's bytes index the map as they are (a lookup with
		// string(key) allocates nothing); a string is made only for a
		// new key.
		key := in.KeyBytes()
		if key == nil {
			_, err := stateKey(in)
			return nil, err
		}
		t := in.Timestamp().UnixMilli()
		now := max(p.btime, t) // the stream time, this input included
		sl := p.slots[string(key)]
		st.folds = st.folds[:0]
		if w.Kind == Session {
			err = st.session(ctx, in, key, sl, t, now)
		} else {
			err = st.timeWindows(ctx, in, key, sl, t, now)
		}
		if err != nil {
			return nil, err
		}
		if len(st.folds) == 0 {
			return nil, fmt.Errorf("%w: timestamp %d, and the stream time %d passed the close of its windows (grace %v)", ErrLate, t, now, w.Grace)
		}
		// The input counts: keep its aggregates and the time.
		if sl == nil {
			sl = &slot{key: string(key), born: st.batch}
			p.slots[sl.key] = sl
		}
		for i := range st.folds {
			f := &st.folds[i]
			f.w = st.keep(p, sl, f)
			p.bminClose = min(p.bminClose, w.closeAt(f.w))
		}
		p.btime = now
		if w.Emit != EmitOnUpdate {
			return nil, nil
		}
		var outs []StreamOutput
		for _, f := range st.folds {
			o, err := st.result(ctx, in.Key(), f.w, false)
			if err != nil {
				return nil, err
			}
			outs = append(outs, o...)
		}
		return outs, nil
	}
}

// addFold returns a new fold for the input in hand, with the buffer the
// fold in its place had for an earlier input.
func (st *kafkaStore) addFold() *fold {
	if len(st.folds) < cap(st.folds) {
		st.folds = st.folds[:len(st.folds)+1]
	} else {
		st.folds = append(st.folds, fold{})
	}
	f := &st.folds[len(st.folds)-1]
	*f = fold{enc: f.enc[:0]}
	return f
}

// keep writes a fold into key slot sl of p, making its window if it is
// new and closing the sessions it merged, and returns the window.
func (st *kafkaStore) keep(p *part, sl *slot, f *fold) *win {
	w := f.w
	if w == nil {
		w = &win{start: f.start, end: f.end, born: st.batch}
		i, _ := slices.BinarySearchFunc(sl.wins, w.start, func(o *win, s int64) int { return cmp.Compare(o.start, s) })
		sl.wins = slices.Insert(sl.wins, i, w)
	}
	st.logWin(p, sl, w)
	st.write(&w.cell, &w.spare, f.enc, f.val)
	for _, m := range f.merged {
		st.logWin(p, sl, m)
		m.closed = st.batch
	}
	return w
}

// timeWindows folds an input at t into its tumbling or hopping windows
// that are still open at stream time now, a fold each (none when all of
// them closed: the input is late).
func (st *kafkaStore) timeWindows(ctx context.Context, in *Record, key []byte, sl *slot, t, now int64) error {
	w := st.win
	size, adv := w.Size.Milliseconds(), w.Size.Milliseconds()
	if w.Kind == Hopping {
		adv = w.Advance.Milliseconds()
	}
	first := floorDiv(t-size, adv)*adv + adv // the earliest start whose window holds t
	for start := first; start <= t; start = satAdd(start, adv) {
		end := satAdd(start, size)
		if w.closeAt(&win{end: end}) <= now {
			continue // closed: this input is late for it
		}
		var acc any
		f := st.addFold()
		f.start, f.end = start, end
		if sl != nil {
			if i := slices.IndexFunc(sl.wins, func(o *win) bool { return o.start == start && o.closed != st.batch }); i >= 0 {
				f.w = sl.wins[i]
				var err error
				if acc, err = f.w.value(); err != nil {
					return fmt.Errorf("the window of key %q at %d: %w", key, start, err)
				}
			}
		}
		if err := st.aggregate(ctx, in, f, acc); err != nil {
			return err
		}
		if start == math.MaxInt64 {
			break
		}
	}
	return nil
}

// session folds an input at t into the key's session within the gap of
// it, merging the sessions it bridges: no fold when it would start a
// session already closed (late).
func (st *kafkaStore) session(ctx context.Context, in *Record, key []byte, sl *slot, t, now int64) error {
	w := st.win
	gap := w.Gap.Milliseconds()
	start, end := t, t
	var merged []*win
	var acc any
	if sl != nil {
		for _, o := range sl.wins { // in start order
			if o.closed == st.batch || w.closeAt(o) <= now || satAdd(t, gap) < o.start || satAdd(o.end, gap) < t {
				continue
			}
			a, err := o.value()
			if err != nil {
				return fmt.Errorf("the session of key %q at %d: %w", key, o.start, err)
			}
			if len(merged) == 0 {
				acc = a
			} else if acc, err = w.Merge(ctx, acc, a); err != nil {
				return err
			}
			merged = append(merged, o)
			start, end = min(start, o.start), max(end, o.end)
		}
	}
	if len(merged) == 0 && w.closeAt(&win{end: end}) <= now {
		return nil
	}
	f := st.addFold()
	f.start, f.end = start, end
	if len(merged) == 1 && merged[0].start == start && merged[0].end == end {
		f.w = merged[0] // within the session: it stays, changed
	} else {
		f.merged = merged
	}
	return st.aggregate(ctx, in, f, acc)
}

// aggregate runs the aggregate on an input and keeps its result in f.
func (st *kafkaStore) aggregate(ctx context.Context, in *Record, f *fold, acc any) error {
	next, err := st.win.Aggregate(ctx, in, acc)
	if err != nil {
		return err
	}
	if next == nil {
		return errorf(ErrInvalidArgument, "the aggregate returned null: a window's aggregate is a value")
	}
	if f.enc, err = store.Encode(f.enc, next); err != nil {
		return err
	}
	f.val = next
	return nil
}

// result makes the outputs of window ws of key.
func (st *kafkaStore) result(ctx context.Context, key any, ws *win, final bool) ([]StreamOutput, error) {
	acc, err := ws.value()
	if err != nil {
		return nil, err
	}
	r := &WindowResult{Key: key, Start: ws.start, End: ws.end, Value: acc, Final: final}
	if st.win.Result != nil {
		return st.win.Result(ctx, r)
	}
	v := &value.List{}
	v.AppendNamed("start", r.Start)
	v.AppendNamed("end", r.End)
	v.AppendNamed("value", r.Value)
	return []StreamOutput{{Message: Message{Key: key, Value: v}}}, nil
}

// closed is a window that closed in a batch.
type closed struct {
	key string
	w   *win
	at  int64
}

// closeDue closes the windows of every partition whose close time the
// stream time reached: it closes them in the batch (so that the
// changelog tombstones them and the commit drops them) and, under EmitOnClose, returns their results, in close
// time order. A Result error under StopOnError ends the batch with it;
// under the other policies the window's result is skipped (and counted).
func (st *kafkaStore) closeDue(ctx context.Context, onError OnError, b *batchCounts) ([]StreamOutput, error) {
	var outs []StreamOutput
	for _, id := range slices.Sorted(maps.Keys(st.parts)) {
		p := st.parts[id]
		if p.btime < p.bminClose {
			continue
		}
		var due []closed
		next := int64(math.MaxInt64)
		for _, sl := range p.slots {
			for _, ws := range sl.wins {
				if ws.closed == st.batch {
					continue
				}
				if at := st.win.closeAt(ws); at <= p.btime {
					st.logWin(p, sl, ws)
					ws.closed = st.batch
					due = append(due, closed{sl.key, ws, at})
				} else {
					next = min(next, at)
				}
			}
		}
		p.bminClose = next
		slices.SortFunc(due, func(a, b closed) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.w.start, b.w.start), cmp.Compare(a.key, b.key))
		})
		if st.win.Emit != EmitOnClose {
			continue
		}
		for _, c := range due {
			o, err := st.result(ctx, st.decodeKey(c.key), c.w, true)
			if err != nil {
				err = fmt.Errorf("the result of key %q's window at %d: %w", c.key, c.w.start, err)
				if onError == StopOnError {
					return nil, err
				}
				b.skipped++
				b.lastErr = err
				continue
			}
			outs = append(outs, o...)
		}
	}
	return outs, nil
}

// decodeKey reads a state key as the key deserializer reads the input's.
func (st *kafkaStore) decodeKey(key string) any {
	r := &Record{r: &kgo.Record{Topic: st.input, Key: []byte(key)}, cfg: st.cfg}
	return r.Key()
}
