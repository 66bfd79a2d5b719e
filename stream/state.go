package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Stateful streams: the state a stream keeps per key (or per key and
// window), held in memory per input partition and written to a compacted
// changelog topic in the same transaction as the outputs and the input
// offsets. The state itself, its batches (changed in place, with a log
// of what each change replaced, so that an abort leaves no trace) and its
// changelog records are package store's (internal/store); the root keeps
// the Kafka side: the changelog topic, the group's assignment and the
// restores (stream_restore.go), and the transactions.

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
type Update func(ctx context.Context, in *kafkabpl.Record, state any) (outs []Output, newState any, err error)

// StoreStatus is a stateful stream's store as this process holds it.
type StoreStatus struct {
	Name          string // the store's name
	Changelog     string // its changelog topic, "<group>-<store>-changelog"
	Partitions    int    // input partitions whose state this process holds (restored or restoring)
	Keys          int64  // keys held: with a state, or with an open window
	Windows       int64  // open windows (windowed streams)
	Bytes         int64  // the keys and encoded states held, in bytes
	Restoring     int    // partitions being restored
	RestoreRead   int64  // changelog offsets the restores in progress have read
	RestoreTotal  int64  // changelog offsets they read in all
	Restored      int64  // changelog records applied by restores, since the stream started
	Late          int64  // inputs later than the grace period (windowed streams), dropped or dead-lettered
	Repartition   string // a re-keying stream's repartition topic, "<group>-<store>-repartition"; "" for none
	Repartitioned int64  // inputs written to it, since the stream started
	Timers        int64  // due times held for timers and silences (an entry a later input or SetTimer moved counts until its time comes)
	Fired         int64  // timer and silence calls committed, since the stream started

	// Standbys (Spec.Standbys; all zero without): see StorePlacement.
	StandbysWanted int              // Spec.Standbys
	Member         string           // this process's member id in the group, at the last placement
	Takeovers      int64            // restores that went on from a standby copy's position rather than the changelog's start, since the stream started
	Standbys       []StandbyStatus  // the standby copies this process keeps, by partition
	Placement      []StorePlacement // each partition's owner and standbys, from the group's last description; nil under the "consumer" group protocol

	// On disk (config "state-dir"; all zero in memory).
	Disk           string          // the store's directory, "<state-dir>/<group>/<store>"; "": in memory
	DiskBytes      int64           // what its files take on disk
	DiskPartitions []DiskPartition // the partitions it holds state of (held, followed, or waiting out "state-cleanup-delay"), by partition
	Restores       []RestoreStatus // each partition's last restore, since the stream started, by partition
}

// DiskPartition is a partition's state in a store's directory.
type DiskPartition struct {
	Partition int32
	Bytes     int64 // an estimate of what its files take: pebble's, which counts nothing of what its memtable holds until a flush
}

// kafkaStore is a stateful stream's store as Kafka sees it: its state,
// its changelog topic, the group's assignment and the restores.
type kafkaStore struct {
	name, topic string
	inputs      []string // co-partitioned: partition N of each is the store's partition N
	rekeys      bool     // inputs is the repartition topic of a re-keying stream
	timed       bool     // states are wrapped with their timers (see timed)
	win         *Window  // nil: per-key state
	cfg         *kafkabpl.ClientConfig
	state       *store.Store // the state: the run goroutine runs its batches (its doc says who calls what)

	// mu guards parts and restoring (the maps; the run goroutine owns
	// the contents of parts, a restore's goroutine those of its part:
	// their state is guarded by the state's own locks), assigned, gen,
	// wake and pending.
	mu        sync.Mutex
	parts     map[int32]*storePart // partitions held and restored: the run goroutine processes their input
	restoring map[int32]*storePart // partitions being restored, each by a goroutine of its own
	assigned  map[int32]uint64     // the group's assignment: partition → the generation it was assigned in
	gen       uint64
	wake      context.CancelFunc // ends the run goroutine's poll, to start or adopt restores
	pending   bool               // an assignment or an ended restore awaits the run goroutine's sync
	restores  sync.WaitGroup     // the restores' goroutines
	checked   bool               // the changelog topic was checked (run goroutine only)
	standby   *standbys          // its standby copies of other members' partitions; nil: none
	reads     chan struct{}      // a slot per restore reading (restoreReads)

	late, restored, repartitioned atomic.Int64
	interval                      *intervals  // an interval join's expiry index; nil: none
	order                         *inputOrder // the inputs held for their timestamp order (order.go); nil: one input

	disk         *store.Disk             // the state's directory; nil: in memory (see disk.go)
	leases       *diskLeases             // who writes each partition's space on disk; nil: in memory
	logged       []*kgo.Record           // the batch's changelog records, for the positions on disk (run goroutine only)
	lastRestores map[int32]RestoreStatus // under mu
}

// storePart is an input partition of the store: its state, and how it
// came to be held.
type storePart struct {
	id     int32
	state  *store.Part
	gen    uint64             // the assignment it was restored under
	cancel context.CancelFunc // ends its restore (a revocation)

	// release ends its lease of its space on disk (see diskLeases): its
	// restore's goroutine takes it and, but for a restore that ends
	// held, releases it; once it is restored, whoever lets the part go.
	release func()

	// Under the store's mu: its restore's progress, and how it ended.
	read, total int64
	restored    bool  // its restore ended: the run goroutine may adopt it
	err         error // why its restore failed
}

// releaseDisk ends p's lease of its space on disk, if it holds one.
func (p *storePart) releaseDisk() {
	if p.release != nil {
		p.release()
	}
}

// newPart returns partition id's empty state, assigned in generation gen.
func (st *kafkaStore) newPart(id int32, gen uint64) *storePart {
	return &storePart{id: id, gen: gen, state: st.state.NewPart(id)}
}

// newStore makes a stateful stream's store, on disk when the config's
// "state-dir" says so (see disk.go).
func newStore(cfg *kafkabpl.ClientConfig, spec *Spec, log func(string)) (*kafkaStore, error) {
	st := &kafkaStore{
		name: spec.Store, topic: cfg.Group() + "-" + spec.Store + "-changelog", inputs: spec.stateInputs(cfg), rekeys: spec.Rekey != nil, timed: spec.OnTimer != nil,
		win: spec.Window, cfg: cfg, parts: map[int32]*storePart{}, restoring: map[int32]*storePart{}, assigned: map[int32]uint64{},
		reads: make(chan struct{}, restoreReads), interval: newIntervals(spec, cfg),
	}
	st.order = newInputOrder(st.inputs, cfg.MaxTaskIdle())
	var err error
	if st.disk, err = openDisk(cfg, st, log); err != nil {
		return nil, err
	}
	wake := func() {
		st.mu.Lock()
		st.wakeLocked()
		st.mu.Unlock()
	}
	if st.leases, err = newDiskLeases(st.disk, cfg.StateCleanupDelay(), wake); err != nil {
		st.disk.Close()
		return nil, kafkabpl.Wrapf(kafkabpl.ErrInvalidConfig, err, `config "state-dir" %s`, st.disk.Dir())
	}
	st.state = store.New(store.Config{Windows: spec.Window.spec(), Disk: st.disk})
	st.standby = newStandbys(spec.Standbys)
	return st, nil
}

// commit makes the batch's changes the committed state (no store: none);
// a store on disk writes them there, at the positions its changelog
// records reached, and fails when it cannot.
func (st *kafkaStore) commit() error {
	if st == nil {
		return nil
	}
	st.positions()
	if err := st.state.Commit(); err != nil {
		return fmt.Errorf("store %q: write its state to %s: %w", st.name, st.disk.Dir(), err)
	}
	return nil
}

// abort puts back what the batch changed (no store: nothing), and drops
// the inputs held, which kgo fetches again from the committed offsets.
func (st *kafkaStore) abort() {
	if st != nil {
		clear(st.logged)
		st.logged = st.logged[:0]
		st.state.Abort()
		st.dropHeld()
	}
}

// closing tells whether a windowed store has windows to close although
// no input came (its stream time moved on idle).
func (st *kafkaStore) closing() bool {
	return st != nil && st.state.Closing()
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
	st.state.Changelog(func(partition int32, key, value []byte) {
		r := &kgo.Record{Topic: st.topic, Partition: partition, Key: key, Value: value}
		st.logChangelog(r)
		write(r)
	})
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
	if t := s.timers.wait(time.Second); t > 0 && (wait == 0 || t < wait) {
		wait = t // the next wall-clock timer or silence
	}
	if t := s.store.heldWait(time.Now()); t > 0 && (wait == 0 || t < wait) {
		wait = t // the end of a held partition's "max-task-idle"
	}
	return s.store.pollContext(s.pollCtx, wait)
}

// status reports the store.
func (st *kafkaStore) status() *StoreStatus {
	ss := &StoreStatus{Name: st.name, Changelog: st.topic, Restored: st.restored.Load(), Late: st.late.Load(), Repartitioned: st.repartitioned.Load()}
	if st.rekeys {
		ss.Repartition = st.inputs[0]
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	held := st.state.Counts()
	ss.Keys, ss.Windows, ss.Bytes = held.Keys, held.Windows, held.Bytes
	for _, p := range st.restoring {
		c := p.state.Counts()
		ss.Keys += c.Keys
		ss.Windows += c.Windows
		ss.Bytes += c.Bytes
		ss.RestoreRead += p.read
		ss.RestoreTotal += p.total
	}
	ss.Restoring = len(st.restoring)
	ss.Partitions = len(st.parts) + ss.Restoring
	st.standby.status(ss)
	for _, r := range st.lastRestores {
		ss.Restores = append(ss.Restores, r)
	}
	slices.SortFunc(ss.Restores, func(a, b RestoreStatus) int { return cmp.Compare(a.Partition, b.Partition) })
	if st.disk != nil {
		ss.Disk, ss.DiskBytes = st.disk.Dir(), st.disk.Size()
		sizes, _ := st.disk.PartitionBytes() // none once the disk is closed
		for id, n := range sizes {
			ss.DiskPartitions = append(ss.DiskPartitions, DiskPartition{Partition: id, Bytes: n})
		}
		slices.SortFunc(ss.DiskPartitions, func(a, b DiskPartition) int { return cmp.Compare(a.Partition, b.Partition) })
	}
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
	if ss.Disk != "" {
		l.AppendNamed("disk", ss.Disk)
		l.AppendNamed("disk-bytes", ss.DiskBytes)
		dps := &value.List{}
		for _, dp := range ss.DiskPartitions {
			dl := &value.List{}
			dl.AppendNamed("partition", int64(dp.Partition))
			dl.AppendNamed("bytes", dp.Bytes)
			dps.Append(dl)
		}
		l.AppendNamed("disk-partitions", dps)
	}
	if len(ss.Restores) > 0 {
		rs := &value.List{}
		for _, r := range ss.Restores {
			rl := &value.List{}
			rl.AppendNamed("partition", int64(r.Partition))
			rl.AppendNamed("records", r.Records)
			rl.AppendNamed("ms", r.Took.Milliseconds())
			rl.AppendNamed("tail", r.Tail)
			rs.Append(rl)
		}
		l.AppendNamed("restores", rs)
	}
	l.AppendNamed("late", ss.Late)
	if ss.Repartition != "" {
		l.AppendNamed("repartition", ss.Repartition)
		l.AppendNamed("repartitioned", ss.Repartitioned)
	}
	l.AppendNamed("timers", ss.Timers)
	l.AppendNamed("fired", ss.Fired)
	ss.standbyList(l)
	return l
}

// prefetch has a store on disk read the states of recs' keys ahead of
// the transform (see store.Prefetch): a per-key store's state, or an
// interval join's buffer, is keyed by its input's key, in its input's
// partition. (No store: nothing; a windowed store's reads are ranges.)
func (st *kafkaStore) prefetch(recs []*kgo.Record) {
	if st == nil || st.win != nil {
		return
	}
	st.state.Prefetch(func(yield func(int32, []byte) bool) {
		for _, r := range recs {
			if r.Key != nil && !yield(r.Partition, r.Key) {
				return
			}
		}
	})
}

// partOf returns the state of in's partition, restored: a partition's
// fetching is paused until its restore ends, so no input of one being
// restored comes in a poll.
func (st *kafkaStore) partOf(in *kafkabpl.Record) (*store.Part, error) {
	p := st.state.Part(in.Partition())
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
func stateKey(in *kafkabpl.Record) (string, error) {
	k := in.KeyBytes()
	if k == nil {
		return "", kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "a stateful stream keys its state by the input's key, and this input has none (a null key)")
	}
	return string(k), nil
}

// keyedTransform is the Transform of a stream with per-key state: it runs
// update with the input key's state and keeps the new one.
func (st *kafkaStore) keyedTransform(update Update) Transform {
	return func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) {
		p, err := st.partOf(in)
		if err != nil {
			return nil, err
		}
		key, err := stateKey(in)
		if err != nil {
			return nil, err
		}
		state, err := st.state.State(p, key)
		if err != nil {
			return nil, err
		}
		outs, next, err := update(ctx, in, state)
		if err != nil {
			return nil, err
		}
		if err := st.state.SetState(p, key, next); err != nil {
			return nil, err
		}
		return outs, nil
	}
}

// checkStore validates a stateful spec's store fields.
func (spec *Spec) checkStore() error {
	set := 0
	for _, given := range []bool{spec.Transform != nil, spec.Update != nil, spec.Window != nil, spec.Interval != nil} {
		if given {
			set++
		}
	}
	switch {
	case set == 0:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"transform": want a function of the input; or, for a stateful stream, an update (of the input and its key's state), a window (with an aggregate) or an interval join`)
	case set > 1:
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "want one of a transform, an update, a window or an interval join, got %d of them", set)
	}
	if spec.Transform != nil {
		if spec.Store != "" {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"store" %q: a stateless transform keeps no store; give an update or a window`, spec.Store)
		}
		return nil
	}
	if spec.Store == "" {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"store": a stateful stream needs a store name; its changelog topic is "<group>-<store>-changelog"`)
	}
	if err := topicname.Check(spec.Store); err != nil {
		return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"store": %v`, err)
	}
	if spec.Window != nil {
		return spec.Window.check()
	}
	if spec.Interval != nil {
		return spec.checkInterval()
	}
	return nil
}
