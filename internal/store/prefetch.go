package store

import (
	"iter"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// A disk store's reads of a batch's keys, ahead of the batch, on a
// goroutine of their own: the second core reads a key's committed state
// from pebble while the run goroutine transforms the inputs before it.
// Why: over keys the disk holds, pebble's read was a fifth of a disk
// stream's CPU, all of it on the run goroutine (bench/clients/diskstate
// -passes 3, its CPU profile).
//
// What a prefetch read is the committed state, as the batch's first read
// of the key would read it: the disk changes only when a batch commits
// (the run goroutine's), or by a restore or a standby's copy of a
// partition not held, and a prefetch reads held partitions only and
// ends before the batch does (end stops it). A key the batch read or set
// before is in its slots, which load asks first.

// prefetch is a batch's reads ahead.
type prefetch struct {
	keys map[prefetchKey]*prefetched // made before the goroutine starts; read-only after
	stop atomic.Bool
	done chan struct{} // closed when the goroutine returns
}

type prefetchKey struct {
	part int32
	key  string
}

// prefetched is a key's read ahead: pending, then taken by the run
// goroutine (which reads the disk itself) or read by the prefetch.
type prefetched struct {
	state atomic.Int32
	raw   []byte // set before state becomes prefetchRead
}

const (
	prefetchPending = iota
	prefetchTaken
	prefetchRead
)

// Prefetch has a disk store read the committed states of keys (a
// partition and a key each) on another goroutine, ahead of the batch in
// hand's reads of them: a read of a key read ahead uses what it read. A
// batch's end stops it, and so does the next Prefetch. Keys of
// partitions not held are left. A store in memory or windowed ignores
// it. Run goroutine only.
func (s *Store) Prefetch(keys iter.Seq2[int32, []byte]) {
	if s.disk == nil || s.win != nil {
		return
	}
	s.stopPrefetch()
	pf := &prefetch{keys: map[prefetchKey]*prefetched{}, done: make(chan struct{})}
	var order []prefetchKey
	for part, key := range keys {
		k := prefetchKey{part, string(key)}
		if _, dup := pf.keys[k]; dup || s.parts[part] == nil {
			continue
		}
		pf.keys[k] = &prefetched{}
		order = append(order, k)
	}
	if len(order) == 0 {
		return
	}
	s.pf = pf
	go func() {
		defer close(pf.done)
		var dkey []byte
		for _, k := range order {
			if pf.stop.Load() {
				return
			}
			e := pf.keys[k]
			if e.state.Load() != prefetchPending {
				continue
			}
			dkey = stateKey(dkey, k.part, k.key)
			if s.disk.mayHave(dkey) {
				err := s.disk.reading(func(db *pebble.DB) (err error) {
					e.raw, err = s.disk.get(db, dkey)
					return err
				})
				if err != nil { // the run goroutine reads it, and meets the error
					return
				}
			}
			e.state.CompareAndSwap(prefetchPending, prefetchRead)
		}
	}()
}

// prefetched returns key's committed state in p as read ahead, and
// whether it was; a key not read yet is the caller's to read from now on.
func (s *Store) prefetched(p *Part, key string) ([]byte, bool) {
	if s.pf == nil {
		return nil, false
	}
	e := s.pf.keys[prefetchKey{p.id, key}]
	if e == nil || e.state.CompareAndSwap(prefetchPending, prefetchTaken) {
		return nil, false
	}
	if e.state.Load() == prefetchRead {
		return e.raw, true
	}
	return nil, false // taken before
}

// stopPrefetch ends the batch's reads ahead, and waits for them.
func (s *Store) stopPrefetch() {
	if s.pf != nil {
		s.pf.stop.Store(true)
		<-s.pf.done
		s.pf = nil
	}
}
