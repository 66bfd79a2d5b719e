package store

import (
	"hash/maphash"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// The disk's key filter: a bloom filter, in memory, of the keys the
// disk's point reads ask for (a per-key store's states, a windowed
// store's markers), so that a read of a key the disk lacks is answered
// without pebble. Why: a stream's every new key is such a read, and
// pebble answers it by searching its memtable, a skiplist of up to
// diskMemTable bytes, before its files' bloom filters; that search was
// 31 % of a disk stream's CPU over 1M new keys, the whole of what the
// disk cost over memory (bench/clients/diskstate, its CPU profile).
// RocksDB's answer is a filter on the memtable (whole-key filtering);
// pebble has none, so the store keeps one over the whole disk.
//
// The filter must hold every key the disk holds, or a read would miss a
// state that is there. So a filter is built by a scan of the disk that
// runs beside the stream, and is used only once the scan ended; every
// write made from the scan's start on adds its keys to it too
// (setPoint). A mutex orders the two: a batch's writer holds it shared
// from the filters it adds to until the batch is committed, and the
// scan takes it alone to start, so a batch is either in the scan's view
// of the disk or adds to the filter being built. Deletions leave a key
// in the filter: a read of it asks pebble, as without a filter. Once
// the filter holds more keys than it was made for, a filter twice its
// size is built the same way, while the first goes on answering.

// filterBitsPerKey is the filter's size per key it is made for: some
// 1 % of reads of keys the disk lacks then still ask pebble.
const filterBitsPerKey = 10

// filterMinKeys is the keys the smallest filter is made for (1.25 MiB).
// A variable: tests make it small, to grow filters.
var filterMinKeys int64 = defaultFilterMinKeys

const defaultFilterMinKeys = 1 << 20

// keyFilter is a blocked bloom filter: each key sets filterProbes bits
// of one 512-bit block (a cache line's), so that a lookup reads one
// line. Safe for concurrent use: bits are set atomically.
type keyFilter struct {
	seed   maphash.Seed
	blocks []filterBlock // outside Go's heap (filterMemory): free gives them back
	free   func()
	keys   int64        // the keys it is made for
	added  atomic.Int64 // keys added that it did not hold (a key that seemed held is not counted)
}

// filterBlock is a filter's 512 bits that one key's probes set.
type filterBlock [8]atomic.Uint64

// filterProbes is the bits a key sets: the fewest false answers at
// filterBitsPerKey.
const filterProbes = 7

// newKeyFilter returns an empty filter for keys keys (filterMinKeys at
// least).
func newKeyFilter(keys int64) *keyFilter {
	keys = max(keys, filterMinKeys)
	f := &keyFilter{seed: maphash.MakeSeed(), keys: keys}
	f.blocks, f.free = filterMemory(int((keys*filterBitsPerKey + 511) / 512))
	return f
}

// probe returns key's block and the first bit and step of its probes.
func (f *keyFilter) probe(key []byte) (b *filterBlock, h1, h2 uint32) {
	h := maphash.Bytes(f.seed, key)
	i, _ := bits.Mul64(h, uint64(len(f.blocks)))
	return &f.blocks[i], uint32(h), uint32(h>>32) | 1
}

// add adds key, and tells whether the filter grew past the keys it was
// made for.
func (f *keyFilter) add(key []byte) (full bool) {
	b, h1, h2 := f.probe(key)
	var fresh bool
	for range filterProbes {
		bit := h1 & 511
		m := uint64(1) << (bit & 63)
		if b[bit>>6].Or(m)&m == 0 {
			fresh = true
		}
		h1 += h2
	}
	if fresh {
		return f.added.Add(1) > f.keys
	}
	return false
}

// mayHave tells whether key may have been added; false means it was not.
func (f *keyFilter) mayHave(key []byte) bool {
	b, h1, h2 := f.probe(key)
	for range filterProbes {
		bit := h1 & 511
		if b[bit>>6].Load()&(uint64(1)<<(bit&63)) == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

// filters are a Disk's key filters: the one in use, and the one being
// built.
type filters struct {
	// mu is held shared by a batch's writer from the filters it adds to
	// until its commit, and by a read of cur; alone by a scan to start
	// (see above), and to put a filter in use or drop one, whose memory
	// is then given back: no one reads it any more.
	mu   sync.RWMutex
	cur  atomic.Pointer[keyFilter] // complete: it answers reads
	next *keyFilter                // being built by a scan; guarded by mu

	building atomic.Bool  // a scan is running
	built    atomic.Int64 // filters built, for tests

	life   sync.Mutex // guards closed and scans.Add against Close
	closed bool
	stop   chan struct{} // closed by Close: a scan ends
	scans  sync.WaitGroup
}

// mayHave tells whether the disk may hold key: false when the filter in
// use says it does not.
func (d *Disk) mayHave(key []byte) bool {
	d.filters.mu.RLock()
	defer d.filters.mu.RUnlock()
	return d.mayHaveLocked(key)
}

// mayHaveLocked is mayHave for a caller that holds the filters' lock.
func (d *Disk) mayHaveLocked(key []byte) bool {
	f := d.filters.cur.Load()
	return f == nil || f.mayHave(key)
}

// batchGet is b.Get of a point-read key, in an indexed batch whose
// writer holds the filters (writing): the filter answers for a key that
// neither the disk nor the batch holds.
func (d *Disk) batchGet(b *pebble.Batch, key []byte) ([]byte, io.Closer, error) {
	if !d.mayHaveLocked(key) {
		return nil, nil, pebble.ErrNotFound
	}
	return b.Get(key)
}

// writing returns the filters a batch's point writes add to, holding the
// filters' lock shared until done is called, after the batch's commit.
func (d *Disk) writing() (adding []*keyFilter, done func()) {
	fs := &d.filters
	fs.mu.RLock()
	if f := fs.cur.Load(); f != nil {
		adding = append(adding, f)
	}
	if fs.next != nil {
		adding = append(adding, fs.next)
	}
	return adding, fs.mu.RUnlock
}

// setPoint sets a point-read key in b, adding it to the filters; a
// filter in use that grows past its size has a larger one built.
func (d *Disk) setPoint(b *pebble.Batch, adding []*keyFilter, key, value []byte) {
	for _, f := range adding {
		if f.add(key) && f == d.filters.cur.Load() {
			d.buildFilter(2 * f.keys)
		}
	}
	b.Set(key, value, nil)
}

// buildFilter starts a scan that builds a filter for keys (or more, as
// it finds), unless one is running or the disk is closing.
func (d *Disk) buildFilter(keys int64) {
	fs := &d.filters
	fs.life.Lock()
	defer fs.life.Unlock()
	if fs.closed || !fs.building.CompareAndSwap(false, true) {
		return
	}
	fs.scans.Add(1)
	go func() {
		defer fs.scans.Done()
		defer fs.building.Store(false)
		if err := d.scanFilter(keys); err != nil {
			d.log("state store: the filter of its keys: " + err.Error())
		}
	}()
}

// scanFilter builds a filter by a scan of the disk's point-read keys, and
// puts it in use. A closing disk stops it.
func (d *Disk) scanFilter(keys int64) error {
	fs := &d.filters
	f := newKeyFilter(keys)
	fs.mu.Lock() // waits out the batches that do not add to f: the scan sees them
	fs.next = f
	fs.mu.Unlock()
	drop := func() {
		fs.mu.Lock()
		fs.next = nil
		fs.mu.Unlock()
		f.free()
	}
	for _, space := range []byte{diskState, diskMarker} {
		it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{space}, UpperBound: []byte{space + 1}})
		if err != nil {
			drop()
			return err
		}
		n := 0
		for it.First(); it.Valid(); it.Next() {
			if n++; n%4096 == 0 {
				select {
				case <-fs.stop:
					it.Close()
					drop()
					return nil
				default:
				}
			}
			f.add(it.Key())
		}
		if err := it.Close(); err != nil {
			drop()
			return err
		}
	}
	if f.added.Load() > f.keys { // more than the disk said: build one that fits
		drop()
		return d.scanFilter(2 * f.added.Load())
	}
	fs.mu.Lock()
	old := fs.cur.Swap(f)
	fs.next = nil
	fs.mu.Unlock()
	if old != nil {
		old.free()
	}
	fs.built.Add(1)
	return nil
}

// filterKeys is the point-read keys the partitions on db say they hold.
func filterKeys(db *pebble.DB) (int64, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{diskMeta, 'p'}, UpperBound: []byte{diskMeta, 'p' + 1}})
	if err != nil {
		return 0, err
	}
	var n int64
	for it.First(); it.Valid(); it.Next() {
		if m, err := decodeMeta(it.Value()); err == nil {
			n += m.keys
		}
	}
	return n, it.Close()
}

// startFilter builds the disk's first filter, for a quarter more keys
// than it holds, beside the stream.
func (d *Disk) startFilter() {
	d.filters.stop = make(chan struct{})
	n, err := filterKeys(d.db)
	if err != nil {
		d.log("state store: the filter of its keys: " + err.Error())
		return
	}
	d.buildFilter(n + n/4)
}

// stopFilter ends a scan in progress, and starts none, before the disk
// closes.
func (d *Disk) stopFilter() {
	fs := &d.filters
	fs.life.Lock()
	if !fs.closed {
		fs.closed = true
		close(fs.stop)
	}
	fs.life.Unlock()
	fs.scans.Wait()
	fs.mu.Lock()
	if f := fs.cur.Swap(nil); f != nil {
		f.free()
	}
	fs.mu.Unlock()
}
