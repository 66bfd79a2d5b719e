package store

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"
)

// maxPresize caps the size Grow gives a partition's map of keys.
const maxPresize = 1 << 20

// Grow sizes p's map of keys for n keys, up to a cap, when p holds none
// yet: a restore knows the changelog's offsets, which bound its keys, and
// the map is then not grown and rehashed step by step (a third of a
// million-key restore's time). Capped, since offsets overwritten or
// compacted away outnumber the keys. p's owner calls it.
func (s *Store) Grow(p *Part, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n > 0 && len(p.slots) == 0 && s.disk == nil {
		p.slots = make(map[string]*slot, min(n, maxPresize))
	}
}

// Apply applies changelog records of (key, value), in order, to p's
// committed state, as a restore reads them: a nil value is a tombstone.
// It holds p's lock throughout (it changes the keys and counts), so that
// a caller
// applies records in chunks, not one at a time (a lock per record of a
// million cost). It returns how many records it applied; on an error,
// the record after those is the one that failed. A disk store writes
// the records, and the position SetPosition set, to the disk in one
// batch. p's owner calls it, on a part no batch
// changes: a restore's, not held yet (or a held one of a store that no
// batch changes, only Apply).
func (s *Store) Apply(p *Part, recs iter.Seq2[[]byte, []byte]) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.disk != nil && s.win != nil {
		return s.applyDiskWindows(p, recs)
	}
	if s.disk != nil {
		return s.applyDisk(p, recs)
	}
	n := 0
	for key, val := range recs {
		if err := s.apply(p, key, val); err != nil {
			return n, err
		}
		n++
	}
	p.btime, p.bminClose = p.time, p.minClose
	return n, nil
}

// apply applies one changelog record; the caller holds p.mu.
func (s *Store) apply(p *Part, rkey, val []byte) error {
	if s.win == nil {
		// One lookup, then a change in place or a delete.
		sl := p.slots[string(rkey)]
		if sl != nil {
			s.count(p, sl, -1)
		}
		if val == nil {
			if sl != nil {
				delete(p.slots, sl.key)
			}
			return nil
		}
		if sl == nil {
			sl = &slot{key: string(rkey)}
			p.slots[sl.key] = sl
		}
		sl.cell = cell{raw: slices.Clone(val)}
		s.count(p, sl, 1)
		return nil
	}
	key := string(rkey)
	if key == timeKey {
		if len(val) != 8 {
			return fmt.Errorf("stream time: %d bytes, want 8", len(val))
		}
		p.time = int64(binary.BigEndian.Uint64(val))
		return nil
	}
	if len(key) < 16 {
		return fmt.Errorf("key of %d bytes: not a window's", len(key))
	}
	k := key[:len(key)-16]
	start := int64(binary.BigEndian.Uint64(rkey[len(k):]))
	end := int64(binary.BigEndian.Uint64(rkey[len(k)+8:]))
	sl := p.slots[k]
	if sl != nil {
		s.count(p, sl, -1)
		sl.wins = slices.DeleteFunc(sl.wins, func(w *Window) bool { return w.start == start && w.end == end })
	}
	if val != nil {
		if sl == nil {
			sl = &slot{key: k}
			p.slots[k] = sl
		}
		w := &Window{start: start, end: end, cell: cell{raw: slices.Clone(val)}}
		i, _ := slices.BinarySearchFunc(sl.wins, start, func(w *Window, s int64) int { return cmp.Compare(w.start, s) })
		sl.wins = slices.Insert(sl.wins, i, w)
		p.minClose = min(p.minClose, s.win.closeAt(w.end))
	}
	switch {
	case sl == nil:
	case len(sl.wins) == 0:
		delete(p.slots, k)
	default:
		s.count(p, sl, 1)
	}
	return nil
}
