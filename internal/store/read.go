package store

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Reads of the committed state, from any goroutine (see the package doc):
// what a query of a stream's state, or a standby's, is made of.

// Partitions returns the partitions the store holds, in order.
func (s *Store) Partitions() []int32 {
	s.mu.RLock()
	ps := slices.Collect(maps.Keys(s.parts))
	s.mu.RUnlock()
	slices.Sort(ps)
	return ps
}

// readable returns the part of partition, held, for a read of a windowed
// store (windowed) or of a per-key one: an ErrKind when s is of the other
// kind, an ErrNotHeld when it does not hold partition.
func (s *Store) readable(partition int32, windowed bool) (*Part, error) {
	if windowed != (s.win != nil) {
		return nil, fmt.Errorf("%w: Get and Range read a per-key store, Windows a windowed one", ErrKind)
	}
	s.mu.RLock()
	p := s.parts[partition]
	s.mu.RUnlock()
	if p == nil {
		return nil, fmt.Errorf("%w: %d", ErrNotHeld, partition)
	}
	return p, nil
}

// committed returns the committed encoding of cell c, which the batch
// that logged it last (touched) logged at p.changes[log]; the caller
// holds p.mu.
func (p *Part) committed(c *cell, touched uint64, log int) []byte {
	if p.open != 0 && touched == p.open {
		return p.changes[log].old.raw
	}
	return c.raw
}

// Get returns a copy of the encoding of key's committed state in
// partition (a per-key store's), and whether it has one.
func (s *Store) Get(partition int32, key []byte) ([]byte, bool, error) {
	p, err := s.readable(partition, false)
	if err != nil {
		return nil, false, err
	}
	return p.Get(key)
}

// Get returns a copy of the encoding of key's committed state in p (a
// per-key store's part, held or not: a standby's), and whether it has
// one. Any goroutine may call it.
func (p *Part) Get(key []byte) ([]byte, bool, error) {
	if p.disk != nil {
		return p.diskGet(key)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	sl := p.slots[string(key)]
	if sl == nil {
		return nil, false, nil
	}
	raw := p.committed(&sl.cell, sl.touched, sl.log)
	return slices.Clone(raw), raw != nil, nil
}

// Range calls fn with each key of partition (a per-key store's) from
// from to to, both included (nil: no bound), that has a committed state,
// in key order (bytewise), and a copy of the state's encoding, until fn
// returns false. It copies the keys and states in range, and sorts them,
// before it calls fn.
func (s *Store) Range(partition int32, from, to []byte, fn func(key, value []byte) bool) error {
	p, err := s.readable(partition, false)
	if err != nil {
		return err
	}
	return p.Range(from, to, fn)
}

// Range is [Store.Range] of p (a per-key store's part, held or not: a
// standby's). Any goroutine may call it. A disk part's reads of the disk
// may fail.
func (p *Part) Range(from, to []byte, fn func(key, value []byte) bool) error {
	if p.disk != nil {
		return p.diskRange(from, to, fn)
	}
	type found struct {
		key string
		raw []byte
	}
	var got []found
	p.mu.Lock()
	for key, sl := range p.slots {
		if within(key, from, to) {
			if raw := p.committed(&sl.cell, sl.touched, sl.log); raw != nil {
				got = append(got, found{key, slices.Clone(raw)})
			}
		}
	}
	p.mu.Unlock()
	slices.SortFunc(got, func(a, b found) int { return strings.Compare(a.key, b.key) })
	for _, f := range got {
		if !fn([]byte(f.key), f.raw) {
			break
		}
	}
	return nil
}

// within tells whether key is in [from, to], nil meaning no bound.
func within(key string, from, to []byte) bool {
	return (from == nil || key >= string(from)) && (to == nil || key <= string(to))
}

// Windows calls fn with each committed window of partition (a windowed
// store's) whose key is from from to to, both included (nil: no bound),
// and whose start is from since to until, both included (ms since the
// Unix epoch), in key order (bytewise), then start order, with its start
// and end (see [Window]) and a copy of its aggregate's encoding, until
// fn returns false. For one key, from and to are that key. It copies the
// windows in range, and sorts them, before it calls fn.
func (s *Store) Windows(partition int32, from, to []byte, since, until int64, fn func(key []byte, start, end int64, value []byte) bool) error {
	p, err := s.readable(partition, true)
	if err != nil {
		return err
	}
	return p.Windows(from, to, since, until, fn)
}

// Windows is [Store.Windows] of p (a windowed store's part, held or not:
// a standby's). Any goroutine may call it.
func (p *Part) Windows(from, to []byte, since, until int64, fn func(key []byte, start, end int64, value []byte) bool) error {
	if p.disk != nil {
		return p.diskWindows(from, to, since, until, fn)
	}
	type found struct {
		key        string
		start, end int64
		raw        []byte
	}
	var got []found
	add := func(sl *slot) {
		for _, w := range sl.wins {
			if w.start < since || w.start > until {
				continue
			}
			if raw := p.committed(&w.cell, w.touched, w.log); raw != nil {
				got = append(got, found{sl.key, w.start, w.end, slices.Clone(raw)})
			}
		}
	}
	p.mu.Lock()
	if from != nil && to != nil && string(from) == string(to) { // one key: no walk of them all
		if sl := p.slots[string(from)]; sl != nil {
			add(sl)
		}
	} else {
		for key, sl := range p.slots {
			if within(key, from, to) {
				add(sl)
			}
		}
	}
	p.mu.Unlock()
	slices.SortFunc(got, func(a, b found) int { return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.start, b.start)) })
	for _, f := range got {
		if !fn([]byte(f.key), f.start, f.end, f.raw) {
			break
		}
	}
	return nil
}
