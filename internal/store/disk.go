package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// A store's committed state on local disk: a pebble database holding,
// per partition, each key's committed state and the changelog position
// that state reflects, written in one atomic batch when a batch of the
// stream commits (after its Kafka transaction did) or a restore applies a
// chunk of the changelog. A batch that aborts never reaches the disk, so
// the disk holds committed state only, at the position it says, after any
// crash: a process that starts again reads the changelog from there.
//
// The database's keys:
//
//	0x00 'i'                        the Identity the directory belongs to (JSON)
//	0x00 'p' partition              the partition's position, keys, bytes, windows and stream time (8 bytes each, big-endian)
//	0x01 partition key              a per-key store's key's committed state, encoded (see Encode)
//	0x03 partition key* start end   a windowed store's window's aggregate, encoded
//	0x04 partition close key* start end   (empty) the window's entry in the index of close times
//	0x05 partition key              (empty) a windowed store's key has windows: a point read,
//	                                which bloom filters answer, before a range read of them
//
// partition is 4 bytes, big-endian; start, end and close 8 bytes,
// big-endian, close with its sign bit flipped so that the index reads in
// close time order; key* is the key escaped (0x00 as 0x00 0xff) and
// ended by 0x00 0x01, so that a key's windows are a prefix of their own
// and keys sort bytewise. The run goroutine's batch loads the
// keys it reads into the part's slots, and they leave them when the batch
// ends: memory holds a batch's keys, not the state.

// Disk is the local disk of a store: its directory, locked by this
// process while it is open. Open it with [OpenDisk]; a Store made with
// it ([Config].Disk) keeps its committed state there.
type Disk struct {
	db   *pebble.DB
	dir  string
	lock *os.File // the directory's lock, held while open
	log  func(string)

	// mu guards db against Close for the reads of other goroutines (a
	// query, a status) than the run goroutine, which is done before
	// Close: a query in flight may outlast its stream's stop.
	mu sync.RWMutex

	// The syncer: a goroutine that makes what the commits wrote durable
	// behind them (see syncSoon).
	syncReq  chan struct{} // a commit to sync; closed by Close
	syncDone chan struct{} // closed when the syncer returns
	syncErr  atomic.Pointer[error]
	synced   atomic.Int64 // syncs done, for tests

	filters filters // of the keys point reads ask for (filter.go)
}

// reading runs f with the database, or fails with ErrNotHeld once the
// disk is closed.
func (d *Disk) reading(f func(db *pebble.DB) error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.db == nil {
		return errorf(ErrNotHeld, "the state directory %s is closed: its stream stopped", d.dir)
	}
	return f(d.db)
}

// Identity is whose state a disk holds: a directory found holding
// another's is rebuilt.
type Identity struct {
	Group     string `json:"group"`
	Store     string `json:"store"`
	Changelog string `json:"changelog"`
}

const (
	diskMeta   = 0x00
	diskState  = 0x01
	diskWindow = 0x03
	diskClose  = 0x04
	diskMarker = 0x05
)

// diskFormat is the version of the layout above, kept with the
// identity: a directory of an earlier one (before the markers, 2) is
// rebuilt.
const diskFormat = 2

var identityKey = []byte{diskMeta, 'i'}

// OpenDisk opens the store directory dir for id, making it when missing,
// and locks it: a second process that opens it gets [ErrLocked], naming
// the holder. A directory whose files cannot be read (a truncated file),
// or that holds another identity's state, is emptied, and log says why:
// the stream then restores every partition from its changelog's start.
func OpenDisk(dir string, id Identity, log func(string)) (*Disk, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	d := &Disk{dir: dir, lock: lock, log: log, syncReq: make(chan struct{}, 1), syncDone: make(chan struct{})}
	if err := d.openChecked(id); err != nil {
		unlockDir(lock)
		return nil, err
	}
	go d.syncer()
	d.startFilter()
	return d, nil
}

// syncSoon has the syncer make what was committed so far durable, and
// returns the error of a sync that failed since the last call, if any.
//
// Why behind the commit and not in it: a batch's commit is on the run
// goroutine's path, and its fsync was a third of a batch's time on disk
// (BenchmarkDiskBatch). Not syncing at all is no choice either: pebble
// keeps an unsynced commit in a buffer of its own until a block fills,
// and a kill lost every commit since the start (TestDiskKilled). Behind
// the commit, a kill loses at most the commits of the last sync's
// length: the disk is then a consistent prefix of them (pebble's log is
// replayed in order, a batch whole or not at all), at the position it
// says, and the restore reads the rest from the changelog.
func (d *Disk) syncSoon() error {
	select {
	case d.syncReq <- struct{}{}:
	default: // one is pending: it syncs this commit too
	}
	if err := d.syncErr.Swap(nil); err != nil {
		return *err
	}
	return nil
}

// syncer syncs the log once per request, until Close.
func (d *Disk) syncer() {
	defer close(d.syncDone)
	for range d.syncReq {
		if err := d.db.LogData(nil, pebble.Sync); err != nil {
			d.syncErr.Store(&err)
		}
		d.synced.Add(1)
	}
}

// openChecked opens the database, emptied first when it cannot be read or
// belongs to another identity.
func (d *Disk) openChecked(id Identity) error {
	want, _ := json.Marshal(struct {
		Identity
		Format int `json:"format"`
	}{id, diskFormat})
	db, err := d.open()
	if err == nil {
		var got []byte
		if got, err = d.get(db, identityKey); err == nil && got != nil && !bytes.Equal(got, want) {
			db.Close()
			d.log(fmt.Sprintf("state directory %s holds the state of %s, not of this store: rebuilding it from the changelog", d.dir, got))
			return d.rebuild(want)
		}
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		d.log(fmt.Sprintf("state directory %s cannot be read (%v): rebuilding it from the changelog", d.dir, err))
		return d.rebuild(want)
	}
	d.db = db
	return d.db.Set(identityKey, want, pebble.Sync)
}

// rebuild empties the directory's database and opens it anew for the
// identity want.
func (d *Disk) rebuild(want []byte) error {
	if err := os.RemoveAll(filepath.Join(d.dir, "db")); err != nil {
		return fmt.Errorf("state directory %s: %w", d.dir, err)
	}
	db, err := d.open()
	if err != nil {
		return fmt.Errorf("state directory %s: %w", d.dir, err)
	}
	d.db = db
	return d.db.Set(identityKey, want, pebble.Sync)
}

// diskBlocks is the bytes of a store's block cache, diskMemTable of its
// memtable (pebble's default is 4 MiB). Pebble counts its memtables
// against the block cache, and more than one is in memory while the last
// is flushed: a cache no larger than two of them caches no block at
// all, and a read of a key the disk holds then read its table's filter
// and index from the file (a disk stream over keys it held ran at 0.21
// of memory, bench/clients/diskstate -passes 3). So the cache pebble is
// given is the blocks' share and two memtables'. (64 MiB of blocks ran
// no faster than 32, at 1M keys or restoring a tail at 30M.)
const (
	diskBlocks   = 32 << 20
	diskMemTable = 32 << 20
	diskCache    = diskBlocks + 2*diskMemTable
)

// open opens the database under the directory. Bloom filters on every
// level: a stream's first inputs of each key read a key the disk lacks,
// and without them each read decoded an index block (four fifths of a
// batch's time, BenchmarkDiskBatch).
func (d *Disk) open() (*pebble.DB, error) {
	cache := pebble.NewCache(diskCache)
	defer cache.Unref()
	o := &pebble.Options{
		Logger:             diskLogger{d.log},
		FormatMajorVersion: pebble.FormatNewest,
		Cache:              cache,
		// Fewer flushes of the memtable, and so fewer compactions: a
		// stream's batches write many small keys.
		MemTableSize: diskMemTable,
	}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	return pebble.Open(filepath.Join(d.dir, "db"), o)
}

// get returns a copy of key's value in db, nil when it has none.
func (d *Disk) get(db *pebble.DB, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return bytes.Clone(v), nil
}

// Close closes the database and unlocks the directory. Closing it again
// does nothing.
func (d *Disk) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.db == nil {
		return nil
	}
	d.stopFilter()
	close(d.syncReq)
	<-d.syncDone
	err := d.db.LogData(nil, pebble.Sync) // what the last commits wrote
	if cerr := d.db.Close(); err == nil {
		err = cerr
	}
	d.db = nil
	unlockDir(d.lock)
	return err
}

// Dir is the store's directory.
func (d *Disk) Dir() string { return d.dir }

// Size returns the bytes the database's files take on disk.
func (d *Disk) Size() int64 {
	var n int64
	d.reading(func(db *pebble.DB) error {
		n = int64(db.Metrics().DiskSpaceUsage())
		return nil
	})
	return n
}

// diskLogger passes pebble's errors to the store's log, and drops its
// chatter (each open's "found 0 WALs").
type diskLogger struct{ log func(string) }

func (l diskLogger) Infof(string, ...any) {}

func (l diskLogger) Errorf(format string, args ...any) {
	l.log("state store: " + fmt.Sprintf(format, args...))
}

func (l diskLogger) Fatalf(format string, args ...any) {
	msg := "state store: " + fmt.Sprintf(format, args...)
	l.log(msg)
	panic(msg) // pebble does not go on after a fatal error
}

// metaKey is partition's position and counts' key.
func metaKey(partition int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{diskMeta, 'p'}, uint32(partition))
}

// statePrefix is the prefix of partition's keys.
func statePrefix(partition int32) []byte { return spacePrefix(diskState, partition) }

// spacePrefix is the prefix of partition's keys of one kind.
func spacePrefix(space byte, partition int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{space}, uint32(partition))
}

// stateKey is key's key in partition, in buf.
func stateKey(buf []byte, partition int32, key string) []byte {
	return append(binary.BigEndian.AppendUint32(append(buf[:0], diskState), uint32(partition)), key...)
}

// meta is what the disk says of a partition besides its keys.
type meta struct {
	pos, keys, bytes, windows, time int64
}

func (m meta) encode() []byte {
	var b []byte
	for _, v := range []int64{m.pos, m.keys, m.bytes, m.windows, m.time} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	return b
}

func decodeMeta(b []byte) (meta, error) {
	if len(b) != 40 {
		return meta{}, fmt.Errorf("a partition's position and counts of %d bytes, want 40", len(b))
	}
	v := func(i int) int64 { return int64(binary.BigEndian.Uint64(b[8*i:])) }
	return meta{v(0), v(1), v(2), v(3), v(4)}, nil
}

// Open reads what the disk holds of p (a disk store's part) into it: its
// counts, and the changelog position its state reflects, which it
// returns; ok is false when the disk holds nothing of p (or the store is
// in memory). p's owner calls it, before p is filled or held.
func (s *Store) Open(p *Part) (pos int64, ok bool, err error) {
	if s.disk == nil {
		return 0, false, nil
	}
	b, err := s.disk.get(s.disk.db, metaKey(p.id))
	if err != nil || b == nil {
		return 0, false, err
	}
	m, err := decodeMeta(b)
	if err != nil {
		return 0, false, err
	}
	p.mu.Lock()
	p.keys, p.bytes, p.windows, p.pos = m.keys, m.bytes, m.windows, m.pos
	p.mu.Unlock()
	if s.win != nil {
		p.time, p.minClose = m.time, math.MaxInt64
		if at, ok, err := s.firstClose(p, math.MinInt64); err != nil {
			return 0, false, err
		} else if ok {
			p.minClose = at
		}
		p.btime, p.bminClose = p.time, p.minClose
	}
	return m.pos, true, nil
}

// Reset forgets what the disk holds of p: a rebuild from the changelog's
// start follows. p's owner calls it, before p is filled or held.
func (s *Store) Reset(p *Part) error {
	p.mu.Lock()
	p.keys, p.bytes, p.windows, p.pos = 0, 0, 0, 0
	p.time, p.minClose, p.btime, p.bminClose = noTime, math.MaxInt64, noTime, math.MaxInt64
	clear(p.slots)
	p.mu.Unlock()
	if s.disk == nil {
		return nil
	}
	b := s.disk.db.NewBatch()
	for _, space := range []byte{diskState, diskWindow, diskClose, diskMarker} {
		b.DeleteRange(spacePrefix(space, p.id), spacePrefix(space, p.id+1), nil)
	}
	b.Delete(metaKey(p.id), nil)
	return b.Commit(pebble.Sync)
}

// SetPosition notes the changelog position p's state reaches with the
// batch in hand's commit, or with p's next Apply: the offset after the
// last changelog record they reflect. The disk keeps it with the state,
// in one batch. A store in memory ignores it.
func (s *Store) SetPosition(p *Part, pos int64) {
	p.pos, p.posSet = pos, true
}

// load returns key's slot in p, from the disk when the batch in hand has
// not loaded it yet (an empty one: no state); the caller holds no lock.
func (s *Store) load(p *Part, key string) (*slot, error) {
	sl := p.slots[key]
	if sl != nil || s.disk == nil {
		return sl, nil
	}
	raw, ok := s.prefetched(p, key)
	if !ok {
		s.dkey = stateKey(s.dkey, p.id, key)
		if s.disk.mayHave(s.dkey) {
			var err error
			if raw, err = s.disk.get(s.disk.db, s.dkey); err != nil {
				return nil, err
			}
		}
	}
	// A key the disk lacks gets an empty slot too, so that the SetState
	// after a State (an update's) does not ask the disk again.
	sl = &slot{key: key, cell: cell{raw: raw}}
	p.mu.Lock()
	p.slots[key] = sl
	p.mu.Unlock()
	s.touch(p)
	return sl, nil
}

// writeDisk writes the batch's changes of the dirty parts, and their
// positions and counts, to the disk in one batch, which the disk's syncer
// makes durable behind it (see Disk.syncSoon). The caller holds no
// part's lock.
func (s *Store) writeDisk() error {
	b := s.disk.db.NewBatch()
	adding, done := s.disk.writing()
	defer done()
	for _, p := range s.dirty {
		for _, c := range p.changes {
			switch {
			case c.w != nil:
				s.writeWindow(b, p, c.sl.key, c.w)
				s.writeMarker(b, adding, p, c.sl)
			case s.win == nil:
				s.dkey = stateKey(s.dkey, p.id, c.sl.key)
				if c.sl.raw != nil {
					s.disk.setPoint(b, adding, s.dkey, c.sl.raw)
				} else if c.old.raw != nil {
					b.Delete(s.dkey, nil)
				}
			}
		}
		s.writeMeta(b, p)
	}
	for _, p := range s.parts {
		if p.posSet { // a position the batch reached without a change here
			s.writeMeta(b, p)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return err
	}
	return s.disk.syncSoon()
}

// writeMeta adds p's position and counts to b.
func (s *Store) writeMeta(b *pebble.Batch, p *Part) {
	p.posSet = false
	b.Set(metaKey(p.id), meta{p.pos, p.keys, p.bytes, p.windows, p.time}.encode(), nil)
}

// touch notes that the batch in hand loaded or set a slot of p, which
// unload lets go.
func (s *Store) touch(p *Part) {
	if !p.listed {
		p.listed = true
		s.loadedIn = append(s.loadedIn, p)
	}
}

// unload lets the slots the batch loaded, or set, go from the parts: the
// disk holds the committed state, and a part holds none between batches.
// The caller holds no lock.
func (s *Store) unload() {
	for _, p := range s.loadedIn {
		p.mu.Lock()
		clear(p.slots)
		p.listed, p.posSet = false, false
		p.mu.Unlock()
	}
	clear(s.loadedIn)
	s.loadedIn = s.loadedIn[:0]
}

// applyDisk is Apply on a disk store: the records, the counts they change
// and the position SetPosition set, in one batch, not synced: a restore
// that a kill cut short starts again from the position that reached the
// disk, which Sync makes its last.
func (s *Store) applyDisk(p *Part, recs iter.Seq2[[]byte, []byte]) (int, error) {
	b := s.disk.db.NewIndexedBatch()
	adding, done := s.disk.writing()
	defer done()
	var dkey []byte // its own: a restore calls Apply beside the run goroutine, whose s.dkey is
	n := 0
	for key, val := range recs {
		dkey = stateKey(dkey, p.id, string(key))
		old, closer, err := s.disk.batchGet(b, dkey)
		switch {
		case errors.Is(err, pebble.ErrNotFound):
		case err != nil:
			return n, err
		default:
			p.keys--
			p.bytes -= int64(len(key) + len(old))
			closer.Close()
		}
		if val == nil {
			b.Delete(dkey, nil)
		} else {
			s.disk.setPoint(b, adding, dkey, val)
			p.keys++
			p.bytes += int64(len(key) + len(val))
		}
		n++
	}
	s.writeMeta(b, p)
	if err := b.Commit(pebble.NoSync); err != nil {
		return n, err
	}
	return n, s.disk.syncSoon()
}

// Sync makes what a disk store's Applies wrote survive a kill, or a
// machine's crash: a restore calls it once it is done. A store in memory
// has nothing to sync.
func (s *Store) Sync() error {
	if s.disk == nil {
		return nil
	}
	return s.disk.db.LogData(nil, pebble.Sync)
}

// diskGet is Part.Get on a disk store: the disk's committed state.
func (p *Part) diskGet(key []byte) ([]byte, bool, error) {
	var raw []byte
	err := p.disk.reading(func(db *pebble.DB) (err error) {
		raw, err = p.disk.get(db, stateKey(nil, p.id, string(key)))
		return err
	})
	return raw, raw != nil, err
}

// diskRange is Part.Range on a disk store, in key order.
func (p *Part) diskRange(from, to []byte, fn func(key, value []byte) bool) error {
	return p.disk.reading(func(db *pebble.DB) error {
		prefix := statePrefix(p.id)
		o := &pebble.IterOptions{LowerBound: append(bytes.Clone(prefix), from...), UpperBound: statePrefix(p.id + 1)}
		if to != nil {
			o.UpperBound = append(append(bytes.Clone(prefix), to...), 0) // to included
		}
		it, err := db.NewIter(o)
		if err != nil {
			return err
		}
		defer it.Close()
		for it.First(); it.Valid(); it.Next() {
			if !fn(bytes.Clone(it.Key()[len(prefix):]), bytes.Clone(it.Value())) {
				break
			}
		}
		return it.Error()
	})
}

// Partitions returns the partitions the disk holds state of, in order.
func (d *Disk) Partitions() ([]int32, error) {
	var ids []int32
	err := d.reading(func(db *pebble.DB) error {
		prefix := []byte{diskMeta, 'p'}
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: []byte{diskMeta, 'p' + 1}})
		if err != nil {
			return err
		}
		defer it.Close()
		for it.First(); it.Valid(); it.Next() {
			if k := it.Key(); len(k) == len(prefix)+4 {
				ids = append(ids, int32(binary.BigEndian.Uint32(k[len(prefix):])))
			}
		}
		return it.Error()
	})
	return ids, err
}

// PartitionBytes returns, for each partition the disk holds state of,
// an estimate of the bytes its files take: pebble's, from its files'
// bounds, so that what is still in its memtable counts nothing until it
// is flushed.
func (d *Disk) PartitionBytes() (map[int32]int64, error) {
	ids, err := d.Partitions()
	if err != nil {
		return nil, err
	}
	out := make(map[int32]int64, len(ids))
	err = d.reading(func(db *pebble.DB) error {
		for _, id := range ids {
			var n uint64
			for _, space := range []byte{diskState, diskWindow, diskClose, diskMarker} {
				b, err := db.EstimateDiskUsage(spacePrefix(space, id), spacePrefix(space, id+1))
				if err != nil {
					return err
				}
				n += b
			}
			out[id] = int64(n)
		}
		return nil
	})
	return out, err
}
