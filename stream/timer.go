package stream

import (
	"container/heap"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Timers: a per-key stateful stream's calls for a key at a time, rather
// than for an input. A key's timer and its last input's wall-clock time
// are kept with its state, in the store and its changelog, so they are
// exactly once as the state is, and survive a restart and a takeover.

// TimerKind says what a timer's time is.
type TimerKind int8

const (
	// StreamTime timers fire when the stream time of the key's partition
	// (the latest input timestamp it has read) reaches their time: an
	// input's arrival fires them, not the clock.
	StreamTime TimerKind = iota
	// WallClock timers fire when the clock reaches their time, input or
	// not.
	WallClock
	// Silence is the call a key gets when it has had no input for the
	// stream's Silence duration, by the wall clock (see [Spec]).
	Silence
)

// String returns "stream-time", "wall-clock" or "silence".
func (k TimerKind) String() string {
	switch k {
	case WallClock:
		return "wall-clock"
	case Silence:
		return "silence"
	}
	return "stream-time"
}

// TimerEvent is a timer that fired.
type TimerEvent struct {
	Key       any       // the key, read with the stream's key deserializer
	Kind      TimerKind // how it was set; Silence for a silence
	At        time.Time // when it was due
	Partition int32     // the input partition that holds the key
}

// List returns the event as a BPL function gets it: ("key" => k "kind" =>
// "wall-clock" "at" => ms "partition" => n).
func (e *TimerEvent) List() *value.List {
	l := &value.List{}
	l.AppendNamed("key", e.Key)
	l.AppendNamed("kind", e.Kind.String())
	l.AppendNamed("at", e.At.UnixMilli())
	l.AppendNamed("partition", int64(e.Partition))
	return l
}

// OnTimer is a stateful stream's work when a key's timer fires, or when
// the key falls silent: like an [Update] without an input. It returns the
// outputs (their key, when they give none, is the timer's key) and the
// key's new state (nil deletes it). The timer that fired is gone unless
// OnTimer sets one again ([SetTimer]).
type OnTimer func(ctx context.Context, fired *TimerEvent, state any) (outs []Output, newState any, err error)

// SetTimer sets the timer of the key an Update or OnTimer is called for:
// a call of the stream's OnTimer once the key's partition's stream time
// (StreamTime) or the clock (WallClock) reaches at. A key has one timer;
// setting it again replaces it. ctx must be the one the stream passed to
// the function; the stream must have an OnTimer. A timer is kept with the
// key's state: one set by a batch that aborts is not set.
func SetTimer(ctx context.Context, kind TimerKind, at time.Time) error {
	c, err := timerCallOf(ctx)
	if err != nil {
		return err
	}
	if kind != StreamTime && kind != WallClock {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "timer kind %v: want StreamTime or WallClock", kind)
	}
	c.set, c.kind, c.at = true, kind, at.UnixMilli()
	return nil
}

// CancelTimer cancels the timer of the key an Update or OnTimer is called
// for, if it has one; see [SetTimer].
func CancelTimer(ctx context.Context) error {
	c, err := timerCallOf(ctx)
	if err != nil {
		return err
	}
	c.set, c.at = true, 0
	return nil
}

// timerCall is what SetTimer and CancelTimer change: the key in hand's
// timer, as the function leaves it. The run goroutine's alone.
type timerCall struct {
	active bool // an Update or OnTimer of a stream with timers is running
	set    bool // the function set or canceled the timer
	kind   TimerKind
	at     int64 // ms; 0: none
}

type timerKey struct{}

func timerCallOf(ctx context.Context) (*timerCall, error) {
	c, _ := ctx.Value(timerKey{}).(*timerCall)
	if c == nil || !c.active {
		return nil, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "timers: only the functions of a per-key stateful stream with an OnTimer (\"on-timer\") set timers, and this is none")
	}
	return c, nil
}

// timed is a key's stored value in a store with timers: its state, its
// timer, and its last input's wall-clock time.
type timed struct {
	state any
	kind  TimerKind
	at    int64 // the timer, ms; 0: none
	seen  int64 // the last input, wall-clock ms; 0: none since the silence call
}

// The names of a timed value's list, as the changelog keeps it.
const timedMark = "kafkabpl-timed"

func (t *timed) encode() any {
	if t.state == nil && t.at == 0 && t.seen == 0 {
		return nil // nothing to keep: the key goes
	}
	l := &value.List{}
	l.AppendNamed(timedMark, int64(1))
	l.AppendNamed("state", t.state)
	l.AppendNamed("kind", int64(t.kind))
	l.AppendNamed("at", t.at)
	l.AppendNamed("seen", t.seen)
	return l
}

// decodeTimed reads a stored value of a store with timers.
func decodeTimed(v any) (timed, error) {
	if v == nil {
		return timed{}, nil
	}
	l, ok := v.(*value.List)
	if mark, _ := l.Get(timedMark); !ok || mark == nil {
		return timed{}, kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, "the store holds a state written by a stream without timers; give a stream with timers a new store")
	}
	state, _ := l.Get("state")
	kind, _ := l.Get("kind")
	at, _ := l.Get("at")
	seen, _ := l.Get("seen")
	k, _ := kind.(int64)
	a, _ := at.(int64)
	s, _ := seen.(int64)
	return timed{state: state, kind: TimerKind(k), at: a, seen: s}, nil
}

// due is a time a key's partition will want it called: a heap entry, a
// hint checked against the key's stored value when it comes up.
type due struct {
	at      int64
	key     string
	silence bool // a silence's entry (one per key that has one); else a timer's
}

type dueHeap []due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// partTimers is a partition's due times: by stream time and by the clock
// (wall-clock timers and silences), and its stream time.
type partTimers struct {
	stream, wall dueHeap
	time         int64 // the latest input timestamp read, ms
}

// timers is a stream's timer index, per partition; rebuilt from the
// committed state when a partition is adopted and after an abort. The run
// goroutine's alone, but for the counts.
type timers struct {
	call    timerCall
	fire    OnTimer
	silence int64 // ms; 0: none
	parts   map[int32]*partTimers
	stale   bool         // an abort: rebuild every partition's index
	pending atomic.Int64 // entries in the heaps
	fired   atomic.Int64 // calls committed
}

func newTimers(spec *Spec) *timers {
	if spec.OnTimer == nil {
		return nil
	}
	return &timers{fire: spec.OnTimer, silence: spec.Silence.Milliseconds(), parts: map[int32]*partTimers{}}
}

// push adds a due time to partition pt's index.
func (ts *timers) push(pt *partTimers, streamTime bool, d due) {
	if streamTime {
		heap.Push(&pt.stream, d)
	} else {
		heap.Push(&pt.wall, d)
	}
	ts.pending.Add(1)
}

// noteTimer adds key's timer, as t holds it, to pt's index.
func (ts *timers) noteTimer(pt *partTimers, key string, t timed) {
	if t.at != 0 {
		ts.push(pt, t.kind == StreamTime, due{at: t.at, key: key})
	}
}

// noteSilence adds key's silence, as t holds it, to pt's index: a key has
// one such entry while its last input is not answered by a silence call
// yet; when it comes up, a later input puts it back later.
func (ts *timers) noteSilence(pt *partTimers, key string, t timed) {
	if ts.silence > 0 && t.seen != 0 {
		ts.push(pt, false, due{at: t.seen + ts.silence, key: key, silence: true})
	}
}

// rebuild makes partition id's index from its committed state.
func (ts *timers) rebuild(st *store.Store, id int32) error {
	if ts == nil {
		return nil
	}
	pt := &partTimers{}
	if old := ts.parts[id]; old != nil {
		pt.time = old.time
		ts.pending.Add(-int64(old.stream.Len() + old.wall.Len()))
	}
	ts.parts[id] = pt
	var derr error
	err := st.Range(id, nil, nil, func(key, raw []byte) bool {
		v, err := store.Decode(raw)
		if err == nil {
			var t timed
			if t, err = decodeTimed(v); err == nil {
				ts.noteTimer(pt, string(key), t)
				ts.noteSilence(pt, string(key), t)
			}
		}
		derr = err
		return err == nil
	})
	if err != nil {
		return err
	}
	return derr
}

// drop forgets partition id's index (it was revoked).
func (ts *timers) drop(id int32) {
	if ts == nil {
		return
	}
	if old := ts.parts[id]; old != nil {
		ts.pending.Add(-int64(old.stream.Len() + old.wall.Len()))
		delete(ts.parts, id)
	}
}

// update wraps an Update for a store with timers: it unwraps the key's
// state, lets SetTimer and CancelTimer act on the key's timer, and keeps
// the input's wall-clock time for the silence.
func (ts *timers) update(update Update) Update {
	return func(ctx context.Context, in *kafkabpl.Record, stored any) ([]Output, any, error) {
		t, err := decodeTimed(stored)
		if err != nil {
			return nil, nil, err
		}
		pt := ts.parts[in.Partition()]
		if pt == nil {
			pt = &partTimers{}
			ts.parts[in.Partition()] = pt
		}
		pt.time = max(pt.time, in.Timestamp().UnixMilli())
		ts.call = timerCall{active: true}
		outs, next, err := update(ctx, in, t.state)
		call := ts.call
		ts.call.active = false
		if err != nil {
			return nil, nil, err
		}
		key, _ := stateKey(in)
		t.state = next
		if call.set {
			t.kind, t.at = call.kind, call.at
			ts.noteTimer(pt, key, t)
		}
		if ts.silence > 0 {
			had := t.seen != 0
			t.seen = time.Now().UnixMilli()
			if !had {
				ts.noteSilence(pt, key, t)
			}
		}
		return outs, t.encode(), nil
	}
}

// wait returns how long until the earliest wall-clock due time of the
// held partitions (at most most, at least 10 ms); 0 when none is set.
func (ts *timers) wait(most time.Duration) time.Duration {
	if ts == nil {
		return 0
	}
	next := int64(-1)
	for _, pt := range ts.parts {
		if pt.wall.Len() > 0 && (next < 0 || pt.wall[0].at < next) {
			next = pt.wall[0].at
		}
	}
	if next < 0 {
		return 0
	}
	return min(max(time.Duration(next-time.Now().UnixMilli())*time.Millisecond, 10*time.Millisecond), most)
}

// anyDue tells whether a timer of a held partition is due now.
func (ts *timers) anyDue() bool {
	if ts == nil {
		return false
	}
	now := time.Now().UnixMilli()
	for _, pt := range ts.parts {
		if pt.wall.Len() > 0 && pt.wall[0].at <= now || pt.stream.Len() > 0 && pt.stream[0].at <= pt.time {
			return true
		}
	}
	return false
}

// fireDue calls OnTimer for every due timer and silence of the held
// partitions, in the batch in hand, handing each output to write.
func (s *stream) fireDue(b *batchCounts, write func(o Output) error) error {
	ts, st := s.timers, s.store
	if err := s.expireIntervals(b, write); err != nil {
		return err
	}
	if ts == nil {
		return nil
	}
	if err := s.rebuildStale(); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	for id, pt := range ts.parts {
		p := st.state.Part(id)
		if p == nil {
			continue
		}
		for _, h := range []*dueHeap{&pt.stream, &pt.wall} {
			limit := now
			if h == &pt.stream {
				limit = pt.time
			}
			for h.Len() > 0 && (*h)[0].at <= limit {
				d := heap.Pop(h).(due)
				ts.pending.Add(-1)
				if err := s.fireOne(p, pt, id, d, h == &pt.stream, now, b, write); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rebuildStale rebuilds every held partition's index from the committed
// state after an abort. process calls it before a batch's inputs, which
// add their keys' timers and silences to the index: a rebuild after them
// (from the committed state, which has none of the batch) lost the silence
// of a key first seen in the batch, once and for all, since its later
// inputs find it noted.
func (s *stream) rebuildStale() error {
	if s.store != nil {
		if err := s.store.interval.rebuildStale(s.store.state); err != nil {
			return err
		}
	}
	ts := s.timers
	if ts == nil || !ts.stale {
		return nil
	}
	for id := range ts.parts {
		if err := ts.rebuild(s.store.state, id); err != nil {
			return err
		}
	}
	ts.stale = false
	return nil
}

// fireOne calls OnTimer for key d.key if its stored value still has the
// due time d: a heap entry is a hint, and a later input or SetTimer may
// have moved it (a silence that moved later is put back).
func (s *stream) fireOne(p *store.Part, pt *partTimers, id int32, d due, streamTime bool, now int64, b *batchCounts, write func(o Output) error) error {
	ts, st := s.timers, s.store
	stored, err := st.state.State(p, d.key)
	if err != nil {
		return err
	}
	t, err := decodeTimed(stored)
	if err != nil {
		return err
	}
	var kind TimerKind
	switch {
	case d.silence && t.seen == 0:
		return nil // answered already, or the key is gone
	case d.silence && t.seen+ts.silence > now:
		ts.noteSilence(pt, d.key, t) // an input came since: later
		return nil
	case d.silence:
		kind = Silence
		t.seen = 0 // one call per silence: the next input starts another
	case t.at == d.at && (t.kind == StreamTime) == streamTime:
		kind = t.kind
		t.at = 0
	default:
		return nil // moved or canceled
	}
	key := st.decodeKey(d.key)
	ev := &TimerEvent{Key: key, Kind: kind, At: time.UnixMilli(d.at), Partition: id}
	ts.call = timerCall{active: true}
	outs, next, err := ts.fire(s.workCtx, ev, t.state)
	call := ts.call
	ts.call.active = false
	if err != nil {
		return fmt.Errorf("the %s timer of key %v (partition %d): %w", kind, key, id, err)
	}
	t.state = next
	if call.set {
		t.kind, t.at = call.kind, call.at
		ts.noteTimer(pt, d.key, t)
	}
	if err := st.state.SetState(p, d.key, t.encode()); err != nil {
		return err
	}
	for _, o := range outs {
		if err := write(o); err != nil {
			return err
		}
	}
	b.produced += int64(len(outs))
	b.fired++
	return nil
}

// writeOutput returns the function that serializes an output of no input
// (a timer's, an interval join's expiry's) and hands it to write.
func (s *stream) writeOutput(write func(*kgo.Record)) func(Output) error {
	n := 0
	return func(o Output) error {
		n++
		r, err := s.record(o, n)
		if err != nil {
			return fmt.Errorf("an output of no input (a timer's, or an interval join's unmatched record's): %w", err)
		}
		write(r)
		return nil
	}
}

// abortState puts back what the batch changed in the store, and marks the
// timers' index for a rebuild from the committed state.
func (s *stream) abortState() {
	s.store.abort()
	if s.timers != nil {
		s.timers.stale = true
	}
	if s.store != nil && s.store.interval != nil {
		s.store.interval.stale = true
	}
}

// checkTimers validates a spec's OnTimer and Silence.
func (spec *Spec) checkTimers() error {
	switch {
	case spec.Silence < 0:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"silence" %v: want a positive duration`, spec.Silence)
	case spec.Silence > 0 && spec.OnTimer == nil:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"silence" %v: a silence calls the stream's "on-timer" function, and it has none`, spec.Silence)
	case spec.OnTimer != nil && spec.Update == nil:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"on-timer": timers are a per-key stateful stream's (a "store" and a "transform" of the input and its state); this stream is %s`, spec.kind())
	}
	return nil
}

// kind names what kind of stream spec makes, for errors.
func (spec *Spec) kind() string {
	switch {
	case spec.Window != nil:
		return "windowed"
	case spec.Interval != nil:
		return "interval join"
	case spec.Update != nil:
		return "stateful"
	}
	return "stateless"
}
