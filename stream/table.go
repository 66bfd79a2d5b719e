package stream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/brain4it/kafkabpl/internal/topicname"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Global tables: a compacted topic that every instance of a stream reads
// whole, to look keys up in and to join its inputs with (Kafka Streams'
// GlobalKTable, goka's Lookup). The topic is the table's changelog: a
// stream started again reads it again, so a table keeps no state of its
// own in Kafka.

// Table is a compacted topic that a stream reads as a table, the
// latest value per key (a null value deletes its key), for its functions
// to look up ([Lookup], BPL's kafka-lookup) and for [Join].
//
// By default the table is global: every instance of the stream (every process of
// its group) reads all of the topic's partitions, so it suits reference
// data that fits in memory, such as a device registry. A stream reads its
// tables to their end (their last stable offset, as it was when the
// stream started) before it processes any input, then follows their
// updates as they come, on a goroutine of their own. A global table's
// updates are not ordered with the stream's inputs: an input is joined
// with what the table holds when the input is processed, as in Kafka
// Streams' global tables; so an update that races an input by a
// millisecond may be seen by it or not, whatever their timestamps (a
// partitioned table orders them). Keys and values are read with the
// stream's key and value deserializers.
//
// The topic must exist when the stream starts (the stream fails
// otherwise), and should be compacted ("cleanup.policy" "compact"): the
// stream logs a warning for one that is not, whose old records the
// brokers may delete while the table still needs them.
//
// A table marked Partitioned is co-partitioned with the stream's inputs
// instead (Kafka Streams' KTable): see [Table.Partitioned].
type Table struct {
	Name  string // the name functions and joins use; the topic when empty
	Topic string

	// Partitioned makes the table co-partitioned with the stream's
	// inputs: the topic has their partition count (checked when the
	// stream starts: the stream fails otherwise) and is keyed alike, and
	// each instance holds only the table's partitions whose numbers it is
	// assigned of its inputs. A partition is restored (read to its last
	// stable offset) when it is assigned, before any input of that
	// partition is fetched; dropped when revoked; then kept up to date by
	// a follower that fetches the topic's updates (read_committed).
	//
	// Updates are applied in timestamp order with the inputs, as Kafka
	// Streams orders a task's inputs: before an input of partition N with
	// timestamp T is processed, the updates of the table's partition N
	// fetched so far (restored or followed) whose timestamps are up to T
	// are applied, in offset order (an update with a later timestamp holds
	// back those after it, as in Kafka Streams); the later ones are not.
	// So an update at T and an input at T+1 ms: the input sees the update
	// if it was fetched when the input is processed (always when it was
	// written before the partition was assigned); an input at T and an
	// update at T+1 ms: the input never sees the update, unless the input
	// lagged so that the update had waited Hold. A lagging table is not
	// waited for (Kafka Streams' max.task.idle.ms 0): an update not yet
	// fetched is applied later. Between batches, the updates the inputs'
	// time reached, and those that waited Hold, are applied, so that a
	// table whose inputs are idle is at most Hold behind what was fetched.
	//
	// A join reads its input's partition; a [Lookup] must be for a key of
	// a partition this instance holds restored (Kafka's default
	// partitioner, murmur2, says which partition a key is in), or it is
	// an [kafkabpl.ErrInvalidArgument] error. Hazard: the updates applied by a
	// batch that aborts stay applied, so an input read again may see an
	// update later than itself; inputs older than the table's rows (old
	// events replayed against reference data written since) do not see
	// those rows until they have waited Hold: a global table suits such
	// data. Not with a Rekey (its inputs' partitions are not the
	// table's). false (the default): a global table.
	//
	// With the stream's "state-dir", the partitions' rows are kept on
	// disk, under "<state-dir>/<group>/%tables/<name>", with the offset
	// they reach, written between batches: a stream started again reads
	// only the topic's records after it, and memory holds a batch's
	// updates, not the rows; a partition no longer held is deleted after
	// the config's "state-cleanup-delay". A global table is held in
	// memory.
	Partitioned bool
	// Hold is how long a partitioned table's update, fetched with a
	// timestamp later than the inputs of its partition processed so far,
	// waits for an input that reaches it before it is applied anyway,
	// counted from its fetch (a restored one's: from the end of its
	// partition's restore). 0: 2 s. Ignored for a global table.
	Hold time.Duration
}

// JoinKind is how a stream joins its inputs with a table.
type JoinKind int8

const (
	// InnerJoin (the default) processes only the inputs whose key the
	// table holds; the others are dropped (counted in Dropped).
	InnerJoin JoinKind = iota
	// LeftJoin processes every input; one whose key the table lacks is
	// joined with nil.
	LeftJoin
)

// String returns "inner" or "left".
func (k JoinKind) String() string {
	if k == LeftJoin {
		return "left"
	}
	return "inner"
}

// Join joins each input with the value a table holds for the input's
// key (its bytes, as written): [kafkabpl.Record.Joined] returns it, and a BPL
// function sees it as the input's "joined" element.
type Join struct {
	Table string   // a table of the spec's Tables, by its name
	Kind  JoinKind // InnerJoin by default
}

// rowSet is a table's rows: the latest value of each key, and their size.
type rowSet struct {
	rows  map[string][]byte
	bytes int64
}

// put sets key's value; a nil value deletes key, a nil key is no row.
func (rs *rowSet) put(key, val []byte) {
	if key == nil {
		return
	}
	old, had := rs.rows[string(key)]
	if had {
		rs.bytes -= int64(len(key) + len(old))
	}
	if val == nil {
		delete(rs.rows, string(key))
		return
	}
	rs.rows[string(key)] = val
	rs.bytes += int64(len(key) + len(val))
}

// globalTable is a table a stream holds: whole, or the partitions it is
// assigned (pt non-nil: see stream_ptable.go).
type globalTable struct {
	Table
	cfg *kafkabpl.ClientConfig
	cl  *kgo.Client // follows the topic once the bootstrap read it
	pt  *partTable  // a partitioned table's partitions; nil: a global table

	decodeFn func([]byte) any // decode, made once: what a join's Joined reads with

	mu sync.RWMutex
	rowSet
	ready bool

	read, total atomic.Int64 // the bootstrap's progress, in offsets
	updates     atomic.Int64 // records applied since the stream started
}

// tablesKey is the context key of a stream's tables (see Lookup).
type tablesKey struct{}

// streamTables are a stream's tables, by name.
type streamTables map[string]*globalTable

// checkTables validates the spec's tables and join.
func (spec *Spec) checkTables() error {
	names := map[string]bool{}
	for i := range spec.Tables {
		t := &spec.Tables[i]
		if err := topicname.Check(t.Topic); err != nil {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"tables": table %d: %v`, i+1, err)
		}
		name := t.Name
		if name == "" {
			name = t.Topic
		}
		if names[name] {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"tables": %q names two tables`, name)
		}
		if t.Partitioned && spec.Rekey != nil {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"tables": %q is partitioned, and the stream re-keys its inputs ("rekey"): a partitioned table is co-partitioned with the inputs as they are; use a global table`, name)
		}
		if t.Hold < 0 {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"tables": %q: hold %v is negative`, name, t.Hold)
		}
		if slices.Contains(spec.From, t.Topic) {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"tables": %q is an input topic too; a table is read whole, not as an input`, t.Topic)
		}
		names[name] = true
	}
	if j := spec.Join; j != nil {
		if !names[j.Table] {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, `"join" %q: not a table of the stream (its "tables" name %v)`, j.Table, slices.Sorted(maps.Keys(names)))
		}
		if j.Kind != InnerJoin && j.Kind != LeftJoin {
			return kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "join kind %d: want InnerJoin or LeftJoin", j.Kind)
		}
	}
	return nil
}

// newTables returns a stream's tables, empty; nil for none. A
// partitioned table's rows are kept on disk when the config has a
// "state-dir", under "<state-dir>/<group>/%tables/<name>" (a name's path
// part never starts with %t: see pathPart).
func newTables(cfg *kafkabpl.ClientConfig, specs []Table, inputs []string, log func(string)) (streamTables, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	ts := streamTables{}
	for _, spec := range specs {
		if spec.Name == "" {
			spec.Name = spec.Topic
		}
		t := &globalTable{Table: spec, cfg: cfg, rowSet: rowSet{rows: map[string][]byte{}}}
		t.decodeFn = t.decode
		ts[spec.Name] = t
		if !spec.Partitioned {
			continue
		}
		t.pt = newPartTable(t, inputs)
		if cfg.StateDir() == "" {
			continue
		}
		dir := filepath.Join(cfg.StateDir(), pathPart(cfg.Group()), "%tables", pathPart(spec.Name))
		d, err := store.OpenDisk(dir, store.Identity{Group: cfg.Group(), Store: "table " + spec.Name, Changelog: spec.Topic}, log)
		if err != nil {
			ts.closeDisks()
			return nil, kafkabpl.Wrapf(kafkabpl.ErrInvalidConfig, err, `config "state-dir": table %q`, spec.Name)
		}
		pt := t.pt
		pt.dir, pt.disk = d, store.New(store.Config{Disk: d})
		wake := func() {
			pt.t.mu.Lock()
			pt.wakeLocked()
			pt.t.mu.Unlock()
		}
		if pt.leases, err = newDiskLeases(d, cfg.StateCleanupDelay(), wake); err != nil {
			ts.closeDisks()
			return nil, kafkabpl.Wrapf(kafkabpl.ErrInvalidConfig, err, `config "state-dir": table %q`, spec.Name)
		}
	}
	return ts, nil
}

// closeDisks closes the partitioned tables' state directories, once the
// stream's goroutines are done.
func (ts streamTables) closeDisks() {
	for _, t := range ts {
		if t.pt != nil && t.pt.dir != nil {
			t.pt.leases.stop()
			t.pt.dir.Close()
		}
	}
}

// bootstrap reads every table to its end, as the brokers report it now,
// then starts following each on a client of its own; it fails for a table
// whose topic does not exist. log says what is worth saying.
func (ts streamTables) bootstrap(ctx context.Context, s *stream) error {
	if len(ts) == 0 {
		return nil
	}
	adm := kadm.NewClient(s.cl) // the run goroutine's, as s.cl is
	for _, t := range ts.sorted() {
		bootstrap := t.bootstrap
		if t.pt != nil {
			bootstrap = t.pt.bootstrap
		}
		if err := bootstrap(ctx, s, adm); err != nil {
			return fmt.Errorf("table %q (topic %q): %w", t.Name, t.Topic, err)
		}
	}
	return nil
}

// sorted returns the tables in name order.
func (ts streamTables) sorted() []*globalTable {
	out := make([]*globalTable, 0, len(ts))
	for _, t := range ts {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *globalTable) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (t *globalTable) bootstrap(ctx context.Context, s *stream, adm *kadm.Client) error {
	wait := retryWait()
	var bounds map[int32][2]int64
	for {
		var err error
		if bounds, err = t.bounds(ctx, s.cl, adm); err == nil {
			break
		}
		if ctx.Err() != nil || errors.Is(err, kafkabpl.ErrInvalidConfig) {
			return err
		}
		if err := wait(ctx); err != nil {
			return err
		}
	}
	t.warnIfNotCompacted(ctx, s, adm)
	var total int64
	for _, b := range bounds {
		total += b[1] - b[0]
	}
	t.total.Store(total)
	partitions := make([]int32, 0, len(bounds))
	for p := range bounds {
		partitions = append(partitions, p)
	}
	slices.Sort(partitions)
	for _, p := range partitions {
		start, end := bounds[p][0], bounds[p][1]
		last := start
		err := readRange(ctx, s.cl, adm, t.Topic, p, start, end, wait, func(recs []*kgo.Record) error {
			t.apply(recs)
			return nil
		}, func(off int64) {
			t.read.Add(off - last)
			last = off
		})
		if err != nil {
			return fmt.Errorf("partition %d: %w", p, err)
		}
		t.read.Add(end - last)
	}
	// Follow from where the first read ended.
	offsets := map[int32]kgo.Offset{}
	for p, b := range bounds {
		offsets[p] = kgo.NewOffset().At(b[1])
	}
	cl, err := t.follower(s, offsets)
	if err != nil {
		return err
	}
	t.cl = cl
	t.mu.Lock()
	t.ready = true
	t.mu.Unlock()
	s.log(fmt.Sprintf("stream %s: table %q read from %q: %d keys", s.h.ID(), t.Name, t.Topic, t.len()))
	s.followers.Go(func() { t.follow(s) })
	return nil
}

// bounds returns the table's partitions, each with its start and its last
// stable offset: what a read_committed reader reads now.
func (t *globalTable) bounds(ctx context.Context, cl *kgo.Client, adm *kadm.Client) (map[int32][2]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.RequestTimeout())
	defer cancel()
	topics, err := topicPartitions(ctx, cl, t.Topic)
	if err != nil {
		return nil, err
	}
	info, ok := topics[t.Topic]
	if !ok {
		return nil, kafkabpl.Errorf(kafkabpl.ErrInvalidConfig, "the topic does not exist; create it (compacted) before the stream starts")
	}
	if info.err != nil {
		return nil, info.err
	}
	starts, err := adm.ListStartOffsets(ctx, t.Topic)
	if err != nil {
		return nil, err
	}
	ends, err := adm.ListCommittedOffsets(ctx, t.Topic)
	if err != nil {
		return nil, err
	}
	bounds := map[int32][2]int64{}
	for p := range int32(info.n) {
		s, ok1 := starts.Lookup(t.Topic, p)
		e, ok2 := ends.Lookup(t.Topic, p)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("no offsets for partition %d", p)
		}
		if err := cmp.Or(s.Err, e.Err); err != nil {
			return nil, err
		}
		bounds[p] = [2]int64{s.Offset, e.Offset}
	}
	return bounds, nil
}

// warnIfNotCompacted logs a warning for a table topic that is not
// compacted; a topic whose config cannot be read gets none.
func (t *globalTable) warnIfNotCompacted(ctx context.Context, s *stream, adm *kadm.Client) {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.RequestTimeout())
	defer cancel()
	rcs, err := adm.DescribeTopicConfigs(ctx, t.Topic)
	if err != nil {
		return
	}
	rc, err := rcs.On(t.Topic, nil)
	if err != nil || rc.Err != nil {
		return
	}
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && !strings.Contains(c.MaybeValue(), "compact") {
			s.log(fmt.Sprintf("stream %s: warning: table %q: its topic %q is not compacted (cleanup.policy %q): the brokers may delete records the table still needs; set cleanup.policy to compact", s.h.ID(), t.Name, t.Topic, c.MaybeValue()))
		}
	}
}

// follower makes the client that follows the table's topic from offsets:
// a direct consumer, read_committed, that long-polls as the library's
// consumers do (see consumerOpts). A partitioned table's restores add its
// partitions later.
func (t *globalTable) follower(s *stream, offsets map[int32]kgo.Offset) (*kgo.Client, error) {
	opts := t.cfg.ClientOpts(kafkabpl.Admin, s.h.ID()+"-table-"+t.Name)
	opts = append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{t.Topic: offsets}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, kafkabpl.Wrapf(kafkabpl.ErrInvalidConfig, err, "config")
	}
	return cl, nil
}

// follow applies the table's updates until the stream stops.
func (t *globalTable) follow(s *stream) {
	defer t.cl.Close()
	for {
		fetches := t.cl.PollFetches(s.pollCtx)
		if fetches.IsClientClosed() || s.pollCtx.Err() != nil {
			return
		}
		t.logFetchErrors(s, fetches)
		t.apply(fetches.Records())
	}
}

// logFetchErrors logs the errors of a follower's fetches.
func (t *globalTable) logFetchErrors(s *stream, fetches kgo.Fetches) {
	fetches.EachError(func(topic string, p int32, err error) {
		if !errors.Is(err, context.Canceled) {
			s.log(fmt.Sprintf("stream %s: table %q: topic %q partition %d: %v", s.h.ID(), t.Name, topic, p, err))
		}
	})
}

// apply applies records to the table: each sets its key's value, or
// deletes it when the value is null.
func (t *globalTable) apply(recs []*kgo.Record) {
	if len(recs) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range recs {
		t.put(r.Key, r.Value)
	}
	t.updates.Add(int64(len(recs)))
}

// get returns key's value bytes; nil when the table lacks it.
func (t *globalTable) get(key []byte) []byte {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.rows[string(key)]
}

func (t *globalTable) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.rows)
}

// decode is a value of the table as the stream's value deserializer
// reads it; bytes it cannot read come back as they are.
func (t *globalTable) decode(b []byte) any {
	v, err := t.cfg.ValueDeserializer().Decode(context.Background(), t.Topic, b, "")
	if err != nil {
		return b
	}
	return v
}

// Lookup returns the value that table, a table of the stream that called
// the function, holds for key, and whether it holds key. ctx must be the
// context a stream passes to its Transform, Update or aggregate, or one
// made from it; key is encoded with the stream's key serializer (a string
// with the default one), and the value is read with its value
// deserializer. An unknown table, or a ctx that is no stream's, is an
// [kafkabpl.ErrInvalidArgument] error.
func Lookup(ctx context.Context, table string, key any) (any, bool, error) {
	ts, _ := ctx.Value(tablesKey{}).(streamTables)
	if ts == nil {
		return nil, false, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "table %q: only a stream's functions look tables up, and this is none", table)
	}
	t := ts[table]
	if t == nil {
		return nil, false, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "table %q: not a table of the stream (its tables: %v)", table, slices.Sorted(maps.Keys(ts)))
	}
	k, err := t.cfg.KeySerializer().Encode(ctx, t.Topic, key, 1, "key")
	if err != nil {
		return nil, false, err
	}
	var raw []byte
	if t.pt != nil {
		if raw, err = t.pt.lookup(k); err != nil {
			return nil, false, kafkabpl.Errorf(kafkabpl.ErrInvalidArgument, "table %q: key %v: %v", table, key, err)
		}
	} else {
		raw = t.get(k)
	}
	if raw == nil {
		return nil, false, nil
	}
	return t.decode(raw), true, nil
}

// join looks in's key up in the join's table, into in.join (process gives
// each input of a batch one); false: an inner join drops the input. A
// partitioned table's partition of the input no longer held is
// errNotHeld.
func (s *stream) join(in *kafkabpl.Record, slot *kafkabpl.Joined) (bool, error) {
	j := s.spec.Join
	t := s.tables[j.Table]
	raw, err := t.get(in.KeyBytes()), error(nil)
	if t.pt != nil {
		raw, err = t.pt.get(in.Partition(), in.KeyBytes())
	}
	*slot = kafkabpl.Joined{Raw: raw, Decode: t.decodeFn}
	in.SetJoined(slot)
	return raw != nil || j.Kind == LeftJoin, err
}

// TableStatus is a stream's table as this process holds it.
type TableStatus struct {
	Name, Topic string
	Ready       bool  // global: read to the end it had when the stream started; partitioned: every partition held is restored; following its updates
	Keys        int64 // keys held
	Bytes       int64 // their keys and values, in bytes
	Read, Total int64 // the first read's progress, in offsets (partitioned: the restores of the partitions held)
	Updates     int64 // records applied since the stream started (partitioned: restored ones too)

	Partitioned bool  // co-partitioned with the inputs (see [Table.Partitioned])
	Partitions  int   // partitioned: partitions held, restored or restoring
	Restoring   int   // partitioned: partitions being restored
	Pending     int64 // partitioned: updates fetched (or restored) and not yet applied, waiting for the inputs' time to reach them
}

func (ts streamTables) status() []TableStatus {
	var out []TableStatus
	for _, t := range ts.sorted() {
		if t.pt != nil {
			out = append(out, t.pt.status())
			continue
		}
		t.mu.RLock()
		out = append(out, TableStatus{Name: t.Name, Topic: t.Topic, Ready: t.ready, Keys: int64(len(t.rows)), Bytes: t.bytes,
			Read: t.read.Load(), Total: t.total.Load(), Updates: t.updates.Load()})
		t.mu.RUnlock()
	}
	return out
}

// List returns the status as kafka-stream-status shows it under "tables".
func (ts *TableStatus) List() *value.List {
	l := &value.List{}
	l.AppendNamed("name", ts.Name)
	l.AppendNamed("topic", ts.Topic)
	l.AppendNamed("ready", ts.Ready)
	l.AppendNamed("keys", ts.Keys)
	l.AppendNamed("bytes", ts.Bytes)
	l.AppendNamed("read", ts.Read)
	l.AppendNamed("total", ts.Total)
	l.AppendNamed("updates", ts.Updates)
	if ts.Partitioned {
		l.AppendNamed("partitioned", true)
		l.AppendNamed("partitions", int64(ts.Partitions))
		l.AppendNamed("restoring", int64(ts.Restoring))
		l.AppendNamed("pending", ts.Pending)
	}
	return l
}
