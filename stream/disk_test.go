package stream

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// diskRun is one run of a stream in a library of its own, as a process
// started again is.
type diskRun struct {
	lib *kafkabpl.Library
	id  string
	log *syncBuffer
	st  *StoreStatus // once its partitions were restored
}

// startDiskRun starts a per-key count of "in" under config and waits
// until its three partitions are restored.
func startDiskRun(t *testing.T, config map[string]any) *diskRun {
	t.Helper()
	r := &diskRun{lib: newLib(t), log: &syncBuffer{}}
	r.lib.SetLogOutput(r.log)
	r.id = must[string](t)(Of(r.lib).Start(testCtx(t), config, Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "counts"}))
	r.st = waitStream(t, r.lib, r.id, func(st *Status) bool {
		return st.Store.Partitions == 3 && st.Store.Restoring == 0 && len(st.Store.Restores) == 3
	}).Store
	return r
}

// stop destroys the stream, cleanly.
func (r *diskRun) stop(t *testing.T) {
	t.Helper()
	if ok, err := r.lib.Destroy(testCtx(t), r.id); !ok || err != nil {
		t.Fatalf("destroy: %v %v", ok, err)
	}
}

// restored sums the run's restores: the records they applied, and how
// many read only the changelog's tail.
func (r *diskRun) restored() (records int64, tails int) {
	for _, rs := range r.st.Restores {
		records += rs.Records
		if rs.Tail {
			tails++
		}
	}
	return records, tails
}

// TestStreamStateOnDisk runs a per-key count with "state-dir" through
// the starts a process meets: a clean stop and a start again read no
// changelog record; a run without the directory moves the state on, and
// the next run with it reads only what it missed; a deleted directory is
// rebuilt from the changelog's start; a directory ahead of its changelog
// (the topic deleted and made again) is emptied, saying why. Every count
// comes out exact throughout.
func TestStreamStateOnDisk(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(3)).Servers()
	dir := t.TempDir()
	onDisk := map[string]any{"servers": servers, "group": "counter", "state-dir": dir}
	inMemory := maps.Clone(onDisk)
	delete(inMemory, "state-dir")
	counted := 0
	send := func(r *diskRun, keys ...string) {
		t.Helper()
		sendValues(t, r.lib, servers, "in", keyed(keys...)...)
		counted += len(keys)
	}
	wantCounts := func(r *diskRun, want string) {
		t.Helper()
		waitStream(t, r.lib, r.id, func(st *Status) bool { return st.Processed > 0 })
		if got := lastPerKey(readAll(t, r.lib, servers, counted, "out")); got != want {
			t.Fatalf("counts %s, want %s", got, want)
		}
	}

	first := startDiskRun(t, onDisk)
	if first.st.Disk == "" || !strings.HasPrefix(first.st.Disk, dir) {
		t.Fatalf("the store is kept in %q, want under %s", first.st.Disk, dir)
	}
	if dps := first.st.DiskPartitions; len(dps) != 3 || dps[0].Partition != 0 || dps[2].Partition != 2 {
		t.Errorf("partitions on disk %+v, want 0, 1 and 2 (each restored, at its position)", dps)
	}
	send(first, "a", "b", "a", "c", "a", "b")
	wantCounts(first, "a=3 b=2 c=1")
	first.stop(t)

	again := startDiskRun(t, onDisk)
	if n, tails := again.restored(); n != 0 || tails != 3 || again.st.Keys != 3 {
		t.Errorf("started again after a clean stop: %d changelog records applied, %d of 3 restores from the disk's position, %d keys; want 0, 3, 3", n, tails, again.st.Keys)
	}
	send(again, "a", "c", "d")
	wantCounts(again, "a=4 b=2 c=2 d=1")
	again.stop(t)

	memory := startDiskRun(t, inMemory) // moves the state on, not the disk
	send(memory, "b", "b")
	wantCounts(memory, "a=4 b=4 c=2 d=1")
	memory.stop(t)

	behind := startDiskRun(t, onDisk)
	// b's two counts wrote one changelog record or two (one a batch).
	if n, tails := behind.restored(); n < 1 || n > 2 || tails != 3 {
		t.Errorf("started with a directory behind by b's two counts: %d changelog records applied, %d of 3 restores from the disk's position; want 1 or 2, 3", n, tails)
	}
	send(behind, "b")
	wantCounts(behind, "a=4 b=5 c=2 d=1")
	behind.stop(t)

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	deleted := startDiskRun(t, onDisk)
	if n, tails := deleted.restored(); n < 4 || tails != 0 || deleted.st.Keys != 4 {
		t.Errorf("started with the directory deleted: %d applied, %d restores from a position, %d keys; want every key's records, 0, 4", n, tails, deleted.st.Keys)
	}
	send(deleted, "d")
	wantCounts(deleted, "a=4 b=5 c=2 d=2")
	deleted.stop(t)

	// The changelog deleted and made again, empty: the directory is ahead
	// of it, and the state starts again from nothing, as the changelog says.
	cl := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(servers)))
	defer cl.Close()
	if _, err := kadm.NewClient(cl).DeleteTopic(testCtx(t), "counter-counts-changelog"); err != nil {
		t.Fatal(err)
	}
	ahead := startDiskRun(t, onDisk)
	if ahead.st.Keys != 0 || !strings.Contains(ahead.log.String(), "ahead of the changelog's end") {
		t.Errorf("started with the changelog made again: %d keys, log:\n%s\nwant none, and why", ahead.st.Keys, ahead.log.String())
	}
}

// TestStreamStateDirErrors checks what "state-dir" refuses: a directory
// another stream holds, naming the holder.
func TestStreamStateDirErrors(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(3)).Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	config := map[string]any{"servers": servers, "group": "g", "state-dir": dir}
	spec := Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s"}
	must[string](t)(Of(lib).Start(ctx, config, spec))
	_, err := Of(lib).Start(ctx, config, spec)
	if !errors.Is(err, kafkabpl.ErrInvalidConfig) || !strings.Contains(err.Error(), fmt.Sprintf("in use by process %d", os.Getpid())) {
		t.Errorf("a second stream of the same store and directory: %v, want InvalidConfig naming the holder", err)
	}
}

// TestStreamStateDirDefault checks the Runtime's default directory
// (SetStateDir, as kafkabpl run --state-dir sets it): a store goes there,
// with standbys or without, and a config's own "state-dir" wins.
func TestStreamStateDirDefault(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(3)).Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	dir, own := t.TempDir(), t.TempDir()
	Of(lib).SetStateDir(dir)
	start := func(config map[string]any, standbys int) *StoreStatus {
		config["servers"] = servers
		id := must[string](t)(Of(lib).Start(ctx, config,
			Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", Standbys: standbys}))
		return must[*Status](t)(Of(lib).Status(ctx, id)).Store
	}
	if ss := start(map[string]any{"group": "on-disk"}, 0); !strings.HasPrefix(ss.Disk, dir) {
		t.Errorf("a per-key store under the default directory: kept in %q, want under %s", ss.Disk, dir)
	}
	if ss := start(map[string]any{"group": "with-standby"}, 1); !strings.HasPrefix(ss.Disk, dir) {
		t.Errorf("a store with standbys under the default directory: kept in %q, want under %s", ss.Disk, dir)
	}
	if ss := start(map[string]any{"group": "own", "state-dir": own}, 0); !strings.HasPrefix(ss.Disk, own) {
		t.Errorf("a store whose config gives its own state-dir: kept in %q, want under %s", ss.Disk, own)
	}
}

// TestStreamDiskMoves runs a per-key count on disk in two members, each
// with a state directory of its own, as two processes are, while its
// partitions move back and forth: B joins and takes some of A's, B
// leaves and A takes them back, twice. A partition that comes back
// reads only the changelog it missed, from its state on disk: without
// standbys, the records B wrote while it held it; with a standby on
// disk, the copy's tail (A followed it meanwhile). Every count comes out
// exact.
func TestStreamDiskMoves(t *testing.T) {
	t.Parallel()
	for _, standbys := range []int{0, 1} {
		t.Run(fmt.Sprintf("standbys=%d", standbys), func(t *testing.T) {
			t.Parallel()
			diskMoves(t, standbys)
		})
	}
}

func diskMoves(t *testing.T, standbys int) {
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(3)).Servers()
	ctx := testCtx(t)
	spec := Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", Standbys: standbys}
	member := func(dir string) (*kafkabpl.Library, string) {
		lib := streamLib(t)
		cfg := map[string]any{"servers": servers, "group": "moves", "state-dir": dir, "session-timeout": 6000, "heartbeat-interval": 500}
		return lib, must[string](t)(Of(lib).Start(ctx, cfg, spec))
	}
	const keys = 30
	sent := 0
	gone := int64(0) // the inputs members that left processed
	feed := func(lib *kafkabpl.Library, times int) {
		sendValues(t, lib, servers, "in", countedKeys(keys, times)...)
		sent += keys * times
	}
	// settled waits until the members hold the three partitions between
	// them, each at least one, restored, and processed every input sent.
	settled := func(ids map[*kafkabpl.Library]string) map[*kafkabpl.Library]*Status {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			out := map[*kafkabpl.Library]*Status{}
			held, processed := 0, gone
			ok := true
			for lib, id := range ids {
				st := must[*Status](t)(Of(lib).Status(ctx, id))
				out[lib] = st
				held += st.Store.Partitions
				processed += st.Processed
				ok = ok && st.Store.Restoring == 0 && st.Store.Partitions > 0
			}
			if ok && held == 3 && processed >= int64(sent) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("never settled: %d partitions held, %d of %d inputs processed", held, processed, sent)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wantCounts := func(lib *kafkabpl.Library, times int) {
		t.Helper()
		want := ""
		for k := range keys {
			want += fmt.Sprintf(" k%03d=%d", k, times)
		}
		if got := lastPerKey(readAll(t, lib, servers, sent, "out")); got != want[1:] {
			t.Fatalf("counts\n%s\nwant\n%s", got, want[1:])
		}
	}
	restores := func(st *Status) map[int32]RestoreStatus {
		m := map[int32]RestoreStatus{}
		for _, r := range st.Store.Restores {
			m[r.Partition] = r
		}
		return m
	}

	dirA, dirB := t.TempDir(), t.TempDir()
	libA, a := member(dirA)
	feed(libA, 2)
	settled(map[*kafkabpl.Library]string{libA: a})
	wantCounts(libA, 2)
	times := 2
	for round := range 2 {
		libB, b := member(dirB)
		sts := settled(map[*kafkabpl.Library]string{libA: a, libB: b})
		tookB := restores(sts[libB])
		for p, r := range tookB {
			// B's directory holds what it held last round (and, with
			// a standby, every partition it followed).
			if round > 0 && standbys > 0 && !r.Tail {
				t.Errorf("round %d: B restored partition %d from the changelog's start, with its copy on disk: %+v", round, p, r)
			}
		}
		feed(libA, 1)
		times++
		settled(map[*kafkabpl.Library]string{libA: a, libB: b})
		wantCounts(libA, times)
		before := must[*Status](t)(Of(libA).Status(ctx, a)).Store
		gone += must[*Status](t)(Of(libB).Status(ctx, b)).Processed
		if _, err := libB.Destroy(ctx, b); err != nil {
			t.Fatal(err)
		}
		sts = settled(map[*kafkabpl.Library]string{libA: a})
		ends := must[[]kafkabpl.PartitionOffset](t)(libA.ListOffsets(ctx, servers, "moves-s-changelog", kafkabpl.OffsetLatest()))
		back := restores(sts[libA])
		for p := range tookB {
			r := back[p]
			if !r.Tail || r.Records >= ends[p].Offset {
				t.Errorf("round %d: partition %d came back to A with %+v; want a tail, fewer records than the changelog's %d", round, p, r, ends[p].Offset)
			}
		}
		if standbys > 0 && sts[libA].Store.Takeovers <= before.Takeovers {
			t.Errorf("round %d: A took %d partitions back, %d from a standby copy (before %d)", round, len(tookB), sts[libA].Store.Takeovers, before.Takeovers)
		}
		feed(libA, 1)
		times++
		settled(map[*kafkabpl.Library]string{libA: a})
		wantCounts(libA, times)
	}
}

// TestStreamDiskCleanup checks "state-cleanup-delay": a partition that
// moved to another member is deleted from A's directory once the delay
// passed, and comes back with a full restore; one A keeps a standby copy
// of stays, and comes back with a tail.
func TestStreamDiskCleanup(t *testing.T) {
	t.Parallel()
	for _, standbys := range []int{0, 1} {
		t.Run(fmt.Sprintf("standbys=%d", standbys), func(t *testing.T) {
			t.Parallel()
			diskCleanup(t, standbys)
		})
	}
}

func diskCleanup(t *testing.T, standbys int) {
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(3)).Servers()
	ctx := testCtx(t)
	const delay = 200 * time.Millisecond
	spec := Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", Standbys: standbys}
	member := func() (*kafkabpl.Library, string) {
		lib := streamLib(t)
		cfg := map[string]any{"servers": servers, "group": "clean", "state-dir": t.TempDir(), "state-cleanup-delay": delay.Milliseconds(),
			"session-timeout": 6000, "heartbeat-interval": 500}
		return lib, must[string](t)(Of(lib).Start(ctx, cfg, spec))
	}
	libA, a := member()
	sendValues(t, libA, servers, "in", countedKeys(20, 2)...)
	waitStream(t, libA, a, func(st *Status) bool { return st.Store.Partitions == 3 && st.Processed == 40 })
	onDisk := func() []int32 { return must[[]int32](t)(streamOf(t, libA, a).store.disk.Partitions()) }
	if got := onDisk(); len(got) != 3 {
		t.Fatalf("A's directory holds partitions %v, want 3", got)
	}

	libB, b := member()
	stB := waitStream(t, libB, b, func(st *Status) bool { return st.Store.Partitions > 0 && st.Store.Restoring == 0 })
	var moved []int32
	for _, r := range stB.Store.Restores {
		moved = append(moved, r.Partition)
	}
	left := time.Now()
	stA := waitStream(t, libA, a, func(st *Status) bool {
		kept := len(onDisk())
		if standbys == 0 {
			return kept == 3-len(moved) // the moved ones deleted
		}
		// Followed: kept, however long after the delay.
		return kept == 3 && time.Since(left) > 5*delay && len(st.Store.Standbys) == len(moved)
	})
	if standbys == 0 && stA.Store.Partitions != 3-len(moved) {
		t.Fatalf("A holds %d partitions, B took %v", stA.Store.Partitions, moved)
	}
	sendValues(t, libA, servers, "in", countedKeys(20, 1)...)
	processedB := waitStream(t, libB, b, func(st *Status) bool { return st.Processed > 0 }).Processed
	if _, err := libB.Destroy(ctx, b); err != nil {
		t.Fatal(err)
	}
	stA = waitStream(t, libA, a, func(st *Status) bool {
		return st.Store.Partitions == 3 && st.Store.Restoring == 0 && st.Processed+processedB >= 60
	})
	for _, r := range stA.Store.Restores {
		if slices.Contains(moved, r.Partition) && r.Tail != (standbys > 0) {
			t.Errorf("partition %d came back to A with %+v; want a tail %v", r.Partition, r, standbys > 0)
		}
	}
	want := ""
	for k := range 20 {
		want += fmt.Sprintf(" k%03d=3", k)
	}
	if got := lastPerKey(readAll(t, libA, servers, 60, "out")); got != want[1:] {
		t.Fatalf("counts\n%s\nwant\n%s", got, want[1:])
	}
}
