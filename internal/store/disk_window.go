package store

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// A windowed store on disk: each open window under its key, and an index
// of the windows by close time, which CloseDue reads up to the stream
// time instead of walking every key (see disk.go for the keys' layout).
// A batch loads a key's windows whole when it folds an input of the key,
// or closes one of its windows.

// appendEscaped appends key escaped and ended: 0x00 as 0x00 0xff, then
// 0x00 0x01, which keeps bytewise order and makes a key's windows a
// prefix no other key's share.
func appendEscaped(b []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		b = append(b, key[i])
		if key[i] == 0 {
			b = append(b, 0xff)
		}
	}
	return append(b, 0, 1)
}

// cutEscaped reads an escaped key off the front of b, and returns it and
// what follows.
func cutEscaped(b []byte) (key []byte, rest []byte, ok bool) {
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0 {
			key = append(key, b[i])
			continue
		}
		switch b[i+1] {
		case 0xff:
			key = append(key, 0)
			i++
		case 1:
			return key, b[i+2:], true
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// sortable is t as 8 bytes that sort as t does.
func sortable(b []byte, t int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(t)^1<<63)
}

// windowsPrefix is the prefix of key's windows in partition.
func windowsPrefix(buf []byte, partition int32, key string) []byte {
	return appendEscaped(append(buf[:0], spacePrefix(diskWindow, partition)...), key)
}

// diskWindowKey is a window's key.
func diskWindowKey(buf []byte, partition int32, key string, start, end int64) []byte {
	b := windowsPrefix(buf, partition, key)
	b = binary.BigEndian.AppendUint64(b, uint64(start))
	return binary.BigEndian.AppendUint64(b, uint64(end))
}

// closeKey is a window's entry in the index of close times.
func closeKey(buf []byte, partition int32, at int64, key string, start, end int64) []byte {
	b := sortable(append(buf[:0], spacePrefix(diskClose, partition)...), at)
	b = appendEscaped(b, key)
	b = binary.BigEndian.AppendUint64(b, uint64(start))
	return binary.BigEndian.AppendUint64(b, uint64(end))
}

// loadWindows returns key's slot in p, its windows read from the disk
// when the batch has not loaded it yet (nil: no window).
func (s *Store) loadWindows(p *Part, key string) (*slot, error) {
	if sl := p.slots[key]; sl != nil || s.disk == nil {
		return sl, nil
	}
	// A range read passes the bloom filters by: the marker's point read
	// answers for a key without windows (every new key) first.
	s.dkey = markerKey(s.dkey, p.id, key)
	if !s.disk.mayHave(s.dkey) {
		return nil, nil
	}
	if _, closer, err := s.disk.db.Get(s.dkey); errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	} else {
		closer.Close()
	}
	prefix := windowsPrefix(nil, p.id, key)
	it, err := s.disk.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: append(bytes.Clone(prefix[:len(prefix)-1]), 2)})
	if err != nil {
		return nil, err
	}
	var wins []*Window
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()[len(prefix):]
		if len(k) != 16 {
			it.Close()
			return nil, fmt.Errorf("a window's key of %d bytes after its key", len(k))
		}
		wins = append(wins, &Window{start: int64(binary.BigEndian.Uint64(k)), end: int64(binary.BigEndian.Uint64(k[8:])), cell: cell{raw: bytes.Clone(it.Value())}})
	}
	if err := cmp.Or(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	if len(wins) == 0 {
		return nil, nil
	}
	slices.SortFunc(wins, func(a, b *Window) int { return cmp.Compare(a.start, b.start) })
	sl := &slot{key: key, wins: wins}
	p.mu.Lock()
	p.slots[key] = sl
	p.mu.Unlock()
	s.touch(p)
	return sl, nil
}

// loadDue loads the keys of p's windows whose close time the stream time
// reached, and returns the earliest close time after it (MaxInt64: none).
func (s *Store) loadDue(p *Part) (next int64, err error) {
	lo := spacePrefix(diskClose, p.id)
	it, err := s.disk.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: spacePrefix(diskClose, p.id+1)})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()[len(lo):]
		at := int64(binary.BigEndian.Uint64(k) ^ 1<<63)
		if at > p.btime {
			return at, nil
		}
		key, _, ok := cutEscaped(k[8:])
		if !ok {
			return 0, errors.New("a close index entry without its key")
		}
		if _, err := s.loadWindows(p, string(key)); err != nil {
			return 0, err
		}
	}
	return math.MaxInt64, it.Error()
}

// firstClose returns the earliest close time in p's index after after.
func (s *Store) firstClose(p *Part, after int64) (int64, bool, error) {
	lo := spacePrefix(diskClose, p.id)
	it, err := s.disk.db.NewIter(&pebble.IterOptions{LowerBound: sortable(bytes.Clone(lo), satAdd(after, 1)), UpperBound: spacePrefix(diskClose, p.id+1)})
	if err != nil {
		return 0, false, err
	}
	defer it.Close()
	if !it.First() {
		return 0, false, it.Error()
	}
	return int64(binary.BigEndian.Uint64(it.Key()[len(lo):]) ^ 1<<63), true, nil
}

// writeWindow adds to b what the batch did to window w of key: a window
// made is set and indexed, one changed set, one closed deleted with its
// index entry (one both made and closed by the batch never reaches the
// disk).
func (s *Store) writeWindow(b *pebble.Batch, p *Part, key string, w *Window) {
	made, closed := w.born == s.batch, w.closed == s.batch
	if made && closed {
		return
	}
	s.dkey = diskWindowKey(s.dkey, p.id, key, w.start, w.end)
	switch {
	case closed:
		b.Delete(s.dkey, nil)
		b.Delete(closeKey(nil, p.id, s.win.closeAt(w.end), key, w.start, w.end), nil)
	default:
		b.Set(s.dkey, w.raw, nil)
		if made {
			b.Set(closeKey(nil, p.id, s.win.closeAt(w.end), key, w.start, w.end), nil, nil)
		}
	}
}

// markerKey is the key of key's marker in partition, in buf.
func markerKey(buf []byte, partition int32, key string) []byte {
	return append(binary.BigEndian.AppendUint32(append(buf[:0], diskMarker), uint32(partition)), key...)
}

// writeMarker adds to b key sl's marker as the batch leaves it: set
// when it keeps a window, deleted when it keeps none. Once per key and
// batch.
func (s *Store) writeMarker(b *pebble.Batch, adding []*keyFilter, p *Part, sl *slot) {
	if sl.marked == s.batch {
		return
	}
	sl.marked = s.batch
	mk := markerKey(nil, p.id, sl.key)
	if slices.ContainsFunc(sl.wins, func(w *Window) bool { return w.closed != s.batch }) {
		s.disk.setPoint(b, adding, mk, nil)
	} else {
		b.Delete(mk, nil)
	}
}

// applyDiskWindows is Apply on a windowed disk store: the windows and the
// stream time the records set, the counts they change and the position
// SetPosition set, in one batch, not synced (see applyDisk).
func (s *Store) applyDiskWindows(p *Part, recs iter.Seq2[[]byte, []byte]) (int, error) {
	b := s.disk.db.NewIndexedBatch()
	adding, done := s.disk.writing()
	defer done()
	var wkey []byte // its own: a restore calls Apply beside the run goroutine
	n := 0
	for rkey, val := range recs {
		if string(rkey) == timeKey {
			if len(val) != 8 {
				return n, fmt.Errorf("stream time: %d bytes, want 8", len(val))
			}
			p.time = int64(binary.BigEndian.Uint64(val))
			n++
			continue
		}
		if len(rkey) < 16 {
			return n, fmt.Errorf("key of %d bytes: not a window's", len(rkey))
		}
		key := string(rkey[:len(rkey)-16])
		start := int64(binary.BigEndian.Uint64(rkey[len(key):]))
		end := int64(binary.BigEndian.Uint64(rkey[len(key)+8:]))
		wkey = diskWindowKey(wkey, p.id, key, start, end)
		old, closer, err := b.Get(wkey)
		had := err == nil
		switch {
		case errors.Is(err, pebble.ErrNotFound):
		case err != nil:
			return n, err
		default:
			p.windows--
			p.bytes -= int64(len(key) + 16 + len(old))
			closer.Close()
		}
		at := s.win.closeAt(end)
		if val == nil {
			b.Delete(wkey, nil)
			b.Delete(closeKey(nil, p.id, at, key, start, end), nil)
			// The key's last window gone: its marker goes, and the key
			// is no longer counted. (A range read, but at a window's
			// close only, not at each update.)
			if had {
				if left, err := s.keyWindows(b, p.id, key); err != nil {
					return n, err
				} else if left == 0 {
					p.keys--
					b.Delete(markerKey(nil, p.id, key), nil)
				}
			}
		} else {
			b.Set(wkey, val, nil)
			b.Set(closeKey(nil, p.id, at, key, start, end), nil, nil)
			p.windows++
			p.bytes += int64(len(key) + 16 + len(val))
			p.minClose = min(p.minClose, at)
			// A key's first window: its marker, a point read, says
			// whether it had one.
			if !had {
				mk := markerKey(nil, p.id, key)
				if _, closer, err := s.disk.batchGet(b, mk); errors.Is(err, pebble.ErrNotFound) {
					p.keys++
					s.disk.setPoint(b, adding, mk, nil)
				} else if err != nil {
					return n, err
				} else {
					closer.Close()
				}
			}
		}
		n++
	}
	p.btime, p.bminClose = p.time, p.minClose
	s.writeMeta(b, p)
	if err := b.Commit(pebble.NoSync); err != nil {
		return n, err
	}
	return n, s.disk.syncSoon()
}

// keyWindows counts key's windows in b, up to 2.
func (s *Store) keyWindows(b *pebble.Batch, partition int32, key string) (int, error) {
	prefix := windowsPrefix(nil, partition, key)
	it, err := b.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: append(bytes.Clone(prefix[:len(prefix)-1]), 2)})
	if err != nil {
		return 0, err
	}
	n := 0
	for it.First(); it.Valid() && n < 2; it.Next() {
		n++
	}
	return n, cmp.Or(it.Error(), it.Close())
}

// diskWindows is Part.Windows on a disk store.
func (p *Part) diskWindows(from, to []byte, since, until int64, fn func(key []byte, start, end int64, value []byte) bool) error {
	prefix := spacePrefix(diskWindow, p.id)
	o := &pebble.IterOptions{LowerBound: appendEscaped(bytes.Clone(prefix), string(from)), UpperBound: spacePrefix(diskWindow, p.id+1)}
	if from == nil {
		o.LowerBound = prefix
	}
	if to != nil {
		end := appendEscaped(bytes.Clone(prefix), string(to))
		o.UpperBound = append(end[:len(end)-1], 2) // to's windows included
	}
	type found struct {
		key        []byte
		start, end int64
		raw        []byte
	}
	var got []found
	err := p.disk.reading(func(db *pebble.DB) error {
		it, err := db.NewIter(o)
		if err != nil {
			return err
		}
		for it.First(); it.Valid(); it.Next() {
			key, rest, ok := cutEscaped(it.Key()[len(prefix):])
			if !ok || len(rest) != 16 {
				it.Close()
				return errors.New("a window's key that does not read")
			}
			start := int64(binary.BigEndian.Uint64(rest))
			if start >= since && start <= until {
				got = append(got, found{key, start, int64(binary.BigEndian.Uint64(rest[8:])), bytes.Clone(it.Value())})
			}
		}
		return cmp.Or(it.Error(), it.Close())
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(got, func(a, b found) int { return cmp.Or(bytes.Compare(a.key, b.key), cmp.Compare(a.start, b.start)) })
	for _, f := range got {
		if !fn(f.key, f.start, f.end, f.raw) {
			break
		}
	}
	return nil
}
