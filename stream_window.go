package kafkabpl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

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
	// Session windows group a key's inputs that come less than Gap apart:
	// an input joins the key's session within Gap of it, and one that
	// bridges two sessions merges them (with Merge).
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
func (w *WindowResult) List() *List {
	l := &List{}
	l.AppendNamed("key", w.Key)
	l.AppendNamed("start", w.Start)
	l.AppendNamed("end", w.End)
	l.AppendNamed("value", w.Value)
	l.AppendNamed("final", w.Final)
	return l
}

// ErrLate is the error of a late input: wrapped by what a windowed stream
// dead-letters (see [DeadLetterLate]).
var ErrLate = errors.New("late record")

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

// closeAt is the stream time at which window w closes.
func (w *Window) closeAt(ws *win) int64 {
	end := ws.end
	if w.Kind == Session {
		end = satAdd(end, w.Gap.Milliseconds())
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

// windowedTransform is the Transform of a windowed stream: it folds each
// input into its windows and, under EmitOnUpdate, returns their results.
func (st *store) windowedTransform() Transform {
	w := st.win
	return func(ctx context.Context, in *Record) ([]StreamOutput, error) {
		p, err := st.partOf(in)
		if err != nil {
			return nil, err
		}
		// The key's bytes index the maps as they are (a lookup with
		// string(key) allocates nothing); a string is made only for a
		// key new to the batch's overlay.
		key := in.KeyBytes()
		if key == nil {
			_, err := stateKey(in)
			return nil, err
		}
		t := in.Timestamp().UnixMilli()
		now := max(p.btime, t) // the stream time, this input included
		var wins []*win
		sl, inBatch := p.dirty[string(key)]
		if !inBatch {
			sl = p.slots[string(key)]
		}
		if sl != nil {
			wins = sl.wins
		}
		var changed []*win // the windows this input makes, replacing those in gone
		var gone []*win
		if w.Kind == Session {
			ws, merged, err := st.session(ctx, in, key, wins, t, now)
			if err != nil {
				return nil, err
			}
			if ws != nil {
				changed, gone = []*win{ws}, merged
			}
		} else {
			// Appended to the store's scratch slices, reused input
			// after input (the run goroutine's only; nothing keeps
			// them past this call): two allocations less per input.
			changed, gone, err = st.timeWindows(ctx, in, key, wins, t, now, st.changed[:0], st.gone[:0])
			st.changed, st.gone = changed, gone
			if err != nil {
				return nil, err
			}
			if len(changed) == 0 {
				changed = nil // late
			}
		}
		if changed == nil {
			return nil, fmt.Errorf("%w: timestamp %d, and the stream time %d passed the close of its windows (grace %v)", ErrLate, t, now, w.Grace)
		}
		// The input counts: keep the new windows and the time. A slot
		// the batch made already (in the overlay) is the batch's own,
		// its slice too: changed in place, two allocations less for a
		// key seen again in the batch. A committed one is copied.
		var next []*win
		if inBatch && sl != nil {
			next = sl.wins[:0]
		} else {
			next = make([]*win, 0, len(wins)+1)
			sl = &slot{}
			p.dirty[string(key)] = sl
		}
		for _, o := range wins { // in place: each kept one moves down, never up
			if !slices.Contains(gone, o) {
				next = append(next, o)
			}
		}
		next = append(next, changed...)
		slices.SortFunc(next, func(a, b *win) int { return cmp.Compare(a.start, b.start) })
		sl.wins = next
		p.btime = now
		for _, c := range changed {
			p.bminClose = min(p.bminClose, w.closeAt(c))
		}
		if w.Emit != EmitOnUpdate {
			return nil, nil
		}
		var outs []StreamOutput
		for _, c := range changed {
			o, err := st.result(ctx, in.Key(), c, false)
			if err != nil {
				return nil, err
			}
			outs = append(outs, o...)
		}
		return outs, nil
	}
}

// timeWindows folds an input at t into its tumbling or hopping windows
// that are still open at stream time now: it appends the new windows to
// changed, and the old ones they replace to gone. None when all of them
// closed: the input is late.
func (st *store) timeWindows(ctx context.Context, in *Record, key []byte, wins []*win, t, now int64, changed, gone []*win) ([]*win, []*win, error) {
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
		var nw *win
		if i := slices.IndexFunc(wins, func(o *win) bool { return o.start == start }); i >= 0 {
			var err error
			if acc, err = value(wins[i].raw, &wins[i].val, &wins[i].has); err != nil {
				return changed, gone, fmt.Errorf("the window of key %q at %d: %w", key, start, err)
			}
			gone = append(gone, wins[i])
			// A tumbling window this batch made is changed in place
			// (gone and changed both, so it stays once): an input has
			// one such window, and fold changes it only once nothing
			// can fail. Hopping windows are made anew, so that an
			// input failing in its second window leaves the first as
			// it was.
			if wins[i].batch == st.batch && w.Kind == Tumbling {
				nw = wins[i]
			}
		}
		if nw == nil {
			nw = &win{start: start, end: end, batch: st.batch}
		}
		if err := st.fold(ctx, in, nw, acc); err != nil {
			return changed, gone, err
		}
		changed = append(changed, nw)
		if start == math.MaxInt64 {
			break
		}
	}
	return changed, gone, nil
}

// session folds an input at t into the key's session within the gap of
// it, merging the sessions it bridges: the new session, and those it
// replaces. nil when it would start a session already closed: late.
func (st *store) session(ctx context.Context, in *Record, key []byte, wins []*win, t, now int64) (*win, []*win, error) {
	w := st.win
	gap := w.Gap.Milliseconds()
	nw := &win{start: t, end: t}
	var merged []*win
	var acc any
	for _, o := range wins { // in start order
		if w.closeAt(o) <= now || satAdd(t, gap) < o.start || satAdd(o.end, gap) < t {
			continue
		}
		a, err := value(o.raw, &o.val, &o.has)
		if err != nil {
			return nil, nil, fmt.Errorf("the session of key %q at %d: %w", key, o.start, err)
		}
		if len(merged) == 0 {
			acc = a
		} else if acc, err = w.Merge(ctx, acc, a); err != nil {
			return nil, nil, err
		}
		merged = append(merged, o)
		nw.start, nw.end = min(nw.start, o.start), max(nw.end, o.end)
	}
	if len(merged) == 0 && w.closeAt(nw) <= now {
		return nil, nil, nil
	}
	if err := st.fold(ctx, in, nw, acc); err != nil {
		return nil, nil, err
	}
	return nw, merged, nil
}

// fold runs the aggregate on an input and keeps its result in nw.
func (st *store) fold(ctx context.Context, in *Record, nw *win, acc any) error {
	next, err := st.win.Aggregate(ctx, in, acc)
	if err != nil {
		return err
	}
	if next == nil {
		return errorf(ErrInvalidArgument, "the aggregate returned null: a window's aggregate is a value")
	}
	if st.buf, err = encodeState(st.buf[:0], next); err != nil {
		return err
	}
	nw.raw = append(nw.raw[:0], st.buf...) // nw's own buffer, when it has one
	nw.val, nw.has = nil, false
	if scalarState(next) {
		nw.val, nw.has = next, true
	}
	return nil
}

// result makes the outputs of window ws of key.
func (st *store) result(ctx context.Context, key any, ws *win, final bool) ([]StreamOutput, error) {
	acc, err := value(ws.raw, &ws.val, &ws.has)
	if err != nil {
		return nil, err
	}
	r := &WindowResult{Key: key, Start: ws.start, End: ws.end, Value: acc, Final: final}
	if st.win.Result != nil {
		return st.win.Result(ctx, r)
	}
	v := &List{}
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
// stream time reached: it removes them from the overlay (so the changelog
// tombstones them) and, under EmitOnClose, returns their results, in close
// time order. A Result error under StopOnError ends the batch with it;
// under the other policies the window's result is skipped (and counted).
func (st *store) closeDue(ctx context.Context, onError OnError, b *batchCounts) ([]StreamOutput, error) {
	var outs []StreamOutput
	for _, id := range slices.Sorted(maps.Keys(st.parts)) {
		p := st.parts[id]
		if p.restoring || p.btime < p.bminClose {
			continue
		}
		var due []closed
		next := int64(math.MaxInt64)
		visit := func(key string, sl *slot) {
			if sl == nil {
				return
			}
			var keep []*win
			for _, ws := range sl.wins {
				if at := st.win.closeAt(ws); at <= p.btime {
					due = append(due, closed{key, ws, at})
				} else {
					keep = append(keep, ws)
					next = min(next, at)
				}
			}
			if len(keep) < len(sl.wins) {
				p.dirty[key] = &slot{wins: keep}
			}
		}
		for key, sl := range p.slots {
			if _, ok := p.dirty[key]; !ok {
				visit(key, sl)
			}
		}
		for key, sl := range p.dirty {
			visit(key, sl)
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
func (st *store) decodeKey(key string) any {
	r := &Record{r: &kgo.Record{Topic: st.input, Key: []byte(key)}, cfg: st.cfg}
	return r.Key()
}
