package stream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
)

// holdRestores has the restores of topic's partitions wait until the
// returned func is called (or their restore ends), for the test's length.
func holdRestores(t *testing.T, topic string) (release func()) {
	gate := make(chan struct{})
	hook := func(ctx context.Context, tp string, _ int32) {
		if tp != topic {
			return
		}
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	tableRestoreHook.Store(&hook)
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(func() {
		release()
		tableRestoreHook.Store(nil)
	})
	return release
}

// TestPartitionedTableJoin joins orders with a partitioned table of
// customers, co-partitioned over two partitions, in two members of one
// group. The second member joins while the first one's restores are held
// up, so the group rebalances during them: the first member's restore of
// the partition it gives up ends, and each member then holds, restored,
// the partition it is assigned, and only it. Every order is joined with
// its customer, a Lookup of a key of the other member's partition is an
// error naming it, and the table's later updates and deletions are seen by
// later orders.
func TestPartitionedTableJoin(t *testing.T) {
	servers := newCluster(t, embedded.Topics("pt-orders"), embedded.Partitions(2)).Servers()
	release := holdRestores(t, "pt-customers")
	libs := []*kafkabpl.Library{streamLib(t), streamLib(t)}
	ctx := testCtx(t)
	var rows []any
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprintf("c%d", i))
		rows = append(rows, keys[i], fmt.Sprintf("name-%d", i))
	}
	tableTopic(t, libs[0], servers, "pt-customers", 2, pairs(rows...)...)
	var mu sync.Mutex
	found := [2]map[string]bool{{}, {}} // the keys each member's lookups found
	var lookupErrs [2]int
	var ids []string
	for i, lib := range libs {
		transform := func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) {
			name, _ := in.Joined()
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				_, ok, err := Lookup(ctx, "customers", k)
				switch {
				case err == nil:
					found[i][k] = true // c2 is deleted later: held, not found
				case errors.Is(err, kafkabpl.ErrInvalidArgument) && strings.Contains(err.Error(), "which this instance does not hold restored"):
					lookupErrs[i]++
				default:
					return nil, fmt.Errorf("lookup %s: %v %v", k, ok, err)
				}
			}
			return []Output{{Message: kafkabpl.Message{Key: in.Key(), Value: fmt.Sprintf("%v@%v", in.Value(), name)}}}, nil
		}
		ids = append(ids, must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "pt-join"}, Spec{
			From: []string{"pt-orders"}, To: "pt-joined", Transform: transform,
			Tables: []Table{{Name: "customers", Topic: "pt-customers", Partitioned: true}},
			Join:   &Join{Table: "customers"},
		})))
		if i == 0 {
			waitStream(t, lib, ids[0], func(st *Status) bool { return st.Tables[0].Restoring == 2 })
		}
	}
	table := func(i int) TableStatus {
		return must[*Status](t)(Of(libs[i]).Status(ctx, ids[i])).Tables[0]
	}
	waitStream(t, libs[0], ids[0], func(st *Status) bool {
		return st.Tables[0].Partitions == 1 && table(1).Partitions == 1
	})
	release()
	var keysHeld int64
	for i := range libs {
		tb := waitStream(t, libs[i], ids[i], func(st *Status) bool { return st.Tables[0].Ready }).Tables[0]
		if !tb.Partitioned || tb.Restoring != 0 || tb.Read != tb.Total || tb.Keys+tb.Pending == 0 {
			t.Errorf("member %d: table status %+v", i, tb)
		}
		keysHeld += tb.Keys + tb.Pending
	}
	if keysHeld != 10 {
		t.Errorf("the members hold %d rows in all, want 10 (each in one)", keysHeld)
	}
	orders := func(ks ...string) []kafkabpl.Message {
		var msgs []kafkabpl.Message
		for _, k := range ks {
			msgs = append(msgs, kafkabpl.Message{Key: k, Value: "o-" + k})
		}
		return msgs
	}
	sendValues(t, libs[0], servers, "pt-orders", orders(append(slices.Clone(keys), "nobody")...)...)
	var want []string
	for i, k := range keys {
		want = append(want, fmt.Sprintf("o-%s@name-%d", k, i))
	}
	got := values(readAll(t, libs[0], servers, 10, "pt-joined"))
	if sorted(got) != strings.Join(want, " ") {
		t.Errorf("joined %q, want %q", sorted(got), strings.Join(want, " "))
	}
	mu.Lock()
	if len(found[0])+len(found[1]) != 10 || len(found[0]) == 0 || len(found[1]) == 0 || lookupErrs[0] == 0 || lookupErrs[1] == 0 {
		t.Errorf("lookups found %v, %d errors %v: want each key in one member, the others' an error", found, lookupErrs[0]+lookupErrs[1], lookupErrs)
	}
	for k := range found[0] {
		if found[1][k] {
			t.Errorf("key %s found by both members", k)
		}
	}
	mu.Unlock()
	// c1 moves, c2 is deleted: once the members fetched the updates,
	// later orders see them (their timestamps are later).
	p := must[string](t)(libs[0].Create(ctx, kafkabpl.Producer, servers))
	send(t, libs[0], p, []string{"pt-customers"}, kafkabpl.Message{Key: "c1", Value: "moved"}, kafkabpl.Message{Key: "c2"})
	waitStream(t, libs[0], ids[0], func(st *Status) bool {
		tb, other := st.Tables[0], table(1)
		return tb.Updates+tb.Pending+other.Updates+other.Pending == 12
	})
	sendValues(t, libs[0], servers, "pt-orders", orders("c1", "c2")...)
	want = append(want, "o-c1@moved")
	if got := values(readAll(t, libs[0], servers, 11, "pt-joined")); sorted(got) != sorted(strings.Join(want, " ")) {
		t.Errorf("joined %q, want %q", sorted(got), sorted(strings.Join(want, " ")))
	}
	var dropped int64
	for i, lib := range libs {
		st := waitStream(t, lib, ids[i], func(st *Status) bool { return st.Lag == 0 && st.State == Running })
		dropped += st.Dropped
	}
	if dropped != 2 {
		t.Errorf("dropped %d orders, want 2 (nobody, c2 deleted)", dropped)
	}
}

// sorted returns the words of s in order.
func sorted(s string) string {
	ws := strings.Fields(s)
	slices.Sort(ws)
	return strings.Join(ws, " ")
}

// TestPartitionedTableRace checks the timestamp order of a partitioned
// table's updates and the stream's inputs, as Table.Partitioned
// documents it: an update a millisecond before an input is seen by it,
// one a millisecond after is not (seen by the next input that reaches
// it), whether both were written before the stream started (restored,
// then fetched) or while it runs (the update fetched first, then the
// input).
func TestPartitionedTableRace(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("race-orders")).Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	base := time.UnixMilli(1_700_000_000_000)
	at := func(ms int64) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	// The table's update at 10 ms and 21 ms, inputs at 11 ms (after the
	// first update) and 20 ms (before the second), then 22 ms.
	tableTopic(t, lib, servers, "race-prices", 1,
		kafkabpl.Message{Key: "k", Value: "v0", Timestamp: at(0)},
		kafkabpl.Message{Key: "k", Value: "v1", Timestamp: at(10)},
		kafkabpl.Message{Key: "k", Value: "v2", Timestamp: at(21)})
	p := must[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	send(t, lib, p, []string{"race-orders"},
		kafkabpl.Message{Key: "k", Value: "11", Timestamp: at(11)},
		kafkabpl.Message{Key: "k", Value: "20", Timestamp: at(20)},
		kafkabpl.Message{Key: "k", Value: "22", Timestamp: at(22)})
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "race"}, Spec{
		From: []string{"race-orders"}, To: "race-joined",
		// A long hold: an update later than the inputs waits for one.
		Tables: []Table{{Topic: "race-prices", Partitioned: true, Hold: time.Hour}},
		Join:   &Join{Table: "race-prices", Kind: LeftJoin},
		Transform: func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) {
			v, _ := in.Joined()
			return []Output{{Message: kafkabpl.Message{Key: in.Key(), Value: fmt.Sprintf("%v@%v", in.Value(), v)}}}, nil
		},
	}))
	want := "11@v1 20@v1 22@v2"
	if got := values(readAll(t, lib, servers, 3, "race-joined")); got != want {
		t.Errorf("restored race: joined %q, want %q", got, want)
	}
	// Live: an update at 31 ms, fetched (pending: the inputs are at 22 ms)
	// before an input at 30 ms, which does not see it; one at 32 ms does.
	send(t, lib, p, []string{"race-prices"}, kafkabpl.Message{Key: "k", Value: "v3", Timestamp: at(31)})
	waitStream(t, lib, id, func(st *Status) bool { return st.Tables[0].Pending == 1 })
	send(t, lib, p, []string{"race-orders"}, kafkabpl.Message{Key: "k", Value: "30", Timestamp: at(30)})
	send(t, lib, p, []string{"race-orders"}, kafkabpl.Message{Key: "k", Value: "32", Timestamp: at(32)})
	// And an update at 40 ms, fetched before an input at 41 ms: seen.
	waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 5 })
	send(t, lib, p, []string{"race-prices"}, kafkabpl.Message{Key: "k", Value: "v4", Timestamp: at(40)})
	waitStream(t, lib, id, func(st *Status) bool { return st.Tables[0].Pending == 1 })
	send(t, lib, p, []string{"race-orders"}, kafkabpl.Message{Key: "k", Value: "41", Timestamp: at(41)})
	want += " 30@v2 32@v3 41@v4"
	if got := values(readAll(t, lib, servers, 6, "race-joined")); got != want {
		t.Errorf("joined %q, want %q", got, want)
	}
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 6 })
	if tb := st.Tables[0]; tb.Keys != 1 || tb.Pending != 0 || tb.Updates != 5 {
		t.Errorf("table status %+v, want 1 key, 5 updates applied, none pending", tb)
	}
}

// TestPartitionedTableErrors checks a partitioned table's bad forms: a
// topic not co-partitioned with the input (the stream fails, naming the
// table, the argument and both counts), a topic not compacted (a warning
// in the log, the stream runs), a partitioned table with a re-keying
// stream, a negative hold.
func TestPartitionedTableErrors(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("pe-in"), embedded.Partitions(2)).Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	tableTopic(t, lib, servers, "pe-three", 3)
	pass := func(ctx context.Context, in *kafkabpl.Record) ([]Output, error) { return nil, nil }
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "pe"}, Spec{
		From: []string{"pe-in"}, To: "out", Transform: pass, Tables: []Table{{Name: "t3", Topic: "pe-three", Partitioned: true}}}))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.State == Failed })
	if !errors.Is(st.LastError, kafkabpl.ErrInvalidConfig) || !strings.Contains(st.LastError.Error(),
		`table "t3" (topic "pe-three"): "partitioned": not co-partitioned with the inputs: the table's topic "pe-three" has 3 partitions and the input "pe-in" has 2`) {
		t.Errorf("failed with %v", st.LastError)
	}
	// A topic that is not compacted: a warning, and the table works.
	must[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{"pe-plain"}, kafkabpl.TopicOptions{Partitions: 2}))
	warned := newLib(t)
	var log syncBuffer
	warned.SetLogOutput(&log)
	id = must[string](t)(Of(warned).Start(ctx, map[string]any{"servers": servers, "group": "pe-plain"}, Spec{
		From: []string{"pe-in"}, To: "out", Transform: pass, Tables: []Table{{Topic: "pe-plain", Partitioned: true}}}))
	waitStream(t, warned, id, func(st *Status) bool { return st.Tables[0].Ready && st.Tables[0].Partitions == 2 })
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(log.String(), `warning: table "pe-plain": its topic "pe-plain" is not compacted`) {
		if time.Now().After(deadline) {
			t.Fatalf("no warning in the log:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	rekey := func(ctx context.Context, in *kafkabpl.Record) (any, error) { return in.Key(), nil }
	for _, tt := range []struct {
		spec Spec
		want string
	}{
		{Spec{From: []string{"pe-in"}, To: "out", Update: countUpdate, Store: "s", Rekey: rekey, Tables: []Table{{Topic: "pe-three", Partitioned: true}}}, `"tables": "pe-three" is partitioned, and the stream re-keys its inputs`},
		{Spec{From: []string{"pe-in"}, To: "out", Transform: pass, Tables: []Table{{Topic: "pe-three", Partitioned: true, Hold: -time.Second}}}, `"tables": "pe-three": hold -1s is negative`},
	} {
		if _, err := Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "pe2"}, tt.spec); !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v, want kafkabpl.ErrInvalidArgument with %q", err, tt.want)
		}
	}
}

// TestPartitionedTableStateful joins a stateful stream's inputs with a
// partitioned table, under each guarantee: a partition's input is fetched
// only once both its store and its table partition are restored, and
// each key's count comes with its row.
func TestPartitionedTableStateful(t *testing.T) {
	t.Parallel()
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce} {
		t.Run(g.String(), func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("ps-in"), embedded.Partitions(2)).Servers()
			lib := streamLib(t)
			ctx := testCtx(t)
			tableTopic(t, lib, servers, "ps-rows", 2, pairs("k0", "r0", "k1", "r1", "k2", "r2", "k3", "r3")...)
			update := func(ctx context.Context, in *kafkabpl.Record, state any) ([]Output, any, error) {
				n, _ := state.(int64)
				n++
				row, _ := in.Joined()
				return []Output{{Message: kafkabpl.Message{Key: in.Key(), Value: fmt.Sprintf("%v=%d@%v", in.Key(), n, row)}}}, n, nil
			}
			id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "ps"}, Spec{
				From: []string{"ps-in"}, To: "ps-out", Update: update, Store: "counts", Guarantee: g,
				Tables: []Table{{Name: "rows", Topic: "ps-rows", Partitioned: true}},
				Join:   &Join{Table: "rows"},
			}))
			sendValues(t, lib, servers, "ps-in", keyed("k0", "k1", "k2", "k3", "kx", "k0", "k3")...)
			want := "k0=1@r0 k0=2@r0 k1=1@r1 k2=1@r2 k3=1@r3 k3=2@r3"
			if got := sorted(values(readAll(t, lib, servers, 6, "ps-out"))); got != want {
				t.Errorf("outputs %q, want %q", got, want)
			}
			st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 7 })
			if st.Dropped != 1 || st.Store.Keys != 4 || st.Store.Partitions != 2 || st.Tables[0].Partitions != 2 || st.Tables[0].Keys != 4 {
				t.Errorf("status %+v, store %+v, table %+v", st, st.Store, st.Tables[0])
			}
		})
	}
}

// TestPartitionedTableOnDisk joins a count with a partitioned table whose
// rows are kept under the stream's "state-dir": a stream started again
// reads only the table's records after the position on disk (an update
// and a deletion), and its inputs see them. When a second member takes a
// partition, the first deletes its rows once "state-cleanup-delay"
// passed.
func TestPartitionedTableOnDisk(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("po-in"), embedded.Partitions(2)).Servers()
	dir := t.TempDir()
	tableTopic(t, streamLib(t), servers, "po-rows", 2, pairs("k0", "r0", "k1", "r1", "k2", "r2", "k3", "r3")...)
	update := func(ctx context.Context, in *kafkabpl.Record, state any) ([]Output, any, error) {
		n, _ := state.(int64)
		n++
		row, _ := in.Joined()
		return []Output{{Message: kafkabpl.Message{Key: in.Key(), Value: fmt.Sprintf("%v=%d@%v", in.Key(), n, row)}}}, n, nil
	}
	start := func(dir string) (*kafkabpl.Library, string, *syncBuffer) {
		lib, log := newLib(t), &syncBuffer{}
		lib.SetLogOutput(log)
		id := must[string](t)(Of(lib).Start(testCtx(t), map[string]any{"servers": servers, "group": "po", "state-dir": dir, "state-cleanup-delay": 100}, Spec{
			From: []string{"po-in"}, To: "po-out", Update: update, Store: "counts",
			Tables: []Table{{Name: "rows", Topic: "po-rows", Partitioned: true}},
			Join:   &Join{Table: "rows"},
		}))
		return lib, id, log
	}
	lib, id, _ := start(dir)
	sendValues(t, lib, servers, "po-in", keyed("k0", "k1", "k2", "k3")...)
	if got, want := sorted(values(readAll(t, lib, servers, 4, "po-out"))), "k0=1@r0 k1=1@r1 k2=1@r2 k3=1@r3"; got != want {
		t.Fatalf("outputs %q, want %q", got, want)
	}
	waitStream(t, lib, id, func(st *Status) bool { return st.Tables[0].Keys == 4 && st.Tables[0].Pending == 0 })
	if _, err := os.Stat(filepath.Join(dir, "po", "%tables", "rows")); err != nil {
		t.Errorf("the table's directory: %v", err)
	}
	lib.Destroy(testCtx(t), id)

	p := must[string](t)(lib.Create(testCtx(t), kafkabpl.Producer, servers))
	send(t, lib, p, []string{"po-rows"}, kafkabpl.Message{Key: "k1", Value: "r1b"}, kafkabpl.Message{Key: "k2", Value: nil})
	lib, id, log := start(dir)
	// The table's and the store's partitions restore on their own, each
	// logging a line as it ends; wait for all four.
	st := waitStream(t, lib, id, func(st *Status) bool {
		return st.Tables[0].Ready && strings.Count(log.String(), " restored: ") == 4
	})
	if got := strings.Count(log.String(), `table "rows" partition`); got != 2 || strings.Count(log.String(), "from the state on disk's position") != 4 || st.Tables[0].Total != 2 {
		t.Errorf("started again: the table read %d offsets, want the 2 sent since; log:\n%s", st.Tables[0].Total, log.String())
	}
	sendValues(t, lib, servers, "po-in", keyed("k1", "k2", "k3")...)
	if got, want := sorted(values(readAll(t, lib, servers, 6, "po-out"))), "k0=1@r0 k1=1@r1 k1=2@r1b k2=1@r2 k3=1@r3 k3=2@r3"; got != want {
		t.Errorf("outputs %q, want %q", got, want)
	}
	st = waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 3 })
	if st.Dropped != 1 || st.Tables[0].Keys != 3 {
		t.Errorf("k2's row deleted: %d dropped, %d rows; want 1, 3", st.Dropped, st.Tables[0].Keys)
	}

	libB, idB, _ := start(t.TempDir())
	waitStream(t, libB, idB, func(st *Status) bool { return st.Tables[0].Partitions == 1 && st.Tables[0].Ready })
	rows := streamOf(t, lib, id).tables["rows"].pt.dir
	// The partition's rows deleted, and then the line that says so.
	waitStream(t, lib, id, func(st *Status) bool {
		return st.Tables[0].Partitions == 1 && len(must[[]int32](t)(rows.Partitions())) == 1 &&
			strings.Contains(log.String(), "neither held nor followed")
	})
}
