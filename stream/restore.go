package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The life of a store's partitions: the group's hooks say what is
// assigned and revoked, and pause the fetching of what is assigned; the
// run goroutine, between batches, drops what is no longer assigned,
// starts a restore from the changelog of what is newly assigned, each on
// a goroutine of its own, and adopts each partition whose restore ended,
// resuming its fetching. A partition's input is processed only once its
// state is restored, and the other partitions go on meanwhile: a restore
// that waits out a crashed owner's transaction (up to
// "transaction-timeout") holds up its own partition only.

// assign, kgo's OnPartitionsAssigned (and revoked, its OnPartitionsRevoked
// and OnPartitionsLost: see newStream), keep st.assigned.
//
// assign notes the partitions the group assigned, pauses their fetching
// until they are restored, and wakes the run goroutine to restore them.
// kgo calls it before it fetches the partitions' committed offsets, so
// before any of their input is fetched; cl is nil in tests that call it
// themselves.
func (st *kafkaStore) assign(_ context.Context, cl *kgo.Client, m map[string][]int32) {
	ps := inputPartitions(st.inputs, m)
	if cl != nil && len(ps) > 0 {
		cl.PauseFetchPartitions(st.ofInputs(ps))
	}
	st.mu.Lock()
	for _, p := range ps {
		st.gen++
		st.assigned[p] = st.gen
	}
	st.wakeLocked()
	st.mu.Unlock()
	st.standby.poke() // the group's placement changed
}

// revoked forgets the partitions the group took away, ends their
// restores, and wakes the run goroutine, which drops their state before
// its next batch; a batch in hand is aborted (the transact session aborts any
// transaction a revocation overlaps).
func (st *kafkaStore) revoked(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, id := range inputPartitions(st.inputs, m) {
		delete(st.assigned, id)
		if p := st.restoring[id]; p != nil {
			p.stopRestore()
		}
	}
	st.wakeLocked() // to drop their state
	st.standby.poke()
}

// ofInputs returns partitions ps of every input, to pause or resume. (A
// stream of several inputs keeps partition N of each in its store's
// partition N: see inputPartitions.)
func (st *kafkaStore) ofInputs(ps []int32) map[string][]int32 {
	return ofTopics(st.inputs, ps)
}

// forget forgets the whole assignment and ends every restore, for a new
// client (see stream.reinit), whose group assigns the partitions anew.
func (st *kafkaStore) forget() {
	st.mu.Lock()
	defer st.mu.Unlock()
	clear(st.assigned)
	for _, p := range st.restoring {
		p.stopRestore()
	}
}

// stopRestore ends p's restore if it began; the caller holds st.mu.
// syncStore puts a partition in restoring before startRestore gives it
// its cancel func, and a revocation may come in between: startRestore
// then sees the partition is no longer assigned, and does not begin.
func (p *storePart) stopRestore() {
	if p.cancel != nil {
		p.cancel()
	}
}

// wakeLocked ends the run goroutine's poll, or the next one if it is not
// polling, so that it syncs the store; the caller holds st.mu.
func (st *kafkaStore) wakeLocked() {
	st.pending = true
	if st.wake != nil {
		st.wake()
	}
}

// pollContext returns the context of the next poll: it ends when ctx
// does, when a partition is assigned or a restore ends (to sync the store
// at once), and after wait when wait is positive.
func (st *kafkaStore) pollContext(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	var cancel context.CancelFunc
	if wait > 0 {
		ctx, cancel = context.WithTimeout(ctx, wait)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	st.mu.Lock()
	st.wake = cancel
	if st.pending { // since the last sync
		cancel()
	}
	st.mu.Unlock()
	return ctx, cancel
}

// syncStore brings the store in line with the assignment: it drops the
// partitions no longer assigned (or assigned again since they were
// restored, when another member may have written to them meanwhile),
// adopts those whose restore ended, resuming their fetching, and starts
// the restores of new ones. A restore's failure fails the stream; one
// that a revocation ended is no error.
func (s *stream) syncStore(ctx context.Context) error {
	st := s.store
	if !st.checked {
		if err := s.checkChangelog(ctx); err != nil {
			return err
		}
	}
	// A re-keying stream's client reads nothing until its topics are
	// checked (see subscribeRepartition): a poll would wait for ever.
	for wait := retryWait(); s.spec.Rekey != nil && !st.checked; {
		if err := wait(ctx); err != nil {
			return nil // the stream stops
		}
		if err := s.checkChangelog(ctx); err != nil {
			return err
		}
	}
	st.mu.Lock()
	st.pending = false
	current := func(p *storePart) bool {
		gen, ok := st.assigned[p.id]
		return ok && gen == p.gen
	}
	for id, p := range st.parts {
		if !current(p) {
			delete(st.parts, id)
			st.state.Drop(id)
			s.timers.drop(id)
			st.interval.drop(id)
			p.releaseDisk() // its state stays on disk, at the position of its last commit
		}
	}
	var adopted []int32
	var failed error
	for id, p := range st.restoring {
		switch {
		case !current(p):
			p.stopRestore()
			delete(st.restoring, id)
			if p.restored { // else its goroutine releases it, seeing it gone
				p.releaseDisk()
			}
			s.log(fmt.Sprintf("stream %s: store %q partition %d was revoked during its restore", s.h.ID(), st.name, id))
		case !p.restored:
		case p.err != nil:
			failed = cmp.Or(failed, p.err)
		default:
			delete(st.restoring, id)
			st.parts[id] = p
			st.state.Adopt(p.state, time.Now())
			adopted = append(adopted, id)
		}
	}
	var todo []*storePart
	for id, gen := range st.assigned {
		if st.parts[id] == nil && st.restoring[id] == nil {
			p := st.newPart(id, gen)
			st.restoring[id] = p
			todo = append(todo, p)
		}
	}
	st.mu.Unlock()
	if failed != nil {
		return failed
	}
	if err := st.leases.cleanUp(st.state, s.log); err != nil {
		return fmt.Errorf("store %q: delete a partition's state from %s: %w", st.name, st.disk.Dir(), err)
	}
	for _, id := range adopted {
		if err := cmp.Or(s.timers.rebuild(st.state, id), st.interval.rebuild(st.state, id)); err != nil {
			return fmt.Errorf("store %q partition %d: %w", st.name, id, err)
		}
	}
	if adopted = s.tables.restored(adopted); len(adopted) > 0 { // a partitioned table's restore resumes the others
		s.cl.ResumeFetchPartitions(st.ofInputs(adopted))
	}
	// New partitions wait for the changelog's check (at the stream's
	// start only), their fetching paused.
	for wait := retryWait(); len(todo) > 0 && !st.checked; {
		if err := wait(ctx); err != nil {
			return nil // the stream stops
		}
		if err := s.checkChangelog(ctx); err != nil {
			return err
		}
	}
	slices.SortFunc(todo, func(a, b *storePart) int { return int(a.id - b.id) })
	for _, p := range todo {
		s.startRestore(ctx, p)
	}
	return nil
}

// startRestore restores p on a goroutine of its own, until it ends, fails
// or ctx ends (a revocation ends it too), then wakes the run goroutine to
// adopt it. At most restoreReads restores read at once.
func (s *stream) startRestore(ctx context.Context, p *storePart) {
	st := s.store
	rctx, cancel := context.WithCancel(ctx)
	st.mu.Lock()
	p.cancel = cancel
	if gen, ok := st.assigned[p.id]; !ok || gen != p.gen {
		cancel() // revoked before it began
	}
	st.mu.Unlock()
	cl := s.cl // s.cl is the run goroutine's to change (see reinit)
	st.restores.Go(func() {
		defer cancel()
		start := time.Now()
		n, tail, err := s.restore(rctx, cl, p)
		if rctx.Err() != nil || err != nil {
			p.releaseDisk()
		}
		if rctx.Err() != nil {
			return // revoked, or the stream stops: syncStore forgets it
		}
		st.mu.Lock()
		if st.restoring[p.id] != p { // revoked as it ended: syncStore forgot it
			st.mu.Unlock()
			p.releaseDisk()
			return
		}
		p.restored = true
		if err != nil {
			p.err = fmt.Errorf("restore store %q partition %d from %q: %w", st.name, p.id, st.topic, err)
		}
		st.wakeLocked()
		st.mu.Unlock()
		if err == nil {
			took := time.Since(start)
			st.restored.Add(n)
			st.noteRestore(RestoreStatus{Partition: p.id, Records: n, Took: took, Tail: tail})
			var from string
			if tail {
				from = ", from the state on disk's position"
			}
			s.log(fmt.Sprintf("stream %s: store %q partition %d restored: %d changelog records, %d keys, in %v%s", s.h.ID(), st.name, p.id, n, p.state.Counts().Keys, took.Round(time.Millisecond), from))
		}
	})
}

// stopRestores ends the restores in progress and waits for their
// goroutines, when the stream stops.
func (st *kafkaStore) stopRestores() {
	st.forget()
	st.restores.Wait()
}

// checkChangelog creates the changelog topic, compacted, with the input's
// partition count, or checks that the one there has that count. The input
// missing is no error: the check waits for it, as consuming does.
func (s *stream) checkChangelog(ctx context.Context) error {
	st := s.store
	adm := kadm.NewClient(s.cl)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout())
	defer cancel()
	if s.spec.Rekey != nil {
		if there, err := s.checkRepartition(ctx, adm); !there || err != nil {
			return err
		}
	}
	topics, err := topicPartitions(ctx, s.cl, append([]string{st.topic}, st.inputs...)...)
	if err != nil {
		return nil // retried before the next poll; the poll reports the brokers' trouble
	}
	want, ok := topics[st.inputs[0]]
	if !ok || want.err != nil {
		return nil
	}
	for _, t := range st.inputs[1:] {
		in, ok := topics[t]
		if !ok || in.err != nil {
			return nil
		}
		if in.n != want.n {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, "store %q: its inputs are not co-partitioned: %q has %d partitions and %q has %d; a stateful stream keeps partition N of each input in its store's partition N, so they must match", st.name, st.inputs[0], want.n, t, in.n)
		}
	}
	if cl, ok := topics[st.topic]; ok {
		if cl.err != nil {
			return nil // a topic just created, without leaders yet: checked again before the next poll
		}
		if cl.n != want.n {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, "store %q: its changelog %q has %d partitions and the input %q has %d; they must match (delete the changelog to start the store afresh)", st.name, st.topic, cl.n, st.inputs[0], want.n)
		}
		st.checked = true
		return nil
	}
	compact := "compact"
	_, err = adm.CreateTopic(ctx, int32(want.n), -1, map[string]*string{"cleanup.policy": &compact}, st.topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return kafkabpl.Wrapf(kafkabpl.ErrKafka, err, "store %q: create its changelog %q", st.name, st.topic)
	}
	if err == nil {
		s.log(fmt.Sprintf("stream %s: store %q: created its changelog %q, compacted, %d partitions", s.h.ID(), st.name, st.topic, want.n))
	}
	return nil // checked before the next poll: a broker may show a new topic a moment after it was created
}

// topicInfo is a topic as a metadata response shows it: its partition
// count, or the error the brokers gave for it.
type topicInfo struct {
	n   int
	err error
}

// topicPartitions asks the brokers about topics directly, never asking
// them to create a missing one: a request through the client's metadata
// cache (as kadm's ListTopics makes) asks for that when the config allows
// auto-creation, its default, and a broker that allows it too (Kafka's
// default) would create the changelog with its default partition count
// (num.partitions, 1), not the input's. A missing topic is left out.
func topicPartitions(ctx context.Context, cl *kgo.Client, topics ...string) (map[string]topicInfo, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := make(map[string]topicInfo, len(resp.Topics))
	for _, t := range resp.Topics {
		err := kerr.ErrorForCode(t.ErrorCode)
		if t.Topic == nil || errors.Is(err, kerr.UnknownTopicOrPartition) {
			continue
		}
		out[*t.Topic] = topicInfo{n: len(t.Partitions), err: err}
	}
	return out, nil
}

// errOpenTransaction says a changelog partition has a transaction open.
var errOpenTransaction = errors.New("a transaction is open on the changelog partition")

// decompressor reads the changelog's compressed batches.
var decompressor = kgo.DefaultDecompressor()

// restore reads partition p's changelog into p and returns how many
// records it applied. It first waits until no transaction is open on the
// partition (its last stable offset reaches its end): one a previous
// owner left open commits or aborts, or times out, and what it wrote is
// then known. It reads read_committed from the start up to that end, and
// is done on position, not on seeing a last record: transaction markers
// and compaction leave offsets without a record.
func (s *stream) restore(ctx context.Context, cl *kgo.Client, p *storePart) (n int64, tail bool, err error) {
	st := s.store
	adm := kadm.NewClient(cl)
	wait := retryWait()
	var start, end int64
	for {
		var err error
		if start, end, err = st.bounds(ctx, adm, p.id); err == nil {
			break
		}
		if ctx.Err() != nil {
			return 0, false, ctx.Err()
		}
		if !errors.Is(err, errOpenTransaction) && !kerr.IsRetriable(err) {
			return 0, false, err
		}
		if err := wait(ctx); err != nil {
			return 0, false, err
		}
	}
	select { // a share of the memory restores may take (restoreReads)
	case st.reads <- struct{}{}:
		defer func() { <-st.reads }()
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
	// A standby copy of the partition goes on from where it is, and so
	// does a state on disk: only the changelog's tail is read (see
	// standby.go and disk.go).
	start = s.resumeStandby(p, start, end)
	if p.release, err = st.leases.acquire(ctx, p.id); err != nil {
		return 0, false, err
	}
	if start, tail, err = s.diskStart(p, start, end); err != nil {
		return 0, false, err
	}
	st.mu.Lock()
	p.read, p.total = 0, end-start
	st.mu.Unlock()
	st.state.Grow(p.state, end-start) // the changelog's offsets bound its keys
	err = readRange(ctx, cl, adm, st.topic, p.id, start, end, wait, func(recs []*kgo.Record) error {
		// Applied in chunks: the part's lock (status reads the counts)
		// is taken per chunk of records, not per record: a million
		// records paid a lock and an unlock each.
		for len(recs) > 0 {
			chunk := recs[:min(len(recs), applyChunk)]
			recs = recs[len(chunk):]
			st.state.SetPosition(p.state, chunk[len(chunk)-1].Offset+1) // kept on disk with the chunk
			k, err := st.state.Apply(p.state, changelogRecords(chunk))
			n += int64(k)
			if err != nil {
				return fmt.Errorf("offset %d: %w", chunk[k].Offset, err)
			}
		}
		return nil
	}, func(off int64) {
		st.mu.Lock()
		p.read = off - start
		st.mu.Unlock()
	})
	if err == nil && st.disk != nil { // the end: past the last record, its transaction's marker
		st.state.SetPosition(p.state, end)
		if _, err = st.state.Apply(p.state, changelogRecords(nil)); err == nil {
			err = st.state.Sync()
		}
	}
	return n, tail, err
}

// readRange reads partition of topic from start up to end, read_committed,
// from its leader (found anew after a failed fetch), handing each fetched
// chunk of records to apply and the offset reached to progress. It is done
// on position, not on seeing a last record: transaction markers and
// compaction leave offsets without a record. wait paces retries.
func readRange(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topic string, partition int32, start, end int64,
	wait func(context.Context) error, apply func([]*kgo.Record) error, progress func(off int64)) error {
	leader, id := int32(-1), [16]byte{}
	for off := start; off < end; {
		if leader < 0 {
			var err error
			if leader, id, err = partitionLeader(ctx, adm, topic, partition); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if werr := wait(ctx); werr != nil {
					return werr
				}
				continue
			}
		}
		rp, err := fetchOne(ctx, cl, leader, topic, id, partition, off)
		if err == nil {
			err = kerr.ErrorForCode(rp.ErrorCode)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, kerr.OffsetOutOfRange) {
				return fmt.Errorf("offset %d: the partition's start moved past it during the read", off)
			}
			leader = -1 // a new leader, maybe
			if werr := wait(ctx); werr != nil {
				return werr
			}
			continue
		}
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
			Offset: off, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: partition,
		}, rp, decompressor, nil)
		if fp.Err != nil {
			return fp.Err
		}
		recs := fp.Records
		for i := len(recs); i > 0 && recs[i-1].Offset >= end; i-- {
			recs = recs[:i-1]
		}
		if err := apply(recs); err != nil {
			return err
		}
		if next <= off {
			break // nothing more below the end: compacted away, or markers
		}
		off = next
		progress(min(off, end))
	}
	return nil
}

// partitionLeader returns the leader of partition of topic, and the
// topic's id, as the brokers' metadata shows them; -1 and an error when
// it does not.
func partitionLeader(ctx context.Context, adm *kadm.Client, topic string, partition int32) (int32, [16]byte, error) {
	topics, err := adm.ListTopics(ctx, topic)
	if err == nil {
		err = topics.Error()
	}
	if err != nil {
		return -1, [16]byte{}, err
	}
	td := topics[topic]
	pd, ok := td.Partitions[partition]
	if !ok || pd.Leader < 0 {
		return -1, [16]byte{}, fmt.Errorf("topic %q partition %d: no leader known", topic, partition)
	}
	return pd.Leader, td.ID, nil
}

// changelogRecords is recs as Apply reads them: each one's key and value.
func changelogRecords(recs []*kgo.Record) iter.Seq2[[]byte, []byte] {
	return func(yield func(key, value []byte) bool) {
		for _, r := range recs {
			if !yield(r.Key, r.Value) {
				return
			}
		}
	}
}

// retryWait returns a wait of 20 ms that doubles up to a second.
func retryWait() func(ctx context.Context) error {
	d := 20 * time.Millisecond
	return func(ctx context.Context) error {
		t := time.NewTimer(d)
		defer t.Stop()
		d = min(2*d, time.Second)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
}

// bounds returns a changelog partition's start and end, or
// errOpenTransaction.
func (st *kafkaStore) bounds(ctx context.Context, adm *kadm.Client, id int32) (start, end int64, err error) {
	lookup := func(list func(context.Context, ...string) (kadm.ListedOffsets, error)) (int64, error) {
		offs, err := list(ctx, st.topic)
		if err != nil {
			return 0, err
		}
		o, ok := offs.Lookup(st.topic, id)
		if !ok {
			return 0, kerr.UnknownTopicOrPartition
		}
		return o.Offset, o.Err
	}
	if start, err = lookup(adm.ListStartOffsets); err != nil {
		return 0, 0, err
	}
	if end, err = lookup(adm.ListEndOffsets); err != nil {
		return 0, 0, err
	}
	stable, err := lookup(adm.ListCommittedOffsets)
	if err != nil {
		return 0, 0, err
	}
	if stable < end {
		return 0, 0, fmt.Errorf("%w: stable to %d, end %d", errOpenTransaction, stable, end)
	}
	return start, end, nil
}

// fetchOne fetches a partition from offset, read_committed, from its
// leader.
func fetchOne(ctx context.Context, cl *kgo.Client, leader int32, topic string, id [16]byte, partition int32, offset int64) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 100
	req.MinBytes = 1
	req.MaxBytes = 64 << 20
	req.IsolationLevel = 1
	req.SessionEpoch = -1 // no fetch session
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, offset, 32<<20
	rp.CurrentLeaderEpoch, rp.LogStartOffset = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if resp.Topics[i].Partitions[j].Partition == partition {
				return &resp.Topics[i].Partitions[j], nil
			}
		}
	}
	return nil, kerr.UnknownTopicOrPartition
}

// restoreReads is how many restores read their changelog at once: each
// fetch response may hold 32 MB of one partition, and a stream assigned a
// hundred partitions at its start would otherwise read them all at once.
const restoreReads = 4

// applyChunk is how many changelog records a restore applies per hold of
// the part's lock (see store.Apply).
const applyChunk = 1024
