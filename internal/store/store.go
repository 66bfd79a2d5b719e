package store

import (
	"math"
	"sync"
	"time"
)

// Config is what a store keeps.
type Config struct {
	// Windows cuts a windowed store's time; nil makes a per-key store.
	Windows *WindowSpec
	// Disk keeps the store's committed state on local disk (see
	// [OpenDisk]); nil keeps it in memory.
	Disk *Disk
}

// Store is a stateful stream's state: the partitions it holds, and the
// batch in hand. See the package doc for who may call what.
type Store struct {
	win  *WindowSpec // nil: per-key state
	disk *Disk       // nil: in memory

	// A disk store's batch (run goroutine only): the parts whose slots
	// it loaded or set, which hold them until it ends, and a buffer for
	// a key's key on disk.
	loadedIn []*Part
	dkey     []byte
	pf       *prefetch // the batch's reads ahead, if any (prefetch.go)

	// mu guards parts, the map: Adopt and Drop change it under mu, and
	// the run goroutine reads it without.
	mu    sync.RWMutex
	parts map[int32]*Part // the partitions held: the run goroutine processes their input

	// The batch in hand (run goroutine only): its number, counted from
	// 1 and never reused (a commit and an abort both end it), which the
	// marks of slots and windows compare with; and the parts whose
	// changes it logged, in the order it first did.
	batch uint64
	dirty []*Part

	folds []fold    // an input's new aggregates, before they are kept (run goroutine only)
	wins  []*Window // what Fold returns, reused input after input (run goroutine only)
	buf   []byte    // a new state's encoding, before it is copied into its cell (run goroutine only)
}

// Part is the state of one input partition: a key's state or windows,
// and the partition's stream time.
type Part struct {
	id   int32
	disk *Disk // the store's: its committed state is there, and slots holds the batch's keys only

	// A disk part's changelog position (see SetPosition), which the
	// next write to the disk keeps; listed: in its store's loadedIn.
	pos            int64
	posSet, listed bool

	// mu guards what other goroutines see of the part: the keys (the
	// map, and the encodings and marks of the slots and windows in it),
	// the batch's log of them, and the counts. The part's owner (the
	// run goroutine once the part is held; before, the goroutine that
	// restores it) changes them under mu and reads them without. A read
	// (read.go) shows the committed state: a key or window that the
	// batch open on the part logged reads as its log entry says it was.
	mu      sync.Mutex
	slots   map[string]*slot
	changes []change // the log of the batch in hand (see change)
	open    uint64   // the batch in hand, once it logged a change of the part; else 0

	keys, windows, bytes int64 // of the committed state

	// The owner's alone.
	time      int64 // stream time: the latest input timestamp, in ms, or noTime
	minClose  int64 // no window closes before this stream time
	btime     int64 // the batch's stream time
	bminClose int64 // the lowest close time of a window, the batch's changes included
	idleFrom  time.Time
}

// Counts is how much of a store is held.
type Counts struct {
	Keys    int64 // keys held: with a state, or with an open window
	Windows int64 // open windows (a windowed store)
	Bytes   int64 // the keys and encoded states held (a window's key and its two times, 16 bytes), in bytes
}

// noTime is a partition's stream time before its first record.
const noTime = math.MinInt64

// New returns an empty store.
func New(cfg Config) *Store {
	return &Store{win: cfg.Windows, disk: cfg.Disk, parts: map[int32]*Part{}, batch: 1}
}

// NewPart returns the empty state of partition id, not held yet: fill it
// with Apply, then hold it with Adopt.
func (s *Store) NewPart(id int32) *Part {
	return &Part{id: id, disk: s.disk, slots: map[string]*slot{}, time: noTime, minClose: math.MaxInt64,
		btime: noTime, bminClose: math.MaxInt64}
}

// Adopt holds p from now on, in place of any part of its partition: its
// input may be processed, and reads see it. now starts its idle time
// (see Idle). The run goroutine calls it, between batches; p's restore,
// if any, has ended.
func (s *Store) Adopt(p *Part, now time.Time) {
	p.idleFrom = now
	s.mu.Lock()
	s.parts[p.id] = p
	s.mu.Unlock()
}

// Drop lets partition id go: its state is forgotten. The run goroutine
// calls it, between batches.
func (s *Store) Drop(id int32) {
	s.mu.Lock()
	delete(s.parts, id)
	s.mu.Unlock()
}

// Part returns the state of partition id, or nil when it is not held.
// Run goroutine only.
func (s *Store) Part(id int32) *Part {
	return s.parts[id]
}

// Counts returns what the held partitions hold, as committed.
func (s *Store) Counts() Counts {
	var c Counts
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.parts {
		pc := p.Counts()
		c.Keys += pc.Keys
		c.Windows += pc.Windows
		c.Bytes += pc.Bytes
	}
	return c
}

// Counts returns what p holds, as committed (or restored so far). Any
// goroutine may call it.
func (p *Part) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Counts{Keys: p.keys, Windows: p.windows, Bytes: p.bytes}
}
