package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/murmur2"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Partitioned tables (Table.Partitioned): a compacted topic
// co-partitioned with the stream's inputs, of which each instance holds the
// partitions whose numbers it is assigned of its inputs (Kafka Streams'
// KTable). The group's hooks note what is assigned (pausing those input
// partitions) and revoked; each assigned partition is restored on a
// goroutine of its own, into a buffer of updates not yet applied; then a
// follower client fetches its new updates into the same buffer. The run
// goroutine applies the buffer in timestamp order with the inputs: before
// an input of partition N with timestamp T, the updates of the table's
// partition N up to T (advance); between batches, those the inputs reached
// or that waited Hold (release). An input partition's fetching resumes
// once every partitioned table and the store (if any) hold it.

// defaultTableHold is Table.Hold's default.
const defaultTableHold = 2 * time.Second

// partTable is a partitioned table's partitions held by this instance. Its
// fields under t.mu: parts, assigned, wake and dirty.
type partTable struct {
	t       *globalTable
	dir     *store.Disk  // its state directory (the stream's "state-dir"); nil: in memory
	disk    *store.Store // its rows on disk, a store of its own; nil: in memory
	leases  *diskLeases  // who writes each partition's rows on disk, and their cleanup; nil: in memory
	inputs  []string
	hold    time.Duration
	n       int           // the topic's partition count: set before checked is closed
	cl      *kgo.Client   // the follower: set before checked is closed
	checked chan struct{} // closed once bootstrap checked the topic and made the follower

	parts    map[int32]*tablePart
	assigned map[string]map[int32]bool // the inputs' partitions assigned: a partition is held while any input's is
	wake     context.CancelFunc        // ends the run goroutine's poll, to apply updates
	dirty    bool                      // updates came since the run goroutine last released
}

// tablePart is a partition of a partitioned table. Its fields are under
// the table's mu, but cancel and cl, set when it is made.
type tablePart struct {
	id     int32
	rowSet // in memory: its rows
	// On disk (the stream's "state-dir"): its rows there, as of the last
	// flush, and the rows applied since (a nil value: deleted), which
	// the run goroutine flushes between batches (see flushLocked).
	disk        *store.Part
	unflushed   map[string][]byte
	release     func()          // ends its lease of its rows on disk (see diskLeases): its restore takes it, whoever drops it ends it
	applied     int64           // the offset after the last update applied
	flushed     int64           // applied, as of the last flush
	pending     []pendingUpdate // fetched or restored, not yet applied, in offset order
	next        int64           // the offset of the next update the follower takes
	time        int64           // the latest timestamp (ms) of an input of the partition processed
	ready       bool            // restored: updates apply, inputs are fetched
	read, total int64           // the restore's progress, in offsets
	cancel      context.CancelFunc
	cl          *kgo.Client // the group's client, whose inputs the restore resumes
}

// pendingUpdate is an update waiting for the inputs' time to reach it.
type pendingUpdate struct {
	r  *kgo.Record
	at time.Time // fetched (restored: when the restore ended), for Hold
}

// tableRestoreHook, set by tests only, is called when a partition's
// restore begins.
var tableRestoreHook atomic.Pointer[func(ctx context.Context, topic string, partition int32)]

func newPartTable(t *globalTable, inputs []string) *partTable {
	return &partTable{t: t, inputs: inputs, hold: cmp.Or(t.Hold, defaultTableHold), checked: make(chan struct{}),
		parts: map[int32]*tablePart{}, assigned: map[string]map[int32]bool{}}
}

// inputPartitions returns the partition numbers of inputs in an
// assignment, each once.
func inputPartitions(inputs []string, m map[string][]int32) []int32 {
	var ps []int32
	for _, t := range inputs {
		for _, p := range m[t] {
			if !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// ofTopics returns partitions ps of each topic, to pause or resume.
func ofTopics(topics []string, ps []int32) map[string][]int32 {
	m := make(map[string][]int32, len(topics))
	for _, t := range topics {
		m[t] = ps
	}
	return m
}

// partitioned returns the partitioned tables, in name order; it
// allocates nothing when there are none (it runs before every poll).
func (ts streamTables) partitioned() []*partTable {
	var pts []*partTable
	for _, t := range ts {
		if t.pt != nil {
			pts = append(pts, t.pt)
		}
	}
	slices.SortFunc(pts, func(a, b *partTable) int { return strings.Compare(a.t.Name, b.t.Name) })
	return pts
}

// hooks returns the group's callbacks assigned and revoked (a store's, or
// nil) extended to keep the partitioned tables' partitions too.
func (ts streamTables) hooks(s *stream, assigned, revoked rebalanceFn) (rebalanceFn, rebalanceFn) {
	pts := ts.partitioned()
	if len(pts) == 0 {
		return assigned, revoked
	}
	return func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			if assigned != nil {
				assigned(ctx, cl, m)
			}
			for _, pt := range pts {
				pt.assign(s, cl, m)
			}
		}, func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			if revoked != nil {
				revoked(ctx, cl, m)
			}
			for _, pt := range pts {
				pt.revoke(m)
			}
		}
}

// assign notes the inputs' partitions assigned and starts the restore of
// each table partition newly held (or held by a restore of a previous
// client's, after a reinit), pausing its inputs' fetching until then. kgo
// calls it before it fetches the partitions' committed offsets.
func (pt *partTable) assign(s *stream, cl *kgo.Client, m map[string][]int32) {
	ps := inputPartitions(pt.inputs, m)
	pt.t.mu.Lock()
	defer pt.t.mu.Unlock()
	var paused []int32
	for _, t := range pt.inputs {
		for _, p := range m[t] {
			if pt.assigned[t] == nil {
				pt.assigned[t] = map[int32]bool{}
			}
			pt.assigned[t][p] = true
		}
	}
	for _, p := range ps {
		old := pt.parts[p]
		if old != nil && (old.ready || old.cl == cl) {
			continue // held already
		}
		if old != nil {
			old.cancel()
		}
		part := &tablePart{id: p, rowSet: rowSet{rows: map[string][]byte{}}, cl: cl}
		if pt.disk != nil {
			part.disk, part.unflushed = pt.disk.NewPart(p), map[string][]byte{}
		}
		var ctx context.Context
		ctx, part.cancel = context.WithCancel(s.pollCtx)
		pt.parts[p] = part
		paused = append(paused, p)
		s.followers.Go(func() { pt.restore(ctx, s, part) })
	}
	if len(paused) > 0 && cl != nil {
		cl.PauseFetchPartitions(ofTopics(pt.inputs, paused))
	}
}

// revoke forgets the inputs' partitions taken away, and drops each table
// partition no input's partition holds any more.
func (pt *partTable) revoke(m map[string][]int32) {
	pt.t.mu.Lock()
	defer pt.t.mu.Unlock()
	for _, t := range pt.inputs {
		for _, p := range m[t] {
			delete(pt.assigned[t], p)
		}
	}
	for _, p := range inputPartitions(pt.inputs, m) {
		part := pt.parts[p]
		if part == nil || slices.ContainsFunc(pt.inputs, func(t string) bool { return pt.assigned[t][p] }) {
			continue
		}
		part.cancel()
		if part.ready { // else its restore's goroutine releases it, seeing it gone
			pt.cl.RemoveConsumePartitions(map[string][]int32{pt.t.Topic: {p}})
			part.releaseDisk()
		}
		delete(pt.parts, p)
	}
}

// bootstrap checks that the table's topic exists and is co-partitioned
// with the inputs (waiting for inputs that do not exist yet, as consuming
// does), then starts the follower, which the restores add their
// partitions to.
func (pt *partTable) bootstrap(ctx context.Context, s *stream, adm *kadm.Client) error {
	t := pt.t
	wait := retryWait()
	for {
		n, err := pt.partitionCount(ctx, s.cl)
		if err != nil {
			return err
		}
		if n > 0 {
			pt.n = n
			break
		}
		if err := wait(ctx); err != nil {
			return err
		}
	}
	t.warnIfNotCompacted(ctx, s, adm)
	cl, err := t.follower(s, map[int32]kgo.Offset{}) // the restores add the partitions
	if err != nil {
		return err
	}
	pt.cl = cl
	close(pt.checked)
	s.log(fmt.Sprintf("stream %s: partitioned table %q on %q: %d partitions, co-partitioned with %v", s.h.ID(), t.Name, t.Topic, pt.n, pt.inputs))
	s.followers.Go(func() { pt.follow(s) })
	return nil
}

// partitionCount returns the table topic's partition count once it and
// the inputs are known to the brokers (0: not yet), or an error for a
// missing table topic or one not co-partitioned with the inputs.
func (pt *partTable) partitionCount(ctx context.Context, cl *kgo.Client) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, pt.t.cfg.RequestTimeout())
	defer cancel()
	topics, err := topicPartitions(ctx, cl, append([]string{pt.t.Topic}, pt.inputs...)...)
	if err != nil {
		return 0, nil // retried
	}
	table, ok := topics[pt.t.Topic]
	if !ok {
		return 0, kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, "the topic does not exist; create it (compacted, with the inputs' partition count) before the stream starts")
	}
	if table.err != nil {
		return 0, nil
	}
	for _, in := range pt.inputs {
		info, ok := topics[in]
		if !ok || info.err != nil {
			return 0, nil
		}
		if info.n != table.n {
			return 0, kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, `"partitioned": not co-partitioned with the inputs: the table's topic %q has %d partitions and the input %q has %d; a partitioned table holds partition N of its topic where the stream holds partition N of its inputs, so the counts must match (and the keys be partitioned alike)`, pt.t.Topic, table.n, in, info.n)
		}
	}
	return table.n, nil
}

// restore reads part's partition from its start to its last stable offset
// into its pending updates, then hands it to the follower and resumes its
// inputs' fetching if the stream holds the partition everywhere else. Its
// failure fails the stream; a revocation ends it quietly.
func (pt *partTable) restore(ctx context.Context, s *stream, part *tablePart) {
	defer part.cancel()
	select {
	case <-pt.checked:
	case <-ctx.Done():
		return
	}
	if hook := tableRestoreHook.Load(); hook != nil {
		(*hook)(ctx, pt.t.Topic, part.id)
	}
	start := time.Now()
	end, tail, err := pt.read(ctx, s, part)
	if ctx.Err() != nil || err != nil {
		part.releaseDisk()
	}
	if ctx.Err() != nil {
		return // revoked, or the stream stops
	}
	if err != nil {
		s.fail(fmt.Errorf("table %q (topic %q) partition %d: restore: %w", pt.t.Name, pt.t.Topic, part.id, err))
		s.stopPoll()
		return
	}
	pt.t.mu.Lock()
	if pt.parts[part.id] != part {
		pt.t.mu.Unlock()
		part.releaseDisk()
		return
	}
	part.ready, part.next = true, end
	part.applied = end - part.total // where the restore began: nothing after it is applied yet
	part.flushed = part.applied
	now := time.Now()
	for i := range part.pending {
		part.pending[i].at = now
	}
	pt.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{pt.t.Topic: {part.id: kgo.NewOffset().At(end)}})
	pt.wakeLocked()
	n := len(part.pending)
	pt.t.mu.Unlock()
	var from string
	if tail {
		from = ", from the state on disk's position"
	}
	s.log(fmt.Sprintf("stream %s: table %q partition %d restored: %d records, in %v%s", s.h.ID(), pt.t.Name, part.id, n, time.Since(start).Round(time.Millisecond), from))
	s.resumeIfHeld(part.cl, part.id)
}

// read reads part's partition to its last stable offset, into its pending
// updates, and returns that offset. On disk, it reads from the position
// part's rows there are at (tail), or, when the disk holds none that it can
// go on from, from the start, emptied.
func (pt *partTable) read(ctx context.Context, s *stream, part *tablePart) (end int64, tail bool, err error) {
	cl := part.cl
	adm := kadm.NewClient(cl)
	wait := retryWait()
	var bounds map[int32][2]int64
	for {
		var err error
		if bounds, err = pt.t.bounds(ctx, cl, adm); err == nil {
			break
		}
		if errors.Is(err, kafkabpl.ErrInvalidConfig) {
			return 0, false, err // the topic is gone
		}
		if err := wait(ctx); err != nil {
			return 0, false, err
		}
	}
	b := bounds[part.id]
	if b[0], tail, err = pt.diskStart(ctx, s, part, b[0], b[1]); err != nil {
		return 0, false, err
	}
	pt.t.mu.Lock()
	part.total = b[1] - b[0]
	pt.t.mu.Unlock()
	err = readRange(ctx, cl, adm, pt.t.Topic, part.id, b[0], b[1], wait, func(recs []*kgo.Record) error {
		pt.t.mu.Lock()
		for _, r := range recs {
			part.pending = append(part.pending, pendingUpdate{r: r})
		}
		pt.t.mu.Unlock()
		return nil
	}, func(off int64) {
		pt.t.mu.Lock()
		part.read = off - b[0]
		pt.t.mu.Unlock()
	})
	pt.t.mu.Lock()
	part.read = part.total
	pt.t.mu.Unlock()
	return b[1], tail, err
}

// diskStart leases part's rows on disk and returns where part's restore
// reads from, its topic holding offsets from start to end: the position
// of its rows on disk, or start (emptied, saying why) when the disk holds
// none it can go on from.
func (pt *partTable) diskStart(ctx context.Context, s *stream, part *tablePart, start, end int64) (int64, bool, error) {
	if part.disk == nil {
		return start, false, nil
	}
	release, err := pt.leases.acquire(ctx, part.id)
	if err != nil {
		return 0, false, err
	}
	part.release = release
	from, tail, why, err := diskResume(pt.disk, part.disk, "topic", start, end)
	if err != nil {
		return 0, false, fmt.Errorf("state directory %s: %w", pt.dir.Dir(), err)
	}
	if why != "" {
		s.log(fmt.Sprintf("stream %s: table %q partition %d: the state directory %s %s: reading the topic from its start", s.h.ID(), pt.t.Name, part.id, pt.dir.Dir(), why))
	}
	return from, tail, nil
}

// resumeIfHeld resumes the fetching of partition p of the inputs, on cl,
// once every partitioned table and the store (if any) hold it restored.
// Each of them calls it when its own restore ends: the last one resumes.
func (s *stream) resumeIfHeld(cl *kgo.Client, p int32) {
	if s.store != nil && !s.store.holds(p) || len(s.tables.restored([]int32{p})) == 0 {
		return
	}
	cl.ResumeFetchPartitions(ofTopics(s.spec.From, []int32{p}))
}

// holds tells whether the store holds partition p restored.
func (st *kafkaStore) holds(p int32) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.parts[p] != nil
}

// restored returns the partitions of ps that every partitioned table
// holds restored.
func (ts streamTables) restored(ps []int32) []int32 {
	pts := ts.partitioned()
	return slices.DeleteFunc(slices.Clone(ps), func(p int32) bool {
		return slices.ContainsFunc(pts, func(pt *partTable) bool {
			pt.t.mu.RLock()
			defer pt.t.mu.RUnlock()
			part := pt.parts[p]
			return part == nil || !part.ready
		})
	})
}

// follow fetches the updates of the partitions held, into their pending
// updates, until the stream stops; a record of a partition no longer held,
// or one already taken (a fetch of a previous assignment), is left.
func (pt *partTable) follow(s *stream) {
	defer pt.cl.Close()
	for {
		fetches := pt.cl.PollFetches(s.pollCtx)
		if fetches.IsClientClosed() || s.pollCtx.Err() != nil {
			return
		}
		pt.t.logFetchErrors(s, fetches)
		now := time.Now()
		pt.t.mu.Lock()
		for _, r := range fetches.Records() {
			part := pt.parts[r.Partition]
			if part == nil || !part.ready || r.Offset < part.next {
				continue
			}
			part.next = r.Offset + 1
			part.pending = append(part.pending, pendingUpdate{r: r, at: now})
			pt.wakeLocked()
		}
		pt.t.mu.Unlock()
	}
}

// wakeLocked has the run goroutine apply what it may; the caller holds
// t.mu.
func (pt *partTable) wakeLocked() {
	pt.dirty = true
	if pt.wake != nil {
		pt.wake()
	}
}

// applyLocked applies part's pending updates, in offset order, while due
// says so of the first; the caller holds t.mu.
func (pt *partTable) applyLocked(part *tablePart, due func(*pendingUpdate) bool) {
	i := 0
	for ; i < len(part.pending) && due(&part.pending[i]); i++ {
		r := part.pending[i].r
		part.applied = r.Offset + 1
		switch {
		case part.disk == nil:
			part.put(r.Key, r.Value)
		case r.Key != nil: // a nil key is no row
			part.unflushed[string(r.Key)] = r.Value
		}
	}
	if i > 0 {
		clear(part.pending[:i])
		part.pending = part.pending[i:]
		pt.t.updates.Add(int64(i))
	}
}

// advance moves the stream time of in's partition of each partitioned
// table to in's timestamp, applying the updates it reached, before in is
// processed.
func (ts streamTables) advance(in *kafkabpl.Record) {
	for _, t := range ts {
		pt := t.pt
		if pt == nil {
			continue
		}
		t.mu.Lock()
		if part := pt.parts[in.Partition()]; part != nil && part.ready {
			part.time = max(part.time, in.Timestamp().UnixMilli())
			pt.applyLocked(part, func(u *pendingUpdate) bool { return u.r.Timestamp.UnixMilli() <= part.time })
			if len(part.unflushed) > 0 {
				pt.dirty = true // the next poll ends at once, to flush them after the batch
			}
		}
		t.mu.Unlock()
	}
}

// release applies, between batches, the pending updates that the stream
// time of their partition reached, or that waited Hold; on disk, it then
// writes the rows applied since the last release there, and deletes the
// partitions no longer held for the config's "state-cleanup-delay".
func (ts streamTables) release(now time.Time, log func(string)) error {
	for _, t := range ts {
		pt := t.pt
		if pt == nil {
			continue
		}
		t.mu.Lock()
		pt.dirty = false
		var err error
		for _, part := range pt.parts {
			if part.ready {
				pt.applyLocked(part, func(u *pendingUpdate) bool {
					return u.r.Timestamp.UnixMilli() <= part.time || now.Sub(u.at) >= pt.hold
				})
				if err == nil {
					err = pt.flushLocked(part)
				}
			}
		}
		t.mu.Unlock()
		if err == nil {
			err = pt.leases.cleanUp(pt.disk, log)
		}
		if err != nil {
			return fmt.Errorf("table %q: write its rows to %s: %w", t.Name, pt.dir.Dir(), err)
		}
	}
	return nil
}

// releaseDisk ends part's lease of its rows on disk, if it holds one.
func (part *tablePart) releaseDisk() {
	if part.release != nil {
		part.release()
	}
}

// flushLocked writes the rows applied to part since the last flush to the
// disk, with the position they reach, in one batch (not synced: a crash
// leaves a prefix of the updates, at its position, and the restore reads
// the rest again). Between batches only: the rows the stream read in a
// batch that a crash cuts short are then not on disk yet, and its inputs,
// processed again, read what they read before. The caller holds t.mu.
func (pt *partTable) flushLocked(part *tablePart) error {
	if part.disk == nil || len(part.unflushed) == 0 && part.applied <= part.flushed {
		return nil
	}
	pt.disk.SetPosition(part.disk, part.applied)
	_, err := pt.disk.Apply(part.disk, func(yield func(key, value []byte) bool) {
		for k, v := range part.unflushed {
			if !yield([]byte(k), v) {
				return
			}
		}
	})
	if err == nil {
		clear(part.unflushed)
		part.flushed = part.applied
	}
	return err
}

// pollContext wraps the context of the run goroutine's next poll so that
// it also ends when a partitioned table has updates to apply: at once when
// some came since the last release, else when the first held one's Hold
// ends.
func (ts streamTables) pollContext(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
	pts := ts.partitioned()
	if len(pts) == 0 {
		return ctx, cancel
	}
	now := time.Now()
	wait := time.Duration(-1)
	for _, pt := range pts {
		pt.t.mu.RLock()
		for _, part := range pt.parts {
			if part.ready && len(part.pending) > 0 {
				if d := max(part.pending[0].at.Add(pt.hold).Sub(now), time.Millisecond); wait < 0 || d < wait {
					wait = d
				}
			}
		}
		pt.t.mu.RUnlock()
	}
	var inner context.CancelFunc
	if wait > 0 {
		ctx, inner = context.WithTimeout(ctx, wait)
	} else {
		ctx, inner = context.WithCancel(ctx)
	}
	for _, pt := range pts {
		pt.t.mu.Lock()
		pt.wake = inner
		if pt.dirty {
			inner()
		}
		pt.t.mu.Unlock()
	}
	return ctx, func() {
		inner()
		cancel()
	}
}

// get returns key's value in partition p (nil: none), or errNotHeld when
// this instance does not hold p restored.
func (pt *partTable) get(p int32, key []byte) ([]byte, error) {
	pt.t.mu.RLock()
	defer pt.t.mu.RUnlock()
	part := pt.parts[p]
	if part == nil || !part.ready {
		return nil, errNotHeld
	}
	if part.disk == nil {
		return part.rows[string(key)], nil
	}
	if v, ok := part.unflushed[string(key)]; ok {
		return v, nil
	}
	v, _, err := part.disk.Get(key)
	return v, err
}

// lookup returns key's value, from the partition Kafka's default
// partitioner (murmur2) puts key in; an error when this instance does not
// hold that partition restored.
func (pt *partTable) lookup(key []byte) ([]byte, error) {
	select {
	case <-pt.checked:
	default:
		return nil, fmt.Errorf("the partitioned table is not ready")
	}
	p := murmur2.Partition(key, pt.n)
	raw, err := pt.get(p, key)
	if err != nil {
		pt.t.mu.RLock()
		held := slices.Sorted(maps.Keys(pt.parts))
		pt.t.mu.RUnlock()
		return nil, fmt.Errorf("it is in the table's partition %d, which this instance does not hold restored (it holds %v): a lookup of a partitioned table is for a key of the partitions the stream is assigned", p, held)
	}
	return raw, nil
}

// status reports the table.
func (pt *partTable) status() TableStatus {
	t := pt.t
	st := TableStatus{Name: t.Name, Topic: t.Topic, Partitioned: true, Updates: t.updates.Load()}
	select {
	case <-pt.checked:
		st.Ready = true
	default:
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	st.Partitions = len(pt.parts)
	for _, part := range pt.parts {
		st.Keys += int64(len(part.rows))
		st.Bytes += part.bytes
		if part.disk != nil { // as of the last flush
			c := part.disk.Counts()
			st.Keys += c.Keys
			st.Bytes += c.Bytes
		}
		st.Read += part.read
		st.Total += part.total
		st.Pending += int64(len(part.pending))
		if !part.ready {
			st.Restoring++
		}
	}
	st.Ready = st.Ready && st.Restoring == 0
	return st
}
