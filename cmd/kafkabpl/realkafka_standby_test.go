//go:build unix

package main

// TestRealKafkaStandby runs a counting stream with "standbys" 1 on two
// members (two libraries) against a real Apache Kafka broker of its own
// (startKafka's): each member keeps a copy of the other's partition,
// which catches up with its changelog; when one member is destroyed, the
// other takes its partition over from the copy (one takeover, the
// restore reading only the changelog's tail), and the counts, read from
// the survivor's store, are exact. Then the member comes back and takes
// a partition back: in memory with a full restore, with its state on
// disk (each member a directory of its own) with the tail it missed. It
// runs in memory, then on disk, on the one broker. Without java or the
// jars it skips, saying how to get them; with CI set it fails.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRealKafkaStandby(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	k := startKafka(t, java)
	for _, disk := range []bool{false, true} {
		t.Run(map[bool]string{false: "in memory", true: "on disk"}[disk], func(t *testing.T) { realStandby(t, k.servers, disk) })
	}
}

func realStandby(t *testing.T, servers string, disk bool) {
	ctx := realCtx(t)
	suffix := map[bool]string{false: "", true: "-disk"}[disk]
	topic, group, out := "standby-in"+suffix, "standby-real"+suffix, "standby-out"+suffix
	changelog := group + "-counts-changelog"
	const keys = 30
	admin := kafkabpl.New()
	defer admin.Close(context.Background())
	if _, err := admin.CreateTopics(ctx, servers, []string{topic}, kafkabpl.TopicOptions{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(servers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	send := func(rounds int) {
		var recs []*kgo.Record
		for range rounds {
			for i := range keys {
				recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%02d", i), Value: []byte("v")})
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	count := func(_ context.Context, in *kafkabpl.Record, state any) ([]stream.Output, any, error) {
		n, _ := state.(int64)
		return []stream.Output{{Message: kafkabpl.Message{Key: in.Key(), Value: n + 1}}}, n + 1, nil
	}
	cfg := map[string]any{"servers": servers, "group": group, "value-serializer": "JSON"}
	spec := stream.Spec{From: []string{topic}, To: out, Update: count, Store: "counts", Standbys: 1}
	dirA := t.TempDir()
	member := func(dir string) *kafkabpl.Library {
		lib := kafkabpl.New()
		lib.SetLogOutput(logWriter{t})
		t.Cleanup(func() { lib.Close(context.Background()) })
		if disk {
			stream.Of(lib).SetStateDir(dir)
		}
		return lib
	}
	libA, libB := member(dirA), member(t.TempDir())
	send(2)
	a, err := stream.Of(libA).Start(ctx, cfg, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitStreamStatus(t, libA, a, func(st *stream.Status) bool { return st.Processed == 2*keys })
	b, err := stream.Of(libB).Start(ctx, cfg, spec)
	if err != nil {
		t.Fatal(err)
	}
	caughtUp := func(st *stream.Status) bool {
		ss := st.Store
		return ss.Partitions == 1 && ss.Restoring == 0 && len(ss.Standbys) == 1 && ss.Standbys[0].Lag == 0 &&
			ss.Standbys[0].Keys > 0 && len(ss.Placement) == 2
	}
	waitStreamStatus(t, libA, a, caughtUp)
	waitStreamStatus(t, libB, b, caughtUp)
	send(1)
	stB := waitStreamStatus(t, libB, b, func(st *stream.Status) bool {
		sa, err := stream.Of(libA).Status(ctx, a)
		return err == nil && sa.Processed+st.Processed == 3*keys && caughtUp(st)
	})
	// Lag 0 is measured against the end the copy's last fetch saw, which
	// may predate A's last transaction: wait for the copy to reach the
	// changelog's end as the broker lists it, so that the takeover's tail
	// holds no records (a run on a loaded machine took the last batch's
	// 15 over from the changelog instead).
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, changelog)
	if err != nil {
		t.Fatal(err)
	}
	copied := stB.Store.Standbys[0].Partition
	end, _ := ends.Lookup(changelog, copied)
	stB = waitStreamStatus(t, libB, b, func(st *stream.Status) bool {
		return len(st.Store.Standbys) == 1 && st.Store.Standbys[0].Partition == copied && st.Store.Standbys[0].Position >= end.Offset
	})
	entries, err := stream.Of(libB).StoreStandbyRange(ctx, b, nil, nil)
	if err != nil || len(entries) == 0 || int64(len(entries)) != stB.Store.Standbys[0].Keys {
		t.Fatalf("standby range: %d entries (%v), the copy holds %d keys", len(entries), err, stB.Store.Standbys[0].Keys)
	}
	restored := stB.Store.Restored
	if _, err := libA.Destroy(ctx, a); err != nil {
		t.Fatal(err)
	}
	stB = waitStreamStatus(t, libB, b, func(st *stream.Status) bool {
		return st.Store.Partitions == 2 && st.Store.Restoring == 0 && st.Store.Takeovers == 1
	})
	if tail := stB.Store.Restored - restored; tail >= int64(len(entries)) {
		t.Errorf("the takeover restored %d records, more than its copy's %d keys: not the tail only", tail, len(entries))
	}
	send(1)
	waitStreamStatus(t, libB, b, func(st *stream.Status) bool { return st.Lag == 0 && st.Store.Keys == keys })
	checkStoreCounts(t, 4, keys, stream.Of(libB).StoreRange, b)

	// A comes back (a process started again: its directory, if any) and
	// takes a partition back from B.
	libA = member(dirA)
	if a, err = stream.Of(libA).Start(ctx, cfg, spec); err != nil {
		t.Fatal(err)
	}
	settled := func(st *stream.Status) bool { return st.Store.Partitions == 1 && st.Store.Restoring == 0 }
	stA := waitStreamStatus(t, libA, a, settled)
	waitStreamStatus(t, libB, b, settled)
	for _, r := range stA.Store.Restores {
		// A's copy of B's partition, or its own: either way on disk.
		if r.Tail != disk {
			t.Errorf("A came back and restored partition %d with %+v; want a tail %v", r.Partition, r, disk)
		}
	}
	send(1)
	waitStreamStatus(t, libA, a, func(st *stream.Status) bool { return st.Lag == 0 })
	waitStreamStatus(t, libB, b, func(st *stream.Status) bool { return st.Lag == 0 })
	both := func(ctx context.Context, _ string, from, to any) ([]stream.StoreEntry, error) {
		ea, err := stream.Of(libA).StoreRange(ctx, a, from, to)
		if err != nil {
			return nil, err
		}
		eb, err := stream.Of(libB).StoreRange(ctx, b, from, to)
		return append(ea, eb...), err
	}
	checkStoreCounts(t, 5, keys, both, "")
}

// checkStoreCounts checks that the store range gives every one of keys keys
// the count want.
func checkStoreCounts(t *testing.T, want int64, keys int, storeRange func(context.Context, string, any, any) ([]stream.StoreEntry, error), id string) {
	t.Helper()
	got, err := storeRange(realCtx(t), id, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var counts []string
	for _, e := range got {
		if e.State != want {
			counts = append(counts, fmt.Sprintf("%v=%v", e.Key, e.State))
		}
	}
	if len(got) != keys || len(counts) > 0 {
		t.Errorf("%d keys; counts other than %d: %s", len(got), want, strings.Join(counts, " "))
	}
}
