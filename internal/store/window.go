package store

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Windowed state: per key, an aggregate per window of time, timed by the
// inputs' timestamps. A partition's stream time is the latest input
// timestamp it has seen; a window closes when the stream time passes its
// end by the grace period, and an input for a closed window is late.

// WindowSpec is how a windowed store cuts time. The caller checks it: a
// Size, Advance or Gap in use is 1 ms or more, and Advance is at most
// Size.
type WindowSpec struct {
	// Time windows (Session false) are Size long, and one starts every
	// Advance ms from the Unix epoch: back to back when Advance is Size
	// (tumbling), overlapping when it is less (hopping).
	Size, Advance time.Duration
	// Session windows group a key's inputs that come at most Gap apart:
	// an input joins the key's session when it is at most Gap before the
	// session's first input or after its last, and one that bridges two
	// sessions merges them. A session closes once stream time passes its
	// last input by more than Gap and Grace together: until then an
	// input could still join it.
	Session bool
	Gap     time.Duration
	// Grace is how far the stream time may pass a window's end before
	// the window closes.
	Grace time.Duration
	// Idle, when positive, moves on the stream time of a partition that
	// had no input for Idle, with the wall clock (see Store.Idle).
	Idle time.Duration
}

// closeAt is the stream time at which a window ending at end closes. A
// time window's end is past its last millisecond; a session's end is its
// last input, and an input Gap after it still joins it.
func (w *WindowSpec) closeAt(end int64) int64 {
	if w.Session {
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
	w          *Window // the window, nil for a new one
	start, end int64
	enc        []byte // the aggregate's encoding, in the fold's buffer, reused input after input
	val        any
	merged     []*Window // a session's: the sessions it replaces
}

// Fold folds an input of key at time t (ms since the Unix epoch) into
// its windows in p (a windowed store's) that are open at the stream time
// it makes, in the batch in hand: agg returns a window's new aggregate
// given its current one (nil for a new window), and merge (sessions)
// merges the aggregates of two sessions the input bridges, the earlier
// first. It returns the windows the input went into, in a slice the next
// Fold reuses. An error of agg or merge, or of a state that does not
// decode, leaves the windows as they were; so does an input whose
// windows all closed, which is an ErrLate. Run goroutine only; no lock
// is held while agg and merge run.
func (s *Store) Fold(p *Part, key []byte, t int64, agg func(acc any) (any, error), merge func(a, b any) (any, error)) ([]*Window, error) {
	now := max(p.btime, t) // the stream time, this input included
	// The key's bytes index the map as they are (a lookup with
	// string(key) allocates nothing); a string is made only for a new
	// key.
	sl := p.slots[string(key)]
	if sl == nil && s.disk != nil {
		var err error
		if sl, err = s.loadWindows(p, string(key)); err != nil {
			return nil, fmt.Errorf("the windows of key %q: %w", key, err)
		}
	}
	s.folds = s.folds[:0]
	var err error
	if s.win.Session {
		err = s.session(key, sl, t, now, agg, merge)
	} else {
		err = s.timeWindows(key, sl, t, now, agg)
	}
	if err != nil {
		return nil, err
	}
	if len(s.folds) == 0 {
		return nil, fmt.Errorf("%w: timestamp %d, and the stream time %d passed the close of its windows (grace %v)", ErrLate, t, now, s.win.Grace)
	}
	// The input counts: keep its aggregates and the time.
	s.wins = s.wins[:0]
	p.mu.Lock()
	if sl == nil {
		sl = &slot{key: string(key), born: s.batch}
		p.slots[sl.key] = sl
		if s.disk != nil {
			s.touch(p)
		}
	}
	for i := range s.folds {
		f := &s.folds[i]
		f.w = s.keep(p, sl, f)
		p.bminClose = min(p.bminClose, s.win.closeAt(f.w.end))
		s.wins = append(s.wins, f.w)
	}
	p.mu.Unlock()
	p.btime = now
	return s.wins, nil
}

// addFold returns a new fold for the input in hand, with the buffer the
// fold in its place had for an earlier input.
func (s *Store) addFold() *fold {
	if len(s.folds) < cap(s.folds) {
		s.folds = s.folds[:len(s.folds)+1]
	} else {
		s.folds = append(s.folds, fold{})
	}
	f := &s.folds[len(s.folds)-1]
	*f = fold{enc: f.enc[:0]}
	return f
}

// keep writes a fold into key slot sl of p, making its window if it is
// new and closing the sessions it merged, and returns the window; the
// caller holds p.mu.
func (s *Store) keep(p *Part, sl *slot, f *fold) *Window {
	w := f.w
	if w == nil {
		w = &Window{start: f.start, end: f.end, born: s.batch}
		i, _ := slices.BinarySearchFunc(sl.wins, w.start, func(o *Window, s int64) int { return cmp.Compare(o.start, s) })
		sl.wins = slices.Insert(sl.wins, i, w)
	}
	s.logWin(p, sl, w)
	s.write(&w.cell, &w.spare, f.enc, f.val)
	for _, m := range f.merged {
		s.logWin(p, sl, m)
		m.closed = s.batch
	}
	return w
}

// timeWindows folds an input at t into its tumbling or hopping windows
// that are still open at stream time now, a fold each (none when all of
// them closed: the input is late).
func (s *Store) timeWindows(key []byte, sl *slot, t, now int64, agg func(any) (any, error)) error {
	size, adv := s.win.Size.Milliseconds(), s.win.Advance.Milliseconds()
	first := floorDiv(t-size, adv)*adv + adv // the earliest start whose window holds t
	for start := first; start <= t; start = satAdd(start, adv) {
		end := satAdd(start, size)
		if s.win.closeAt(end) <= now {
			continue // closed: this input is late for it
		}
		var acc any
		f := s.addFold()
		f.start, f.end = start, end
		if sl != nil {
			if i := slices.IndexFunc(sl.wins, func(o *Window) bool { return o.start == start && o.closed != s.batch }); i >= 0 {
				f.w = sl.wins[i]
				var err error
				if acc, err = f.w.value(); err != nil {
					return fmt.Errorf("the window of key %q at %d: %w", key, start, err)
				}
			}
		}
		if err := s.aggregate(f, acc, agg); err != nil {
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
func (s *Store) session(key []byte, sl *slot, t, now int64, agg func(any) (any, error), merge func(a, b any) (any, error)) error {
	gap := s.win.Gap.Milliseconds()
	start, end := t, t
	var merged []*Window
	var acc any
	if sl != nil {
		for _, o := range sl.wins { // in start order
			if o.closed == s.batch || s.win.closeAt(o.end) <= now || satAdd(t, gap) < o.start || satAdd(o.end, gap) < t {
				continue
			}
			a, err := o.value()
			if err != nil {
				return fmt.Errorf("the session of key %q at %d: %w", key, o.start, err)
			}
			if len(merged) == 0 {
				acc = a
			} else if acc, err = merge(acc, a); err != nil {
				return err
			}
			merged = append(merged, o)
			start, end = min(start, o.start), max(end, o.end)
		}
	}
	if len(merged) == 0 && s.win.closeAt(end) <= now {
		return nil
	}
	f := s.addFold()
	f.start, f.end = start, end
	if len(merged) == 1 && merged[0].start == start && merged[0].end == end {
		f.w = merged[0] // within the session: it stays, changed
	} else {
		f.merged = merged
	}
	return s.aggregate(f, acc, agg)
}

// aggregate runs agg on a window's aggregate and keeps its result in f.
func (s *Store) aggregate(f *fold, acc any, agg func(any) (any, error)) error {
	next, err := agg(acc)
	if err != nil {
		return err
	}
	if next == nil {
		return errorf(ErrInvalidArgument, "the aggregate returned null: a window's aggregate is a value")
	}
	if f.enc, err = Encode(f.enc, next); err != nil {
		return err
	}
	f.val = next
	return nil
}

// closed is a window that closed in a batch.
type closed struct {
	key string
	w   *Window
	at  int64
}

// CloseDue closes, in the batch in hand, the windows of every held
// partition whose close time the stream time reached (so that the
// changelog tombstones them and the commit drops them), and hands each
// to fn with its key, partition by partition in id order, in close time
// order within one; nil fn closes them only. An error of fn ends
// CloseDue with it: the batch is to be aborted. Run goroutine only; no
// lock is held while fn runs.
func (s *Store) CloseDue(fn func(key string, w *Window) error) error {
	for _, id := range slices.Sorted(maps.Keys(s.parts)) {
		p := s.parts[id]
		if p.btime < p.bminClose {
			continue
		}
		var due []closed
		next := int64(math.MaxInt64)
		if s.disk != nil { // the due windows' keys come from the disk's index
			var err error
			if next, err = s.loadDue(p); err != nil {
				return fmt.Errorf("partition %d's windows due: %w", id, err)
			}
		}
		p.mu.Lock()
		for _, sl := range p.slots {
			for _, w := range sl.wins {
				if w.closed == s.batch {
					continue
				}
				if at := s.win.closeAt(w.end); at <= p.btime {
					s.logWin(p, sl, w)
					w.closed = s.batch
					due = append(due, closed{sl.key, w, at})
				} else {
					next = min(next, at)
				}
			}
		}
		p.mu.Unlock()
		p.bminClose = next
		if fn == nil {
			continue
		}
		slices.SortFunc(due, func(a, b closed) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.w.start, b.w.start), cmp.Compare(a.key, b.key))
		})
		for _, c := range due {
			if err := fn(c.key, c.w); err != nil {
				return err
			}
		}
	}
	return nil
}

// Closing tells whether a windowed store has windows to close although
// no input came (its stream time moved on idle). Run goroutine only.
func (s *Store) Closing() bool {
	if s.win == nil {
		return false
	}
	for _, p := range s.parts {
		if p.btime >= p.bminClose {
			return true
		}
	}
	return false
}

// Idle moves on, in the batch in hand, the stream time of the held
// partitions that had no input for the window's Idle, by the wall-clock
// time since it last moved. Run goroutine only.
func (s *Store) Idle(now time.Time) {
	if s.win == nil || s.win.Idle <= 0 {
		return
	}
	for _, p := range s.parts {
		if p.btime == noTime || now.Sub(p.idleFrom) < s.win.Idle {
			continue
		}
		p.btime = satAdd(p.btime, now.Sub(p.idleFrom).Milliseconds())
		p.idleFrom = now
	}
}
