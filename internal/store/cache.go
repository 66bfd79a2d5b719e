package store

import "bytes"

// stateCache is a disk store's cache of the committed states of the keys
// its batches read and wrote last, in memory, so that a key read again
// soon is not read from pebble: a read of a key the disk holds searches
// pebble's memtable, a skiplist, and then its files, some 2 µs an input
// against 0.35 in memory (BenchmarkDiskBatch "known"). It holds at most
// cacheBytes, in two generations: a key read from the older one moves
// to the newer, and once the newer holds half of cacheBytes, the older
// is dropped and the newer takes its place, so that the keys read least
// lately go first. Run goroutine only; a per-key store's only (a
// windowed key's windows are a range read, not cached).
//
// It holds committed states only: a key enters it when a batch reads it
// from the disk, a batch's commit updates the keys it holds with the
// disk's (a new key enters it only when read again: a stream's first run
// over many keys does not churn it), and an abort leaves it as it was. Adopt and
// Drop empty it: a partition's state on disk may then change without
// the batches (a restore's Apply, a standby's), and a rebalance is rare.
type stateCache struct {
	cur, old map[string][]byte // the disk's key (partition and key) to its state's encoding; nil: none
	bytes    int               // what cur holds
}

// cacheBytes is the most a store's stateCache holds, its keys, states
// and the maps' own share (cacheEntry a key).
const (
	cacheBytes = 32 << 20
	cacheEntry = 64
)

// get returns key's committed state, and whether the cache knows it.
func (c *stateCache) get(key []byte) ([]byte, bool) {
	if raw, ok := c.cur[string(key)]; ok {
		return raw, true
	}
	raw, ok := c.old[string(key)]
	if ok {
		c.put(key, raw)
	}
	return raw, ok
}

// update sets key's committed state to a copy of raw (nil: none), if
// the cache holds key.
func (c *stateCache) update(key, raw []byte) {
	if old, ok := c.cur[string(key)]; ok {
		c.bytes += len(raw) - len(old)
		c.cur[string(key)] = bytes.Clone(raw)
	} else if _, ok := c.old[string(key)]; ok {
		c.old[string(key)] = bytes.Clone(raw)
	}
}

// put sets key's committed state (nil: none). raw is the cache's from
// now on: no one changes it.
func (c *stateCache) put(key, raw []byte) {
	if c.cur == nil {
		c.cur = map[string][]byte{}
	}
	if c.bytes >= cacheBytes/2 {
		c.old, c.cur, c.bytes = c.cur, make(map[string][]byte, len(c.cur)), 0
	}
	if old, ok := c.cur[string(key)]; ok {
		c.bytes -= len(old)
	} else {
		c.bytes += len(key) + cacheEntry
	}
	c.bytes += len(raw)
	c.cur[string(key)] = raw
}

// clear empties the cache.
func (c *stateCache) clear() {
	c.cur, c.old, c.bytes = nil, nil, 0
}
