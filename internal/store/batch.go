package store

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/brain4it/kafkabpl/value"
)

// A batch changes the state in place and logs, per key and per window it
// touches, what it was before: the commit drops the log, and an abort
// puts back what it says.

// cell is an encoded state value, and its decoding when immutable.
type cell struct {
	raw   []byte // nil: none
	val   any    // the owner's alone: others read raw only
	has   bool
	wrote uint64 // the batch that wrote raw
}

// slot is one key's state: its value in a per-key store; its open
// windows, in start order, in a windowed one.
type slot struct {
	key     string
	cell              // per-key stores
	wins    []*Window // windowed stores; those the batch closed stay until the commit
	spare   []byte    // a buffer for the next batch's encoding (see change)
	touched uint64    // the batch that logged it last
	log     int       // where in its part's log, when touched by the batch in hand
	born    uint64    // the batch that made it
	marked  uint64    // a windowed store on disk: the batch that wrote its marker (see writeMarker)
}

// Window is one open window of a key. Fold and CloseDue hand windows to
// the run goroutine, which may read them until the batch ends.
type Window struct {
	start, end int64 // ms; a session's end is its last input's time
	cell
	spare                 []byte
	touched, born, closed uint64 // the batch that logged it last, made it, closed it
	log                   int    // where in its part's log, when touched by the batch in hand
}

// Start returns the window's start, in ms since the Unix epoch: a
// session's first input's time.
func (w *Window) Start() int64 { return w.start }

// End returns the window's end, in ms since the Unix epoch: past its
// last millisecond for a time window; a session's last input's time.
func (w *Window) End() int64 { return w.end }

// Value returns the window's aggregate, decoded: the caller's own copy
// when it is a list or bytes.
func (w *Window) Value() (any, error) { return w.value() }

// change is what a batch's log holds of one slot, or one window (w
// non-nil), it touched: its cell before the batch. The encoding a batch
// writes goes into a buffer of its own (never one a changelog record of
// the batch may still be sending), and the one it replaced becomes the
// spare for the batch after, by when its record was acknowledged: a
// commit comes only after every record of its batch was.
type change struct {
	sl  *slot
	w   *Window
	old cell
}

// value returns c's decoded value, caching an immutable one; lists are
// decoded anew each time, so no caller can change another's.
func (c *cell) value() (any, error) {
	if c.has {
		return c.val, nil
	}
	v, err := Decode(c.raw)
	if err != nil {
		return nil, err
	}
	if scalar(v) {
		c.val, c.has = v, true
	}
	return v, nil
}

// scalar tells whether v is immutable, so that a decoded value may be
// kept and handed out again: everything but lists and bytes.
func scalar(v any) bool {
	switch v.(type) {
	case *value.List, []byte:
		return false
	}
	return true
}

// logSlot logs sl's state before the batch's first change of it; the
// caller holds p.mu.
func (s *Store) logSlot(p *Part, sl *slot) {
	if sl.touched == s.batch {
		return
	}
	sl.touched, sl.log = s.batch, len(p.changes)
	p.changes = append(p.changes, change{sl: sl, old: sl.cell})
	if p.open != s.batch {
		p.open = s.batch
		s.dirty = append(s.dirty, p)
	}
}

// logWin logs window w of sl before the batch's first change of it; the
// caller holds p.mu.
func (s *Store) logWin(p *Part, sl *slot, w *Window) {
	s.logSlot(p, sl)
	if w.touched != s.batch {
		w.touched, w.log = s.batch, len(p.changes)
		p.changes = append(p.changes, change{sl: sl, w: w, old: w.cell})
	}
}

// write sets c, logged already, to enc, whose value is v: in the buffer
// the batch wrote c in before, or else in *spare (taken). Never in the
// buffer c had before the batch, which its change keeps.
func (s *Store) write(c *cell, spare *[]byte, enc []byte, v any) {
	buf := *spare
	if c.wrote == s.batch {
		buf = c.raw
	} else {
		*spare = nil
	}
	c.raw, c.wrote = append(buf[:0], enc...), s.batch
	c.val, c.has = nil, false
	if scalar(v) {
		c.val, c.has = v, true
	}
}

// State returns key's state in p (a per-key store's), as the batch in
// hand left it: nil when it has none. Run goroutine only.
func (s *Store) State(p *Part, key string) (any, error) {
	sl, err := s.load(p, key)
	if err != nil {
		return nil, fmt.Errorf("the state of key %q: %w", key, err)
	}
	if sl == nil || sl.raw == nil {
		return nil, nil
	}
	v, err := sl.value()
	if err != nil {
		return nil, fmt.Errorf("the state of key %q: %w", key, err)
	}
	return v, nil
}

// SetState sets key's state in p (a per-key store's) in the batch in
// hand: nil deletes it. A value that has no encoding (see [Encode])
// changes nothing. Run goroutine only.
func (s *Store) SetState(p *Part, key string, v any) error {
	sl, err := s.load(p, key)
	if err != nil {
		return fmt.Errorf("the state of key %q: %w", key, err)
	}
	if v == nil {
		if sl != nil && sl.raw != nil {
			p.mu.Lock()
			s.logSlot(p, sl)
			sl.cell = cell{} // the slot stays, empty, until the commit
			p.mu.Unlock()
		}
		return nil
	}
	enc, err := Encode(s.buf[:0], v)
	s.buf = enc
	if err != nil {
		return err
	}
	p.mu.Lock()
	if sl == nil {
		sl = &slot{key: key, born: s.batch}
		p.slots[key] = sl
		if s.disk != nil {
			s.touch(p)
		}
	}
	s.logSlot(p, sl)
	s.write(&sl.cell, &sl.spare, enc, v)
	p.mu.Unlock()
	return nil
}

// timeKey is the changelog key of a windowed store's stream time: shorter
// than any window's key (the input key and 16 bytes), so it cannot clash.
const timeKey = "stream-time"

// Changelog hands emit the changelog records of the batch in hand: a
// record per changed key (or window), a tombstone (a nil value) per
// deleted one (but for those the batch made), and a windowed store's
// stream time when it moved. A record's key and value are the store's
// until the batch after the next one begins: the caller may send them as
// they are. Run goroutine only.
func (s *Store) Changelog(emit func(partition int32, key, value []byte)) {
	for _, p := range s.dirty {
		for _, c := range p.changes {
			switch {
			case c.w != nil:
				if c.w.closed != s.batch {
					emit(p.id, windowKey(c.sl.key, c.w.start, c.w.end), c.w.raw)
				} else if c.w.born != s.batch {
					emit(p.id, windowKey(c.sl.key, c.w.start, c.w.end), nil)
				}
			case s.win == nil:
				if c.sl.raw != nil {
					emit(p.id, []byte(c.sl.key), c.sl.raw)
				} else if c.old.raw != nil {
					emit(p.id, []byte(c.sl.key), nil)
				}
			}
		}
	}
	if s.win == nil {
		return
	}
	for _, p := range s.parts {
		if p.btime != p.time {
			emit(p.id, []byte(timeKey), binary.BigEndian.AppendUint64(nil, uint64(p.btime)))
		}
	}
}

// windowKey is a window's changelog key: the input key, then the window's
// start and end, 8 bytes each, big-endian. Made as the record's bytes
// (not a string converted again: an allocation per changelog record).
func windowKey(key string, start, end int64) []byte {
	b := make([]byte, 0, len(key)+16)
	b = append(b, key...)
	b = binary.BigEndian.AppendUint64(b, uint64(start))
	b = binary.BigEndian.AppendUint64(b, uint64(end))
	return b
}

// Commit makes the batch's changes the committed state, and ends the
// batch. A disk store writes them, with the positions SetPosition set,
// to the disk in one batch: an error says that write failed, and the
// disk holds the state it held before (the changelog holds the batch).
// Run goroutine only.
func (s *Store) Commit() error { return s.end(true) }

// Abort puts back what the batch changed, as its log says, and ends the
// batch. Run goroutine only.
func (s *Store) Abort() { s.end(false) }

// end ends the batch, committed or aborted: each part it changed first,
// under the part's lock, then the held parts' stream times move on
// (committed) or back. The batch's marks are stale from now on.
func (s *Store) end(committed bool) error {
	s.stopPrefetch() // before the disk changes
	for _, p := range s.dirty {
		p.mu.Lock()
		if committed {
			s.commit(p)
		} else {
			s.abort(p)
		}
		p.mu.Unlock()
	}
	for _, p := range s.parts {
		if committed {
			p.time, p.minClose = p.btime, p.bminClose
		} else {
			p.btime, p.bminClose = p.time, p.minClose
			p.posSet = false // an aborted batch's position is not reached
		}
	}
	var err error
	if s.disk != nil && committed {
		err = s.writeDisk() // the changes, counts and times commit made
	}
	for _, p := range s.dirty {
		p.mu.Lock()
		clear(p.changes)
		p.changes = p.changes[:0]
		p.open = 0
		p.mu.Unlock()
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
	s.batch++
	if s.disk != nil {
		s.unload()
	}
	return err
}

// commit makes the batch's changes of p committed: it counts them, drops
// the keys and windows the batch deleted or closed, and keeps each
// replaced encoding as its slot's or window's spare. The caller holds
// p.mu.
func (s *Store) commit(p *Part) {
	b := s.batch
	for _, c := range p.changes {
		sl := c.sl
		switch {
		case c.w != nil:
			w := c.w
			if w.born != b {
				p.windows--
				p.bytes -= int64(len(sl.key) + 16 + len(c.old.raw))
			}
			if w.closed != b {
				p.windows++
				p.bytes += int64(len(sl.key) + 16 + len(w.raw))
			}
			if w.wrote == b && c.old.raw != nil {
				w.spare = c.old.raw
			}
		case s.win == nil:
			if c.old.raw != nil {
				p.keys--
				p.bytes -= int64(len(sl.key) + len(c.old.raw))
			}
			if sl.raw == nil {
				delete(p.slots, sl.key)
				continue
			}
			p.keys++
			p.bytes += int64(len(sl.key) + len(sl.raw))
			if sl.wrote == b && c.old.raw != nil {
				sl.spare = c.old.raw
			}
		default: // a windowed key: its closed windows go
			if sl.born != b {
				p.keys--
			}
			sl.wins = slices.DeleteFunc(sl.wins, func(w *Window) bool { return w.closed == b })
			if len(sl.wins) == 0 {
				delete(p.slots, sl.key)
			} else {
				p.keys++
			}
		}
	}
}

// abort puts back what the batch changed of p; the caller holds p.mu.
func (s *Store) abort(p *Part) {
	b := s.batch
	for _, c := range p.changes {
		switch {
		case c.w != nil:
			c.w.cell = c.old
		case s.win == nil:
			c.sl.cell = c.old
		default:
			c.sl.wins = slices.DeleteFunc(c.sl.wins, func(w *Window) bool { return w.born == b })
		}
		if c.w == nil && c.sl.born == b {
			delete(p.slots, c.sl.key)
		}
	}
}

// count adds (sign 1) or removes (-1) a committed slot's share of p's
// counts; the caller holds p.mu.
func (s *Store) count(p *Part, sl *slot, sign int64) {
	p.keys += sign
	if s.win == nil {
		p.bytes += sign * int64(len(sl.key)+len(sl.raw))
		return
	}
	for _, w := range sl.wins {
		p.windows += sign
		p.bytes += sign * int64(len(sl.key)+16+len(w.raw))
	}
}
