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

	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Stateful streams: the state a stream keeps per key (or per key and
// window), held in memory per input partition and written to a compacted
// changelog topic in the same transaction as the outputs and the input
// offsets. A batch changes the state in place and logs, per key and per
// window it touches, what it was before: the commit writes that log to the
// changelog and drops it, and an abort puts back what it says, so an
// aborted batch leaves no trace. (An overlay of copies, which an abort
// would simply drop, cost a slot, a window list and a window per input.)

// Update is a stateful stream's work on one input record: given the input
// and its key's state (nil at first, and after a nil state deleted it), it
// returns the messages to write and the key's new state; a nil state
// deletes the key. An error leaves the state as it was and goes to the
// stream's OnError policy.
//
// State values are data: nil, bool, int64, float64, string, []byte,
// [value.Reference] and *value.List of them (Go numbers, []any and map[string]any are
// converted). They are kept exactly (3.0 stays a float, a []byte stays
// bytes). Hazard: a *value.List state handed to Update is the update's own copy;
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

// kafkaStore is a stateful stream's state.
type kafkaStore struct {
	name, topic, input string
	win                *Window // nil: per-key state
	cfg                *config

	// mu guards parts and restoring (the maps; the run goroutine owns
	// the contents of parts, a restore's goroutine those of its part),
	// assigned, gen, wake and pending.
	mu        sync.Mutex
	parts     map[int32]*part  // partitions held and restored: the run goroutine processes their input
	restoring map[int32]*part  // partitions being restored, each by a goroutine of its own
	assigned  map[int32]uint64 // the group's assignment: partition → the generation it was assigned in
	gen       uint64
	wake      context.CancelFunc // ends the run goroutine's poll, to start or adopt restores
	pending   bool               // an assignment or an ended restore awaits the run goroutine's sync
	restores  sync.WaitGroup     // the restores' goroutines
	checked   bool               // the changelog topic was checked (run goroutine only)
	reads     chan struct{}      // a slot per restore reading (restoreReads)

	late, restored atomic.Int64

	// The batch in hand (run goroutine only): its number, counted from
	// 1 and never reused (a commit and an abort both end it), which the
	// marks of slots and windows compare with; and its log of changes.
	batch   uint64
	changes []change

	folds []fold // a windowed input's new aggregates, before they are kept (run goroutine only)
	buf   []byte // a new state's encoding, before it is copied into its cell (run goroutine only)
}

// part is the state of one input partition.
type part struct {
	id     int32
	gen    uint64             // the assignment it was restored under
	cancel context.CancelFunc // ends its restore (a revocation)

	// The state, written by the run goroutine only: committed, and
	// changed in place by the batch in hand (see change).
	slots    map[string]*slot
	time     int64 // stream time: the latest input timestamp, in ms, or noTime
	minClose int64 // no window closes before this stream time
	idleFrom time.Time

	// Under the store's mu: what status reports (of the committed
	// state), and how its restore ended.
	read, total          int64
	keys, windows, bytes int64
	restored             bool  // its restore ended: the run goroutine may adopt it
	err                  error // why its restore failed

	// The batch's stream time and the lowest close time of a window it
	// changed.
	btime     int64
	bminClose int64
}

// cell is an encoded state value, and its decoding when immutable.
type cell struct {
	raw   []byte // nil: none
	val   any
	has   bool
	wrote uint64 // the batch that wrote raw
}

// slot is one key's state: its value in a per-key store; its open
// windows, in start order, in a windowed one.
type slot struct {
	key     string
	cell           // per-key stores
	wins    []*win // windowed stores; those the batch closed stay until the commit
	spare   []byte // a buffer for the next batch's encoding (see change)
	touched uint64 // the batch that logged it last
	born    uint64 // the batch that made it
}

// win is one open window of a key.
type win struct {
	start, end int64 // ms; a session's end is its last input's time
	cell
	spare                 []byte
	touched, born, closed uint64 // the batch that logged it last, made it, closed it
}

// change is what a batch's log holds of one slot, or one window (w
// non-nil), it touched: its cell before the batch. The encoding a batch
// writes goes into a buffer of its own (never one a changelog record of
// the batch may still be sending), and the one it replaced becomes the
// spare for the batch after, by when its record was acknowledged: a
// commit comes only after every record of its batch was.
type change struct {
	p   *part
	sl  *slot
	w   *win
	old cell
}

func newStore(cfg *config, spec *StreamSpec) *kafkaStore {
	return &kafkaStore{
		name: spec.Store, topic: cfg.group + "-" + spec.Store + "-changelog", input: spec.From[0],
		win: spec.Window, cfg: cfg, parts: map[int32]*part{}, restoring: map[int32]*part{}, assigned: map[int32]uint64{}, batch: 1,
		reads: make(chan struct{}, restoreReads),
	}
}

func newPart(id int32, gen uint64) *part {
	return &part{id: id, gen: gen, slots: map[string]*slot{}, time: noTime, minClose: math.MaxInt64,
		btime: noTime, bminClose: math.MaxInt64}
}

// scalarState tells whether v is immutable, so that a decoded value may be
// kept and handed out again: everything but lists and bytes.
func scalarState(v any) bool {
	switch v.(type) {
	case *value.List, []byte:
		return false
	}
	return true
}

// value returns c's decoded value, caching an immutable one; lists are
// decoded anew each time, so no caller can change another's.
func (c *cell) value() (any, error) {
	if c.has {
		return c.val, nil
	}
	v, err := store.Decode(c.raw)
	if err != nil {
		return nil, err
	}
	if scalarState(v) {
		c.val, c.has = v, true
	}
	return v, nil
}

// logSlot logs sl's state before the batch's first change of it.
func (st *kafkaStore) logSlot(p *part, sl *slot) {
	if sl.touched != st.batch {
		sl.touched = st.batch
		st.changes = append(st.changes, change{p: p, sl: sl, old: sl.cell})
	}
}

// logWin logs window w of sl before the batch's first change of it.
func (st *kafkaStore) logWin(p *part, sl *slot, w *win) {
	st.logSlot(p, sl)
	if w.touched != st.batch {
		w.touched = st.batch
		st.changes = append(st.changes, change{p: p, sl: sl, w: w, old: w.cell})
	}
}

// write sets c, logged already, to enc, whose value is v: in the buffer
// the batch wrote c in before, or else in *spare (taken). Never in the
// buffer c had before the batch, which its change keeps.
func (st *kafkaStore) write(c *cell, spare *[]byte, enc []byte, v any) {
	buf := *spare
	if c.wrote == st.batch {
		buf = c.raw
	} else {
		*spare = nil
	}
	c.raw, c.wrote = append(buf[:0], enc...), st.batch
	c.val, c.has = nil, false
	if scalarState(v) {
		c.val, c.has = v, true
	}
}

// state returns key's state in p, as the batch left it.
func (st *kafkaStore) state(p *part, key string) (any, error) {
	sl := p.slots[key]
	if sl == nil || sl.raw == nil {
		return nil, nil
	}
	v, err := sl.value()
	if err != nil {
		return nil, fmt.Errorf("the state of key %q: %w", key, err)
	}
	return v, nil
}

// setState sets key's state in p in the batch: nil deletes it (the slot
// stays, empty, until the commit).
func (st *kafkaStore) setState(p *part, key string, v any) error {
	sl := p.slots[key]
	if v == nil {
		if sl != nil && sl.raw != nil {
			st.logSlot(p, sl)
			sl.cell = cell{}
		}
		return nil
	}
	enc, err := store.Encode(st.buf[:0], v)
	st.buf = enc
	if err != nil {
		return err
	}
	if sl == nil {
		sl = &slot{key: key, born: st.batch}
		p.slots[key] = sl
	}
	st.logSlot(p, sl)
	st.write(&sl.cell, &sl.spare, enc, v)
	return nil
}

// changelog writes the batch's changes to the changelog with write: a
// record per changed key (or window), a tombstone per deleted one (but
// for those the batch made), and a windowed store's stream time when it
// moved.
func (st *kafkaStore) changelog(write func(*kgo.Record)) {
	rec := func(p *part, key, raw []byte) {
		write(&kgo.Record{Topic: st.topic, Partition: p.id, Key: key, Value: raw})
	}
	for _, c := range st.changes {
		switch {
		case c.w != nil:
			if c.w.closed != st.batch {
				rec(c.p, windowKey(c.sl.key, c.w.start, c.w.end), c.w.raw)
			} else if c.w.born != st.batch {
				rec(c.p, windowKey(c.sl.key, c.w.start, c.w.end), nil)
			}
		case st.win == nil:
			if c.sl.raw != nil {
				rec(c.p, []byte(c.sl.key), c.sl.raw)
			} else if c.old.raw != nil {
				rec(c.p, []byte(c.sl.key), nil)
			}
		}
	}
	if st.win == nil {
		return
	}
	for _, p := range st.parts {
		if p.btime != p.time {
			rec(p, []byte(timeKey), binary.BigEndian.AppendUint64(nil, uint64(p.btime)))
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

// commit makes the batch's changes the committed state: it counts them,
// drops the keys and windows the batch deleted or closed, and keeps each
// replaced encoding as its slot's or window's spare.
func (st *kafkaStore) commit() {
	if st == nil {
		return
	}
	b := st.batch
	st.mu.Lock()
	for _, c := range st.changes {
		p, sl := c.p, c.sl
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
		case st.win == nil:
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
			sl.wins = slices.DeleteFunc(sl.wins, func(w *win) bool { return w.closed == b })
			if len(sl.wins) == 0 {
				delete(p.slots, sl.key)
			} else {
				p.keys++
			}
		}
	}
	for _, p := range st.parts {
		p.time, p.minClose = p.btime, p.bminClose
	}
	st.mu.Unlock()
	st.next()
}

// abort puts back what the batch changed, as its log says.
func (st *kafkaStore) abort() {
	if st == nil {
		return
	}
	b := st.batch
	for _, c := range st.changes {
		switch {
		case c.w != nil:
			c.w.cell = c.old
		case st.win == nil:
			c.sl.cell = c.old
		default:
			c.sl.wins = slices.DeleteFunc(c.sl.wins, func(w *win) bool { return w.born == b })
		}
		if c.w == nil && c.sl.born == b {
			delete(c.p.slots, c.sl.key)
		}
	}
	for _, p := range st.parts {
		p.btime, p.bminClose = p.time, p.minClose
	}
	st.next()
}

// next ends the batch: its marks are stale from now on.
func (st *kafkaStore) next() {
	clear(st.changes)
	st.changes = st.changes[:0]
	st.batch++
}

// count adds (sign 1) or removes (-1) a committed slot's share of p's
// counts.
func (st *kafkaStore) count(p *part, sl *slot, sign int64) {
	p.keys += sign
	if st.win == nil {
		p.bytes += sign * int64(len(sl.key)+len(sl.raw))
		return
	}
	for _, w := range sl.wins {
		p.windows += sign
		p.bytes += sign * int64(len(sl.key)+16+len(w.raw))
	}
}

// closing tells whether a windowed store has windows to close although
// no input came (its stream time moved on idle).
func (st *kafkaStore) closing() bool {
	if st == nil || st.win == nil {
		return false
	}
	for _, p := range st.parts {
		if p.btime >= p.bminClose {
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
func (st *kafkaStore) status() *StoreStatus {
	ss := &StoreStatus{Name: st.name, Changelog: st.topic, Restored: st.restored.Load(), Late: st.late.Load()}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range st.parts {
		ss.Keys += p.keys
		ss.Windows += p.windows
		ss.Bytes += p.bytes
	}
	for _, p := range st.restoring {
		ss.Keys += p.keys
		ss.Windows += p.windows
		ss.Bytes += p.bytes
		ss.RestoreRead += p.read
		ss.RestoreTotal += p.total
	}
	ss.Restoring = len(st.restoring)
	ss.Partitions = len(st.parts) + ss.Restoring
	return ss
}

// List returns the status as kafka-stream-status shows it under "store".
func (ss *StoreStatus) List() *value.List {
	l := &value.List{}
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

// partOf returns the state of in's partition, restored: a partition's
// fetching is paused until its restore ends, so no input of one being
// restored comes in a poll.
func (st *kafkaStore) partOf(in *Record) (*part, error) {
	p := st.parts[in.Partition()]
	if p == nil {
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
func (st *kafkaStore) keyedTransform(update Update) Transform {
	return func(ctx context.Context, in *Record) ([]StreamOutput, error) {
		p, err := st.partOf(in)
		if err != nil {
			return nil, err
		}
		key, err := stateKey(in)
		if err != nil {
			return nil, err
		}
		state, err := st.state(p, key)
		if err != nil {
			return nil, err
		}
		outs, next, err := update(ctx, in, state)
		if err != nil {
			return nil, err
		}
		if err := st.setState(p, key, next); err != nil {
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
