package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
)

// has tells whether l has an element named name.
func has(l *value.List, name string) bool {
	_, ok := l.Get(name)
	return ok
}

// countedKeys is n inputs for each of keys k0 .. k<keys-1>, values "v".
func countedKeys(keys, n int) []kafkabpl.Message {
	var ms []kafkabpl.Message
	for range n {
		for k := range keys {
			ms = append(ms, kafkabpl.Message{Key: fmt.Sprintf("k%03d", k), Value: "v"})
		}
	}
	return ms
}

// TestStandbyTakeover runs a counting stream with "standbys" 1 on two
// members: each keeps a standby copy of the other's partition, caught up
// with its changelog, which a query reads, marked with its lag. When one
// member goes, the other takes its partition over from its copy's
// position (its restore reads only the changelog's tail, not the whole),
// and the counts go on exactly. A third member's full restore of the
// whole changelog gives the very same state. The member goes cleanly
// (Destroy: it leaves the group), or crashes: its client stops without a
// word to the brokers, and the group's coordinator expels it once its
// session times out. Under the "consumer" group protocol, whose
// assignment members cannot read, each member follows every partition it
// does not hold: the other's, here. On disk, each member has a state
// directory of its own, and its copies are kept there.
func TestStandbyTakeover(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		crash    bool
		protocol string
		disk     bool
	}{
		{"destroy", false, "classic", false}, {"crash", true, "classic", false}, {"consumer protocol", false, "consumer", false},
		{"crash, on disk", true, "classic", true}, {"consumer protocol, on disk", false, "consumer", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			standbyTakeover(t, tt.crash, tt.protocol, tt.disk)
		})
	}
}

// crashStream stops stream id as a crash would: its goroutines end and
// its client stops, leaving no group and committing nothing.
func crashStream(t *testing.T, lib *kafkabpl.Library, id string) {
	hs := streamOf(t, lib, id)
	s := hs
	s.stopPoll()
	s.cancelWork()
	<-s.done
	s.followers.Wait()
	s.h.StopClient()()
}

func standbyTakeover(t *testing.T, crash bool, protocol string, disk bool) {
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(2)).Servers()
	ctx := testCtx(t)
	cfg := map[string]any{"servers": servers, "group": "sbg", "group-protocol": protocol}
	if protocol == "classic" {
		cfg["session-timeout"], cfg["heartbeat-interval"] = 6000, 500
	}
	spec := Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", Standbys: 1}
	const keys = 40
	libA, libB := streamLib(t), streamLib(t)
	if disk { // a directory each, as two processes have
		Of(libA).SetStateDir(t.TempDir())
		Of(libB).SetStateDir(t.TempDir())
	}
	sendValues(t, libA, servers, "in", countedKeys(keys, 3)...)
	a := must[string](t)(Of(libA).Start(ctx, cfg, spec))
	waitStream(t, libA, a, func(st *Status) bool { return st.Processed == 3*keys })
	b := must[string](t)(Of(libB).Start(ctx, cfg, spec))
	// One partition each, and a copy of the other's, caught up.
	caughtUp := func(st *Status) bool {
		ss := st.Store
		return ss.Partitions == 1 && ss.Restoring == 0 && len(ss.Standbys) == 1 && ss.Standbys[0].Lag == 0 &&
			ss.Standbys[0].Position > 0 && (len(ss.Placement) == 2) == (protocol == "classic")
	}
	stA := waitStream(t, libA, a, caughtUp)
	stB := waitStream(t, libB, b, caughtUp)
	if stA.Store.Standbys[0].Partition == stB.Store.Standbys[0].Partition {
		t.Fatalf("both keep a copy of partition %d", stA.Store.Standbys[0].Partition)
	}
	for _, pl := range stB.Store.Placement {
		if len(pl.Standbys) != 1 || pl.Standbys[0] == pl.Owner || !slices.Contains([]string{stA.Store.Member, stB.Store.Member}, pl.Owner) {
			t.Errorf("placement %+v; members %q and %q", pl, stA.Store.Member, stB.Store.Member)
		}
	}
	l := stB.List()
	if sl, _ := l.Get("store"); sl == nil || !has(sl.(*value.List), "standbys") || !has(sl.(*value.List), "placement") {
		t.Errorf("status list without standbys: %v", l)
	}
	moved := stB.Store.Standbys[0].Partition // A's partition

	// More inputs; B's copy follows them.
	sendValues(t, libA, servers, "in", countedKeys(keys, 2)...)
	waitStream(t, libA, a, func(st *Status) bool {
		return st.Processed+must[*Status](t)(Of(libB).Status(ctx, b)).Processed == 5*keys
	})
	// Caught up with all A wrote: its position at the changelog's end.
	ends := must[[]kafkabpl.PartitionOffset](t)(libB.ListOffsets(ctx, servers, "sbg-s-changelog", kafkabpl.OffsetLatest()))
	stB = waitStream(t, libB, b, func(st *Status) bool {
		return len(st.Store.Standbys) == 1 && st.Store.Standbys[0].Position == ends[moved].Offset && st.Store.Standbys[0].Lag == 0
	})
	// Queries of the copy: found, marked as a standby's.
	entries := must[[]StoreEntry](t)(Of(libB).StoreStandbyRange(ctx, b, nil, nil))
	if len(entries) == 0 || int64(len(entries)) != stB.Store.Standbys[0].Keys {
		t.Fatalf("standby range: %d entries, copy holds %d keys", len(entries), stB.Store.Standbys[0].Keys)
	}
	for _, e := range entries {
		if !e.Standby || e.Partition != moved || e.Stale != (e.Lag > 0) {
			t.Errorf("standby entry %+v", e)
		}
	}
	e, found, err := Of(libB).StoreStandbyGet(ctx, b, entries[0].Key)
	if err != nil || !found || e.State == nil || !e.Standby {
		t.Errorf("standby get %v: %+v %v %v", entries[0].Key, e, found, err)
	}
	if _, found, err := Of(libB).StoreGet(ctx, b, entries[0].Key); found || !errors.Is(err, kafkabpl.ErrNotHeld) {
		t.Errorf("StoreGet %v, a key of a partition B does not hold (A has no query endpoint): %v, %v; want kafkabpl.ErrNotHeld", entries[0].Key, found, err)
	}
	restoredBefore := stB.Store.Restored

	// A goes: B takes its partition over from the copy.
	if crash {
		crashStream(t, libA, a)
	} else if _, err := libA.Destroy(ctx, a); err != nil {
		t.Fatal(err)
	}
	takeovers := stB.Store.Takeovers + 1 // under the consumer protocol, B's first partition was one too: it followed both before its assignment
	stB = waitStream(t, libB, b, func(st *Status) bool {
		return st.Store.Partitions == 2 && st.Store.Restoring == 0 && st.Store.Takeovers == takeovers
	})
	total := stB.Store.Keys
	if stB.Store.Restored != restoredBefore { // the copy was caught up: no tail
		t.Errorf("takeover restored %d records, want none: the copy was at the changelog's end", stB.Store.Restored-restoredBefore)
	}
	if len(stB.Store.Standbys) != 0 {
		t.Errorf("B still keeps copies: %+v", stB.Store.Standbys)
	}
	sendValues(t, libB, servers, "in", countedKeys(keys, 1)...)
	recs := readAll(t, libB, servers, 6*keys, "out")
	want := ""
	for k := range keys {
		want += fmt.Sprintf(" k%03d=6", k)
	}
	if got := lastPerKey(recs); got != want[1:] {
		t.Errorf("counts after the takeover:\n%s\nwant\n%s", got, want[1:])
	}
	byB := must[[]StoreEntry](t)(Of(libB).StoreRange(ctx, b, nil, nil))
	if int64(len(byB)) != total || len(byB) != keys {
		t.Errorf("B holds %d keys (status %d), want %d", len(byB), total, keys)
	}
	if _, err := libB.Destroy(ctx, b); err != nil {
		t.Fatal(err)
	}

	// A full restore gives the same state.
	libC := streamLib(t)
	c := must[string](t)(Of(libC).Start(ctx, cfg, Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s"}))
	stC := waitStream(t, libC, c, func(st *Status) bool { return st.Store.Partitions == 2 && st.Store.Restoring == 0 })
	if stC.Store.Takeovers != 0 || stC.Store.StandbysWanted != 0 {
		t.Errorf("a stream without standbys: %+v", stC.Store)
	}
	byC := must[[]StoreEntry](t)(Of(libC).StoreRange(ctx, c, nil, nil))
	if fmt.Sprint(byC) != fmt.Sprint(byB) {
		t.Errorf("full restore:\n%v\nstandby takeover:\n%v", byC, byB)
	}
	libC.Destroy(ctx, c)
}

// TestStandbySpec refuses bad "standbys".
func TestStandbySpec(t *testing.T) {
	for _, spec := range []Spec{
		{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", Standbys: -1},
		{From: []string{"in"}, To: "out", Transform: func(context.Context, *kafkabpl.Record) ([]Output, error) { return nil, nil }, Standbys: 1},
	} {
		err := spec.check()
		if err == nil || !errors.Is(err, kafkabpl.ErrInvalidArgument) {
			t.Errorf("standbys %d: %v", spec.Standbys, err)
		}
	}
	e := standbyEntry("k", int64(1), StandbyStatus{Partition: 2, Lag: 3})
	if !e.Standby || !e.Stale || e.Lag != 3 || e.Partition != 2 {
		t.Errorf("entry %+v", e)
	}
}

// TestStandbyTimers sets a stream-time timer on a key of each partition
// of a stream with "standbys" 1 on two members; one member goes before
// its timer is due, and the other, taking its partition over from its
// standby copy, fires it once the partition's time reaches it, as after
// a full restore: each timer fires once.
func TestStandbyTimers(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(2)).Servers()
	ctx := testCtx(t)
	lib := streamLib(t)
	cfg := map[string]any{"servers": servers, "group": "sbt"}
	spec := alarmSpec(0)
	spec.Standbys = 1
	zero, one := int32(0), int32(1)
	t0 := time.Now().Add(-time.Hour).UnixMilli()
	timed := func(key string, p *int32, ms int64, v string) kafkabpl.Message {
		m := at(key, ms, v)
		m.Partition = p
		return m
	}
	a := must[string](t)(Of(lib).Start(ctx, cfg, spec))
	waitStream(t, lib, a, func(st *Status) bool { return st.Store.Partitions == 2 && st.Store.Restoring == 0 })
	b := must[string](t)(Of(lib).Start(ctx, cfg, spec))
	sendValues(t, lib, servers, "in", timed("a", &zero, t0, "stream"), timed("b", &one, t0, "stream"))
	caughtUp := func(st *Status) bool {
		ss := st.Store
		return ss.Partitions == 1 && ss.Restoring == 0 && len(ss.Standbys) == 1 && ss.Standbys[0].Lag == 0 && ss.Standbys[0].Keys == 1
	}
	waitStream(t, lib, a, caughtUp)
	waitStream(t, lib, b, caughtUp)
	if _, err := lib.Destroy(ctx, a); err != nil {
		t.Fatal(err)
	}
	st := waitStream(t, lib, b, func(st *Status) bool {
		return st.Store.Partitions == 2 && st.Store.Restoring == 0 && st.Store.Takeovers == 1
	})
	if st.Store.Timers != 2 {
		t.Errorf("timers held after the takeover: %d, want 2", st.Store.Timers)
	}
	sendValues(t, lib, servers, "in", timed("x", &zero, t0+1000, "v"), timed("y", &one, t0+1000, "v"))
	got := strings.Split(values(readAll(t, lib, servers, 2, "out")), " ")
	slices.Sort(got)
	if strings.Join(got, " ") != "1 1 a b stream-time stream-time" {
		t.Errorf("timer outputs %q, want a's and b's once each", got)
	}
	waitStream(t, lib, b, func(st *Status) bool { return st.Store.Fired == 2 && st.Store.Timers == 0 })
	lib.Destroy(ctx, b)
}
