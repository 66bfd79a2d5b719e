package kafkabpl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Stateful streams: the state a stream keeps per key (or per key and
// window), held in memory per input partition and written to a compacted
// changelog topic in the same transaction as the outputs and the input
// offsets. A batch changes an overlay of the partition's state, which the
// commit folds in and an abort drops, so an aborted batch leaves no trace.

// Update is a stateful stream's work on one input record: given the input
// and its key's state (nil at first, and after a nil state deleted it), it
// returns the messages to write and the key's new state; a nil state
// deletes the key. An error leaves the state as it was and goes to the
// stream's OnError policy.
//
// State values are data: nil, bool, int64, float64, string, []byte,
// [Reference] and *List of them (Go numbers, []any and map[string]any are
// converted). They are kept exactly (3.0 stays a float, a []byte stays
// bytes). Hazard: a *List state handed to Update is the update's own copy;
// changing it in place changes nothing until Update returns it.
type Update func(ctx context.Context, in *Record, state any) (outs []StreamOutput, newState any, err error)

// StoreStatus is a stateful stream's store as this process holds it.
type StoreStatus struct {
	Name         string // the store's name
	Changelog    string // its changelog topic, "<group>-<store>-changelog"
	Partitions   int    // input partitions whose state this process holds (restored or restoring)
	Keys         int64  // keys held: with a state, or with an open window
	Windows      int64  // open windows (windowed streams)
	Bytes        int64  // the keys and encoded states held, in bytes
	Restoring    int    // partitions being restored
	RestoreRead  int64  // changelog offsets the restores in progress have read
	RestoreTotal int64  // changelog offsets they read in all
	Restored     int64  // changelog records applied by restores, since the stream started
	Late         int64  // inputs later than the grace period (windowed streams), dropped or dead-lettered
}

// noTime is a partition's stream time before its first record.
const noTime = math.MinInt64

// timeKey is the changelog key of a windowed store's stream time: shorter
// than any window's key (the input key and 16 bytes), so it cannot clash.
const timeKey = "stream-time"

// store is a stateful stream's state.
type store struct {
	name, topic, input string
	win                *Window // nil: per-key state
	cfg                *config

	mu       sync.Mutex       // guards parts (the map; the run goroutine owns the contents), assigned, gen, wake
	parts    map[int32]*part  // partitions held
	assigned map[int32]uint64 // the group's assignment: partition → the generation it was assigned in
	gen      uint64
	wake     context.CancelFunc // ends the run goroutine's poll, to restore what was assigned
	checked  bool               // the changelog topic was checked (run goroutine only)

	late, restored atomic.Int64

	changed, gone []*win // a windowed transform's scratch (run goroutine only)
	batch         uint64 // the batch in hand, counted from 1 (run goroutine only)
	buf           []byte // an aggregate's encoding, before it is copied into its window
}

// part is the state of one input partition.
type part struct {
	id     int32
	gen    uint64             // the assignment it was restored under
	cancel context.CancelFunc // ends its restore (a revocation)

	// Committed state, written by the run goroutine only.
	slots    map[string]*slot
	time     int64 // stream time: the latest input timestamp, in ms, or noTime
	minClose int64 // no window closes before this stream time
	idleFrom time.Time

	// Under the store's mu: what status reports.
	restoring            bool
	read, total          int64
	keys, windows, bytes int64

	// The batch's overlay: changed keys (a nil slot: deleted), stream time
	// and the lowest close time of a window it changed.
	dirty     map[string]*slot
	btime     int64
	bminClose int64
}

// slot is one key's state: its encoding (and the value, when immutable)
// in a per-key store; its open windows, in start order, in a windowed one.
type slot struct {
	raw  []byte
	val  any
	has  bool
	wins []*win
}

// win is one open window of a key.
type win struct {
	start, end int64 // ms; a session's end is its last input's time
	raw        []byte
	val        any
	has        bool
	batch      uint64 // the batch that made it: while that batch runs, the window is its own to change
}

func newStore(cfg *config, spec *StreamSpec) *store {
	return &store{
		name: spec.Store, topic: cfg.group + "-" + spec.Store + "-changelog", input: spec.From[0],
		win: spec.Window, cfg: cfg, parts: map[int32]*part{}, assigned: map[int32]uint64{}, batch: 1,
	}
}

func newPart(id int32, gen uint64) *part {
	return &part{id: id, gen: gen, slots: map[string]*slot{}, time: noTime, minClose: math.MaxInt64,
		dirty: map[string]*slot{}, btime: noTime, bminClose: math.MaxInt64}
}

// value returns the decoded value of an encoding, caching immutable ones
// in *val; lists are decoded anew each time, so no caller can change
// another's.
func value(raw []byte, val *any, has *bool) (any, error) {
	if *has {
		return *val, nil
	}
	v, err := decodeState(raw)
	if err != nil {
		return nil, err
	}
	if scalarState(v) {
		*val, *has = v, true
	}
	return v, nil
}

// current returns key's slot as the batch sees it, nil if none.
func (p *part) current(key string) *slot {
	if sl, ok := p.dirty[key]; ok {
		return sl
	}
	return p.slots[key]
}

// state returns key's state as the batch sees it.
func (p *part) state(key string) (any, error) {
	sl := p.current(key)
	if sl == nil {
		return nil, nil
	}
	v, err := value(sl.raw, &sl.val, &sl.has)
	if err != nil {
		return nil, fmt.Errorf("the state of key %q: %w", key, err)
	}
	return v, nil
}

// setState sets key's state in the batch's overlay: nil deletes it.
func (p *part) setState(key string, v any) error {
	if v == nil {
		p.dirty[key] = nil
		return nil
	}
	raw, err := encodeState(nil, v)
	if err != nil {
		return err
	}
	sl := &slot{raw: raw}
	if scalarState(v) {
		sl.val, sl.has = v, true
	}
	p.dirty[key] = sl
	return nil
}

// changelog writes the batch's changes to the changelog with write: a
// record per changed key (or window), a tombstone per deleted one, and a
// windowed store's stream time when it moved.
func (st *store) changelog(write func(*kgo.Record)) {
	for _, p := range st.parts {
		rec := func(key []byte, raw []byte) {
			write(&kgo.Record{Topic: st.topic, Partition: p.id, Key: key, Value: raw})
		}
		for key, sl := range p.dirty {
			if st.win == nil {
				if sl != nil {
					rec([]byte(key), sl.raw)
				} else if p.slots[key] != nil {
					rec([]byte(key), nil)
				}
				continue
			}
			var now []*win
			if sl != nil {
				now = sl.wins
			}
			var before []*win
			if old := p.slots[key]; old != nil {
				before = old.wins
			}
			for _, w := range now {
				if !slices.Contains(before, w) { // new or changed: a changed window is a new *win
					rec(windowKey(key, w.start, w.end), w.raw)
				}
			}
			for _, w := range before {
				if !slices.ContainsFunc(now, func(n *win) bool { return n.start == w.start && n.end == w.end }) {
					rec(windowKey(key, w.start, w.end), nil)
				}
			}
		}
		if st.win != nil && p.btime != p.time {
			rec([]byte(timeKey), binary.BigEndian.AppendUint64(nil, uint64(p.btime)))
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

// commit folds the batch's overlay into the committed state.
func (st *store) commit() {
	if st == nil {
		return
	}
	st.batch++ // the batch's windows are committed state now
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range st.parts {
		for key, sl := range p.dirty {
			// A lookup, then an overwrite or a delete (not forget's
			// delete before every insert).
			old := p.slots[key]
			if old != nil {
				p.count(key, old, -1)
			}
			if sl != nil && (st.win == nil || len(sl.wins) > 0) {
				p.slots[key] = sl
				p.count(key, sl, 1)
			} else if old != nil {
				delete(p.slots, key)
			}
		}
		clear(p.dirty)
		p.time, p.minClose = p.btime, p.bminClose
	}
}

// forget removes key's committed state, and its counts.
func (p *part) forget(key string) {
	if old := p.slots[key]; old != nil {
		p.count(key, old, -1)
		delete(p.slots, key)
	}
}

// count adds (sign 1) or removes (-1) a slot's share of the counts.
func (p *part) count(key string, sl *slot, sign int64) {
	p.keys += sign
	if sl.wins == nil {
		p.bytes += sign * int64(len(key)+len(sl.raw))
		return
	}
	for _, w := range sl.wins {
		p.windows += sign
		p.bytes += sign * int64(len(key)+16+len(w.raw))
	}
}

// abort drops the batch's overlay.
func (st *store) abort() {
	if st == nil {
		return
	}
	st.batch++
	for _, p := range st.parts {
		clear(p.dirty)
		p.btime, p.bminClose = p.time, p.minClose
	}
}

// closing tells whether a windowed store has windows to close although
// no input came (its stream time moved on idle).
func (st *store) closing() bool {
	if st == nil || st.win == nil {
		return false
	}
	for _, p := range st.parts {
		if !p.restoring && p.btime >= p.bminClose {
			return true
		}
	}
	return false
}

// endBatch ends a batch of a stateful stream: it writes the results of the
// windows that closed and the changelog records of the batch's changes.
// Under at-least-once, flush (non-nil) waits for the batch's outputs to be
// acknowledged before any changelog record is written: a changelog record
// that landed while an output did not would, after a crash, restore a
// state that the output's input, read again, no longer produces the output
// from (a window closed whose result was lost, a count gone past the one
// lost). Under exactly-once the transaction writes all or nothing: nil.
func (s *stream) endBatch(b *batchCounts, write func(*kgo.Record), flush func() error) error {
	st := s.store
	if st == nil {
		return nil
	}
	if st.win != nil {
		outs, err := st.closeDue(s.workCtx, s.spec.OnError, b)
		if err != nil {
			return err
		}
		for i, o := range outs {
			r, err := s.record(o, i+1)
			if err != nil {
				return fmt.Errorf("a window's result: %w", err)
			}
			write(r)
		}
		b.produced += int64(len(outs))
	}
	if flush != nil {
		if err := flush(); err != nil {
			return err
		}
	}
	st.changelog(write)
	return nil
}

// pollContext returns the context of the run goroutine's next poll.
func (s *stream) pollContext() (context.Context, context.CancelFunc) {
	if s.store == nil {
		return s.pollCtx, func() {}
	}
	var wait time.Duration
	if w := s.store.win; w != nil && w.Idle > 0 {
		wait = min(max(w.Idle/2, 10*time.Millisecond), time.Second)
	}
	return s.store.pollContext(s.pollCtx, wait)
}

// status reports the store.
func (st *store) status() *StoreStatus {
	ss := &StoreStatus{Name: st.name, Changelog: st.topic, Restored: st.restored.Load(), Late: st.late.Load()}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range st.parts {
		ss.Partitions++
		ss.Keys += p.keys
		ss.Windows += p.windows
		ss.Bytes += p.bytes
		if p.restoring {
			ss.Restoring++
			ss.RestoreRead += p.read
			ss.RestoreTotal += p.total
		}
	}
	return ss
}

// List returns the status as kafka-stream-status shows it under "store".
func (ss *StoreStatus) List() *List {
	l := &List{}
	l.AppendNamed("name", ss.Name)
	l.AppendNamed("changelog", ss.Changelog)
	l.AppendNamed("partitions", int64(ss.Partitions))
	l.AppendNamed("keys", ss.Keys)
	l.AppendNamed("windows", ss.Windows)
	l.AppendNamed("bytes", ss.Bytes)
	l.AppendNamed("restoring", int64(ss.Restoring))
	l.AppendNamed("restore-read", ss.RestoreRead)
	l.AppendNamed("restore-total", ss.RestoreTotal)
	l.AppendNamed("restored", ss.Restored)
	l.AppendNamed("late", ss.Late)
	return l
}

// partOf returns the state of in's partition, which the run goroutine
// restored before handing in over.
func (st *store) partOf(in *Record) (*part, error) {
	p := st.parts[in.Partition()]
	if p == nil || p.restoring {
		return nil, errNotHeld
	}
	return p, nil
}

// errNotHeld is the failure of an input whose partition was revoked while
// its batch was in hand; the batch is aborted (see stream.transact).
var errNotHeld = errors.New("the input's partition is no longer held")

// stateKey is an input's key as a store keys it: its bytes. A null key
// has no place in a compacted changelog, and is an input error.
func stateKey(in *Record) (string, error) {
	k := in.KeyBytes()
	if k == nil {
		return "", errorf(ErrInvalidArgument, "a stateful stream keys its state by the input's key, and this input has none (a null key)")
	}
	return string(k), nil
}

// keyedTransform is the Transform of a stream with per-key state: it runs
// update with the input key's state and keeps the new one.
func (st *store) keyedTransform(update Update) Transform {
	return func(ctx context.Context, in *Record) ([]StreamOutput, error) {
		p, err := st.partOf(in)
		if err != nil {
			return nil, err
		}
		key, err := stateKey(in)
		if err != nil {
			return nil, err
		}
		state, err := p.state(key)
		if err != nil {
			return nil, err
		}
		outs, next, err := update(ctx, in, state)
		if err != nil {
			return nil, err
		}
		if err := p.setState(key, next); err != nil {
			return nil, err
		}
		return outs, nil
	}
}

// checkStore validates a stateful spec's store fields.
func (spec *StreamSpec) checkStore() error {
	set := 0
	for _, given := range []bool{spec.Transform != nil, spec.Update != nil, spec.Window != nil} {
		if given {
			set++
		}
	}
	switch {
	case set == 0:
		return errorf(ErrInvalidArgument, `"transform": want a function of the input; or, for a stateful stream, an update (of the input and its key's state) or a window (with an aggregate)`)
	case set > 1:
		return errorf(ErrInvalidArgument, "want one of a transform, an update or a window, got %d of them", set)
	}
	if spec.Transform != nil {
		if spec.Store != "" {
			return errorf(ErrInvalidArgument, `"store" %q: a stateless transform keeps no store; give an update or a window`, spec.Store)
		}
		return nil
	}
	if spec.Store == "" {
		return errorf(ErrInvalidArgument, `"store": a stateful stream needs a store name; its changelog topic is "<group>-<store>-changelog"`)
	}
	if err := topicname.Check(spec.Store); err != nil {
		return errorf(ErrInvalidArgument, `"store": %v`, err)
	}
	if len(spec.From) != 1 {
		return errorf(ErrInvalidArgument, `"from" %v: a stateful stream reads one topic, whose partition N keeps its state in the changelog's partition N`, spec.From)
	}
	if spec.Window != nil {
		return spec.Window.check()
	}
	return nil
}
