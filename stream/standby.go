package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Standbys: warm copies of store partitions that other members of the
// group hold, kept by following their changelogs, so that a takeover
// reads only the changelog's tail (see Spec.Standbys).
//
// Which member keeps which copy: each member learns the group's
// assignment from the group coordinator (DescribeGroups) after each
// rebalance, and every few seconds. It sorts the members by member id;
// the standbys of a partition whose owner is the i-th member are the
// next Standbys members after it, wrapping around (at most all the
// others). Every member computes the same placement from the same
// description, and none keeps a copy of a partition it holds. A group
// of the "consumer" protocol (KIP-848), whose assignment that request
// does not show, has each member follow every partition it does not
// hold. While the group rebalances, the placement in hand stays.
//
// A copy is followed read_committed from offset 0 (a store on disk:
// from the position its partition's state there is at), by a goroutine
// of its own, with the stream's client (no group: plain fetches), and applied
// record by record as a restore applies them, so that at any position
// it is exactly what a restore to that position gives. When its
// partition is assigned to the member, the restore stops the follower
// and goes on from its position to the changelog's end.

// StandbyStatus is a standby copy this process keeps of a store
// partition that another member holds.
type StandbyStatus struct {
	Partition int32
	Position  int64 // the changelog offset it has applied up to (the next one to read)
	End       int64 // the changelog partition's last stable offset, as its last fetch saw it
	Lag       int64 // End - Position: changelog offsets not applied yet; 0: caught up
	Keys      int64 // keys it holds
	Err       error // why it stopped following (its copy is then not used); nil while it follows
}

// StorePlacement is where a store partition is kept in the stream's group
// (see [Spec] Standbys).
//
// The members learn the group's assignment from its coordinator after
// each rebalance (and every few seconds) and, in member-id order, the
// Standbys members after a partition's owner (at most all the others)
// each follow its changelog, read_committed, into a copy of its state. A
// member assigned a partition it keeps a copy of restores it from the
// copy's position to the changelog's end, not from its start
// ([StoreStatus] Takeovers counts these; Restored, the records read). A
// copy costs its member the partition's memory and a fetch of its
// changelog. Under the "consumer" group protocol, whose assignment the
// coordinator does not describe to members, each member follows every
// partition it does not hold, so that a member that joins warm-starts its
// first partitions too. In memory, a copy is made afresh from offset 0
// when a member starts following a partition (its own state, once
// revoked, is dropped as without standbys). On disk ("state-dir"), a copy
// is the partition's state there, kept from where it was: a partition the
// member held, or followed, before reads only the changelog it missed, as
// a copy and again at a takeover.
type StorePlacement struct {
	Partition int32
	Owner     string   // the member id that holds it and processes its input
	Standbys  []string // the member ids that keep a standby copy of it, in order
}

// standbys is a store's standby copies, and the placement they follow.
type standbys struct {
	want      int           // Spec.Standbys
	wake      chan struct{} // a rebalance: describe the group again
	takeovers atomic.Int64  // restores that went on from a copy

	mu        sync.Mutex
	parts     map[int32]*standbyPart
	member    string           // this member's id, at the last placement
	placement []StorePlacement // the last one known
}

// standbyPart is one standby copy: its state and its position.
type standbyPart struct {
	id     int32
	state  *store.Part
	cl     *kgo.Client // the stream's client it fetches with (reinit replaces it)
	cancel context.CancelFunc
	done   chan struct{} // closed when its follower returns

	// Under standbys.mu: written by its follower; read by anyone once
	// done is closed.
	pos, end int64
	err      error
}

// newStandbys returns the standbys of a store, nil for none.
func newStandbys(want int) *standbys {
	if want <= 0 {
		return nil
	}
	return &standbys{want: want, wake: make(chan struct{}, 1), parts: map[int32]*standbyPart{}}
}

// poke asks for the group's placement again (nil: no standbys).
func (sb *standbys) poke() {
	if sb == nil {
		return
	}
	select {
	case sb.wake <- struct{}{}:
	default:
	}
}

// Timings of the standbys: how often the placement is asked for anew
// without a rebalance, how soon again while the group rebalances, and
// how long a follower at its changelog's end waits between fetches.
const (
	standbyRefresh = 3 * time.Second
	standbyRetry   = 200 * time.Millisecond
	standbyIdle    = 50 * time.Millisecond
)

// keepStandbys places and follows the store's standby copies until the
// stream stops; on s.followers.
func (s *stream) keepStandbys() {
	sb := s.store.standby
	ctx := s.pollCtx
	defer sb.stopAll()
	next := time.NewTimer(0)
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sb.wake:
		case <-next.C:
		}
		wait := standbyRefresh
		if !s.placeStandbys(ctx) {
			wait = standbyRetry
		}
		next.Reset(wait)
	}
}

// placeStandbys learns the group's placement and follows the copies it
// gives this member; false when it could not (a rebalance in progress,
// the brokers not answering).
func (s *stream) placeStandbys(ctx context.Context) bool {
	st := s.store
	cl := s.h.Client()
	member, _ := cl.GroupMetadata()
	if member == "" {
		return false // not joined yet
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout())
	defer cancel()
	var placement []StorePlacement
	var follow []int32
	if s.cfg.ServerAssigns() {
		topics, err := topicPartitions(ctx, cl, st.topic)
		if err != nil || topics[st.topic].n == 0 {
			return false
		}
		for p := range int32(topics[st.topic].n) {
			follow = append(follow, p)
		}
	} else {
		groups, err := kadm.NewClient(cl).DescribeGroups(ctx, s.cfg.Group())
		if err != nil {
			return false
		}
		g, ok := groups[s.cfg.Group()]
		if !ok || g.Err != nil || g.State != "Stable" {
			return false
		}
		placement, follow = st.placement(g.Members, member)
	}
	st.standby.follow(s, cl, member, placement, follow)
	return true
}

// placement returns where the group's members keep each store partition
// (see the top of this file), and the partitions member keeps a copy of.
func (st *kafkaStore) placement(members []kadm.DescribedGroupMember, member string) ([]StorePlacement, []int32) {
	ids := make([]string, 0, len(members))
	owner := map[int32]string{}
	for _, m := range members {
		ids = append(ids, m.MemberID)
		c, ok := m.Assigned.AsConsumer()
		if !ok {
			continue
		}
		for _, t := range c.Topics {
			if slices.Contains(st.inputs, t.Topic) {
				for _, p := range t.Partitions {
					owner[p] = m.MemberID
				}
			}
		}
	}
	slices.Sort(ids)
	k := min(st.standby.want, len(ids)-1)
	var out []StorePlacement
	var follow []int32
	for p, o := range owner {
		i, _ := slices.BinarySearch(ids, o)
		pl := StorePlacement{Partition: p, Owner: o}
		for j := 1; j <= k; j++ {
			pl.Standbys = append(pl.Standbys, ids[(i+j)%len(ids)])
		}
		if slices.Contains(pl.Standbys, member) {
			follow = append(follow, p)
		}
		out = append(out, pl)
	}
	slices.SortFunc(out, func(a, b StorePlacement) int { return cmp.Compare(a.Partition, b.Partition) })
	return out, follow
}

// follow keeps copies of the partitions in follow that this process does
// not hold, and drops the others. The store's lock is held throughout,
// so that a partition assigned meanwhile is either followed before its
// restore looks for a copy or seen assigned here.
func (sb *standbys) follow(s *stream, cl *kgo.Client, member string, placement []StorePlacement, follow []int32) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.member = member
	if placement != nil || s.cfg.ServerAssigns() {
		sb.placement = placement
	}
	want := map[int32]bool{}
	for _, p := range follow {
		if _, held := st.assigned[p]; !held {
			want[p] = true
		}
	}
	for id, sp := range sb.parts {
		_, held := st.assigned[id] // its restore takes it
		if !want[id] && !held || sp.cl != cl {
			sp.cancel() // its follower returns on its own
			delete(sb.parts, id)
		}
	}
	for id := range want {
		if sb.parts[id] != nil {
			continue
		}
		ctx, cancel := context.WithCancel(s.pollCtx)
		sp := &standbyPart{id: id, state: st.state.NewPart(id), cl: cl, cancel: cancel, done: make(chan struct{})}
		sb.parts[id] = sp
		s.followers.Go(func() { s.followChangelog(ctx, cl, sp) })
	}
}

// stopAll stops every follower, when the stream stops.
func (sb *standbys) stopAll() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for id, sp := range sb.parts {
		sp.cancel()
		delete(sb.parts, id)
	}
}

// followChangelog applies partition sp.id's changelog to sp's state, read
// committed, from sp's position on, until ctx ends or a record cannot be
// applied (sp.err).
func (s *stream) followChangelog(ctx context.Context, cl *kgo.Client, sp *standbyPart) {
	defer close(sp.done)
	defer sp.cancel()
	st := s.store
	sb := st.standby
	release, ok := s.openStandby(ctx, sp)
	if !ok {
		return
	}
	defer release()
	adm := kadm.NewClient(cl)
	wait := retryWait()
	leader, tid := int32(-1), [16]byte{}
	for ctx.Err() == nil {
		if leader < 0 {
			var err error
			if leader, tid, err = partitionLeader(ctx, adm, st.topic, sp.id); err != nil {
				_ = wait(ctx)
				continue
			}
		}
		rp, err := fetchOne(ctx, cl, leader, st.topic, tid, sp.id, sp.pos)
		if err == nil {
			err = kerr.ErrorForCode(rp.ErrorCode)
		}
		if errors.Is(err, kerr.OffsetOutOfRange) {
			// The changelog's start moved past the copy (records
			// deleted), or the topic was made anew: a copy from its
			// new start.
			fresh := st.state.NewPart(sp.id)
			if err := st.state.Reset(fresh); err != nil { // what the disk held of it
				s.stopFollowing(sp, err)
				return
			}
			sb.mu.Lock()
			sp.state, sp.pos, sp.end = fresh, max(rp.LogStartOffset, 0), 0
			sb.mu.Unlock()
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				leader = -1
				_ = wait(ctx)
			}
			continue
		}
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Offset: sp.pos, IsolationLevel: kgo.ReadCommitted(), Topic: st.topic, Partition: sp.id,
		}, rp, decompressor, nil)
		err = fp.Err
		for recs := fp.Records; err == nil && len(recs) > 0; {
			if ctx.Err() != nil {
				// Stopped amid a fetch's records (a response
				// holds up to 32 MB of them): the copy is as
				// far as they were applied.
				next = recs[0].Offset
				break
			}
			chunk := recs[:min(len(recs), applyChunk)]
			recs = recs[len(chunk):]
			pos := chunk[len(chunk)-1].Offset + 1
			if len(recs) == 0 {
				pos = next // past the markers after the last record too
			}
			st.state.SetPosition(sp.state, pos) // kept on disk with the chunk
			var k int
			if k, err = st.state.Apply(sp.state, changelogRecords(chunk)); err != nil {
				err = fmt.Errorf("offset %d: %w", chunk[k].Offset, err)
			}
		}
		if err == nil && len(fp.Records) == 0 && next > sp.pos && st.disk != nil {
			// Only markers, or records compacted away: the position
			// on disk moves on all the same.
			st.state.SetPosition(sp.state, next)
			_, err = st.state.Apply(sp.state, changelogRecords(nil))
		}
		end := fp.LastStableOffset
		if end < 0 {
			end = fp.HighWatermark
		}
		sb.mu.Lock()
		moved := next > sp.pos
		sp.pos, sp.end, sp.err = max(sp.pos, next), end, err
		sb.mu.Unlock()
		if err != nil {
			s.stopFollowing(sp, nil)
			return
		}
		if !moved {
			idle := time.NewTimer(standbyIdle)
			select {
			case <-ctx.Done():
			case <-idle.C:
			}
			idle.Stop()
		}
	}
}

// openStandby leases sp's partition on disk (waiting until its owner
// here, if any, lets it go) and starts sp from the position its state
// there is at: a partition that this process held, or kept a copy of,
// is followed from where it was. It returns the lease's release; false:
// ctx ended, or the disk failed (sp.err). A store in memory starts from
// offset 0.
func (s *stream) openStandby(ctx context.Context, sp *standbyPart) (release func(), ok bool) {
	st := s.store
	release, err := st.leases.acquire(ctx, sp.id)
	if err != nil || st.disk == nil {
		return release, err == nil
	}
	pos, onDisk, err := st.state.Open(sp.state)
	if err != nil {
		release()
		s.stopFollowing(sp, fmt.Errorf("state directory %s: %w", st.disk.Dir(), err))
		return nil, false
	}
	if onDisk {
		st.standby.mu.Lock()
		sp.pos = pos
		st.standby.mu.Unlock()
	}
	return release, true
}

// stopFollowing notes why sp's follower stopped (err nil: sp.err says),
// and logs it.
func (s *stream) stopFollowing(sp *standbyPart, err error) {
	st := s.store
	st.standby.mu.Lock()
	if err != nil {
		sp.err = err
	}
	err = sp.err
	st.standby.mu.Unlock()
	s.log(fmt.Sprintf("stream %s: store %q: the standby copy of partition %d stopped following %q: %v", s.h.ID(), st.name, sp.id, st.topic, err))
}

// resume gives p, whose restore is to read its changelog from start to
// end, the standby copy of its partition, if this process keeps one that
// is sound and within those bounds, and returns where the restore goes
// on from: the copy's position, or start without one. The copy's
// follower is stopped first. The restore's goroutine calls it.
func (s *stream) resumeStandby(p *storePart, start, end int64) int64 {
	st := s.store
	sb := st.standby
	if sb == nil {
		return start
	}
	sb.mu.Lock()
	sp := sb.parts[p.id]
	delete(sb.parts, p.id)
	sb.mu.Unlock()
	if sp == nil {
		return start
	}
	sp.cancel()
	<-sp.done
	if sp.err != nil || sp.pos < start || sp.pos > end {
		s.log(fmt.Sprintf("stream %s: store %q partition %d: its standby copy (at offset %d, %v) is not used: the changelog is now from %d to %d", s.h.ID(), st.name, p.id, sp.pos, sp.err, start, end))
		return start
	}
	s.log(fmt.Sprintf("stream %s: store %q partition %d: taken over from its standby copy at changelog offset %d of %d", s.h.ID(), st.name, p.id, sp.pos, end))
	st.mu.Lock()
	p.state = sp.state
	st.mu.Unlock()
	sb.takeovers.Add(1)
	return sp.pos
}

// status adds the standbys to a store's status (sb nil: none).
func (sb *standbys) status(ss *StoreStatus) {
	if sb == nil {
		return
	}
	ss.StandbysWanted = sb.want
	ss.Takeovers = sb.takeovers.Load()
	sb.mu.Lock()
	defer sb.mu.Unlock()
	ss.Member = sb.member
	for _, pl := range sb.placement {
		pl.Standbys = slices.Clone(pl.Standbys)
		ss.Placement = append(ss.Placement, pl)
	}
	for _, sp := range sb.parts {
		ss.Standbys = append(ss.Standbys, sp.statusLocked())
	}
	slices.SortFunc(ss.Standbys, func(a, b StandbyStatus) int { return cmp.Compare(a.Partition, b.Partition) })
}

// statusLocked is sp's status; the caller holds the standbys' lock.
func (sp *standbyPart) statusLocked() StandbyStatus {
	return StandbyStatus{Partition: sp.id, Position: sp.pos, End: sp.end, Lag: max(sp.end-sp.pos, 0), Keys: sp.state.Counts().Keys, Err: sp.err}
}

// copies returns the standby copies being followed, by partition, with
// their status, for a query (sb nil: none).
func (sb *standbys) copies() ([]*store.Part, []StandbyStatus) {
	if sb == nil {
		return nil, nil
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	var parts []*standbyPart
	for _, sp := range sb.parts {
		if sp.err == nil {
			parts = append(parts, sp)
		}
	}
	slices.SortFunc(parts, func(a, b *standbyPart) int { return cmp.Compare(a.id, b.id) })
	states := make([]*store.Part, len(parts))
	sts := make([]StandbyStatus, len(parts))
	for i, sp := range parts {
		states[i], sts[i] = sp.state, sp.statusLocked()
	}
	return states, sts
}

// StoreStandbyGet returns key's state in the standby copies this process
// keeps of stream id's store (a per-key store's): partitions another
// member holds, as far as this process has followed their changelogs.
// The entry's Standby is true, its Lag the changelog offsets its copy has
// not applied yet, and Stale is true when that is not 0: the state may be
// behind the owner's. A key of a partition this process holds, or keeps
// no copy of, is not found (StoreGet reads it, from its owner if need be).
func (rt *Runtime) StoreStandbyGet(ctx context.Context, id string, key any) (StoreEntry, bool, error) {
	const fn = "kafka-store-standby-get"
	s, err := rt.queryStream(fn, id, false)
	if err != nil {
		return StoreEntry{}, false, err
	}
	st := s.store
	k, err := st.encodeKey(ctx, key)
	if err != nil {
		return StoreEntry{}, false, kafkabpl.NewError(fn, err)
	}
	parts, sts := st.standby.copies()
	for i, p := range parts {
		raw, found, _ := p.Get(k)
		if !found {
			continue
		}
		state, err := st.decodeState(raw)
		if err != nil {
			return StoreEntry{}, false, kafkabpl.NewError(fn, err)
		}
		return standbyEntry(key, state, sts[i]), true, nil
	}
	return StoreEntry{}, false, nil
}

// StoreStandbyRange returns the states of the keys from from to to, both
// included (nil: no bound), in the standby copies this process keeps of
// stream id's store (a per-key store's), by partition then key, each
// marked as StoreStandbyGet marks it.
func (rt *Runtime) StoreStandbyRange(ctx context.Context, id string, from, to any) ([]StoreEntry, error) {
	const fn = "kafka-store-standby-range"
	st, lo, hi, err := rt.rangeStore(ctx, fn, id, from, to)
	if err != nil {
		return nil, err
	}
	var out []StoreEntry
	var derr error
	parts, sts := st.standby.copies()
	for i, p := range parts {
		p.Range(lo, hi, func(key, raw []byte) bool {
			var state any
			if state, derr = st.decodeState(raw); derr != nil {
				return false
			}
			out = append(out, standbyEntry(st.decodeKey(string(key)), state, sts[i]))
			return true
		})
		if derr != nil {
			return nil, kafkabpl.NewError(fn, derr)
		}
	}
	return out, nil
}

// rangeStore returns stream id's per-key store and a range's bounds as
// it keys them (nil: no bound), for StoreRange and StoreStandbyRange
// (fn); its errors name fn.
func (rt *Runtime) rangeStore(ctx context.Context, fn, id string, from, to any) (st *kafkaStore, lo, hi []byte, err error) {
	s, err := rt.queryStream(fn, id, false)
	if err != nil {
		return nil, nil, nil, err
	}
	st = s.store
	if from != nil {
		if lo, err = st.encodeKey(ctx, from); err != nil {
			return nil, nil, nil, kafkabpl.NewError(fn, err)
		}
	}
	if to != nil {
		if hi, err = st.encodeKey(ctx, to); err != nil {
			return nil, nil, nil, kafkabpl.NewError(fn, err)
		}
	}
	return st, lo, hi, nil
}

// standbyEntry is a key's state read from a standby copy.
func standbyEntry(key, state any, sts StandbyStatus) StoreEntry {
	return StoreEntry{Key: key, Partition: sts.Partition, State: state, Standby: true, Lag: sts.Lag, Stale: sts.Lag > 0}
}

// List returns the status as kafka-stream-status shows it under
// "standbys": ("partition" => n "position" => n "end" => n "lag" => n
// "keys" => n "error" => "..." or null).
func (ss *StandbyStatus) List() *value.List {
	l := &value.List{}
	l.AppendNamed("partition", int64(ss.Partition))
	l.AppendNamed("position", ss.Position)
	l.AppendNamed("end", ss.End)
	l.AppendNamed("lag", ss.Lag)
	l.AppendNamed("keys", ss.Keys)
	l.AppendNamed("error", errorValue(ss.Err))
	return l
}

// List returns the placement as kafka-stream-status shows it under
// "placement": ("partition" => n "owner" => id "standbys" => (id ...)).
func (pl *StorePlacement) List() *value.List {
	l := &value.List{}
	l.AppendNamed("partition", int64(pl.Partition))
	l.AppendNamed("owner", pl.Owner)
	sbs := &value.List{}
	for _, m := range pl.Standbys {
		sbs.Append(m)
	}
	l.AppendNamed("standbys", sbs)
	return l
}

// standbyList adds the standbys' part of a store's status to l.
func (ss *StoreStatus) standbyList(l *value.List) {
	if ss.StandbysWanted == 0 {
		return
	}
	l.AppendNamed("standbys-wanted", int64(ss.StandbysWanted))
	l.AppendNamed("member", ss.Member)
	l.AppendNamed("takeovers", ss.Takeovers)
	sbs := &value.List{}
	for i := range ss.Standbys {
		sbs.Append(ss.Standbys[i].List())
	}
	l.AppendNamed("standbys", sbs)
	pls := &value.List{}
	for i := range ss.Placement {
		pls.Append(ss.Placement[i].List())
	}
	l.AppendNamed("placement", pls)
}
