package stream

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A per-key store's state on local disk (config "state-dir"): package
// store keeps each partition's committed state there, with the changelog
// position it reflects, written in one batch after the batch's Kafka
// transaction commits; a restore reads the changelog from that position,
// not from its start.

// SetStateDir makes dir the state directory of the streams started from
// then on whose config gives no "state-dir" ("" keeps their state in
// memory, the default): kafkabpl run's --state-dir and kafkabpl serve's
// --data-dir set it.
func (rt *Runtime) SetStateDir(dir string) { rt.stateDir.Store(&dir) }

// settleStateDir settles where a stream's store is kept: the config's
// "state-dir", else the Runtime's (SetStateDir), else memory.
func (rt *Runtime) settleStateDir(cfg *kafkabpl.ClientConfig, spec *Spec) {
	if cfg.Given("state-dir") {
		return
	}
	if d := rt.stateDir.Load(); d != nil {
		cfg.SetStateDir(*d)
	}
}

// openDisk opens the store's directory under the config's state
// directory, "<state-dir>/<group>/<store>"; nil when its state is kept in
// memory.
func openDisk(cfg *kafkabpl.ClientConfig, st *kafkaStore, log func(string)) (*store.Disk, error) {
	if cfg.StateDir() == "" {
		return nil, nil
	}
	dir := filepath.Join(cfg.StateDir(), pathPart(cfg.Group()), pathPart(st.name))
	d, err := store.OpenDisk(dir, store.Identity{Group: cfg.Group(), Store: st.name, Changelog: st.topic}, log)
	if err != nil {
		return nil, kafkabpl.Wrapf(kafkabpl.ErrInvalidConfig, err, `config "state-dir"`)
	}
	return d, nil
}

// pathPart is name as one element of a path: a group's name may hold a
// slash, or be "..".
func pathPart(name string) string {
	p := url.PathEscape(name)
	if p == "." || p == ".." {
		return "%2E" + p[1:]
	}
	return p
}

// closeDisks closes the state directories of the store and the
// partitioned tables, once the stream's goroutines are done.
func (s *stream) closeDisks() {
	s.store.closeDisk()
	s.tables.closeDisks()
}

// closeDisk closes the store's directory, when it has one, once the
// stream's goroutines are done.
func (st *kafkaStore) closeDisk() {
	if st != nil && st.disk != nil {
		st.leases.stop()
		st.disk.Close()
	}
}

// logChangelog keeps the batch's changelog record r, whose offset, once
// the brokers acknowledged it, is where its partition's state on disk
// reaches with the batch.
func (st *kafkaStore) logChangelog(r *kgo.Record) {
	if st.disk != nil {
		st.logged = append(st.logged, r)
	}
}

// positions notes, for each partition the batch wrote changelog records
// of, the position its state reaches: the offset after its last record.
func (st *kafkaStore) positions() {
	for _, r := range st.logged {
		if p := st.parts[r.Partition]; p != nil {
			st.state.SetPosition(p.state, r.Offset+1)
		}
	}
	clear(st.logged)
	st.logged = st.logged[:0]
}

// diskStart returns where p's restore starts reading the changelog,
// which holds offsets from start to end: where p's state on disk is, or
// start when the disk holds none of p that it can go on from (then
// emptied, and the log says why). tail reports a restore of the tail.
func (s *stream) diskStart(p *storePart, start, end int64) (from int64, tail bool, err error) {
	st := s.store
	if st.disk == nil {
		return start, false, nil
	}
	from, tail, why, err := diskResume(st.state, p.state, "changelog", start, end)
	if err != nil {
		return 0, false, fmt.Errorf("state directory %s: %w", st.disk.Dir(), err)
	}
	if !tail {
		s.log(fmt.Sprintf("stream %s: store %q partition %d: the state directory %s %s: restoring it from the changelog's start", s.h.ID(), st.name, p.id, st.disk.Dir(), cmp.Or(why, "holds no state of it")))
	}
	return from, tail, nil
}

// diskResume opens p's state on disk (of st, a store on disk) and
// returns where its restore reads topic, which holds offsets from start
// to end: the position p's state there is at (tail), or start, with why
// the state there could not go on (then emptied; "" when the disk held
// none of p).
func diskResume(st *store.Store, p *store.Part, topic string, start, end int64) (from int64, tail bool, why string, err error) {
	pos, ok, err := st.Open(p)
	switch {
	case err != nil:
		return 0, false, "", err
	case !ok:
		return start, false, "", nil
	case pos > end:
		why = fmt.Sprintf("is at %s offset %d, ahead of the %s's end %d (the topic was made again?)", topic, pos, topic, end)
	case pos < start:
		why = fmt.Sprintf("is at %s offset %d, before the %s's start %d", topic, pos, topic, start)
	default:
		return pos, true, "", nil
	}
	return start, false, why, st.Reset(p)
}

// RestoreStatus is a partition's last restore, since the stream started.
type RestoreStatus struct {
	Partition int32
	Records   int64         // changelog records it applied
	Took      time.Duration // from its start to its end
	Tail      bool          // it read the changelog from the position its state on disk was at, not from the start
}

// noteRestore keeps p's restore for the status.
func (st *kafkaStore) noteRestore(r RestoreStatus) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lastRestores == nil {
		st.lastRestores = map[int32]RestoreStatus{}
	}
	st.lastRestores[r.Partition] = r
}

// diskLeases gives each partition's space in a store's directory one
// writer at a time: a restore, then the run goroutine once it holds the
// partition, until it drops it; or a standby's follower. Without it, a
// follower that starts on a partition just revoked, or a restore of a
// partition assigned again while the last one still applies its final
// chunk, would write beside the other. A partition that no lease has
// held for the config's "state-cleanup-delay" (and one found on disk at
// the start) is deleted from the disk: a partition that comes straight
// back reads only the changelog's tail, and one that went for good does
// not take the disk for ever.
type diskLeases struct {
	disk  *store.Disk
	delay time.Duration
	wake  func() // wakes the run goroutine, to clean up

	mu      sync.Mutex
	held    map[int32]chan struct{} // closed when released
	idle    map[int32]time.Time     // on disk, held by none, since
	timer   *time.Timer             // wakes the run goroutine when the first idle partition is due; nil: none armed
	stopped bool                    // the stream stopped: no timer is armed again
}

// newDiskLeases returns the leases of d's partitions (nil, and leases
// that cost nothing, for a store in memory). The partitions on disk are
// idle from now.
func newDiskLeases(d *store.Disk, delay time.Duration, wake func()) (*diskLeases, error) {
	if d == nil {
		return nil, nil
	}
	ids, err := d.Partitions()
	if err != nil {
		return nil, err
	}
	l := &diskLeases{disk: d, delay: delay, wake: wake, held: map[int32]chan struct{}{}, idle: map[int32]time.Time{}}
	now := time.Now()
	for _, id := range ids {
		l.idle[id] = now
	}
	l.mu.Lock()
	l.armLocked()
	l.mu.Unlock()
	return l, nil
}

// acquire waits until partition id is leased to the caller, or ctx ends,
// and returns the release, which may be called more than once.
func (l *diskLeases) acquire(ctx context.Context, id int32) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	for {
		l.mu.Lock()
		ch := l.held[id]
		if ch == nil {
			ch = make(chan struct{})
			l.held[id] = ch
			delete(l.idle, id)
			l.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { l.release(id, ch, true) }) }, nil
		}
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release ends a lease; idle: the partition's state stays on disk, and
// is idle from now.
func (l *diskLeases) release(id int32, ch chan struct{}, idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.held, id)
	close(ch)
	if idle {
		l.idle[id] = time.Now()
		l.armLocked()
	}
}

// armLocked arms the timer for the first idle partition's deletion, if
// any and none is armed; the caller holds l.mu.
func (l *diskLeases) armLocked() {
	if l.timer != nil || l.stopped || len(l.idle) == 0 {
		return
	}
	first := time.Time{}
	for _, since := range l.idle {
		if first.IsZero() || since.Before(first) {
			first = since
		}
	}
	l.timer = time.AfterFunc(time.Until(first.Add(l.delay)), func() {
		l.mu.Lock()
		l.timer = nil
		l.mu.Unlock()
		l.wake()
	})
}

// cleanUp deletes from the disk the partitions idle for the delay; the
// run goroutine calls it between batches.
func (l *diskLeases) cleanUp(st *store.Store, log func(string)) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	now := time.Now()
	due := map[int32]chan struct{}{} // leased to the cleanup
	for id, since := range l.idle {
		if now.Sub(since) >= l.delay {
			due[id] = make(chan struct{})
			l.held[id] = due[id]
			delete(l.idle, id)
		}
	}
	l.armLocked()
	l.mu.Unlock()
	var err error
	for _, id := range slices.Sorted(maps.Keys(due)) {
		if err == nil {
			if err = st.Reset(st.NewPart(id)); err == nil {
				log(fmt.Sprintf("deleted partition %d's state from %s: neither held nor followed for %v (state-cleanup-delay)", id, l.disk.Dir(), l.delay))
			}
		}
		l.release(id, due[id], err != nil)
	}
	return err
}

// stop stops the timer, when the stream stops.
func (l *diskLeases) stop() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
	}
}
