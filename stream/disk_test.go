package stream

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"

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

// TestStreamStateDirErrors checks what "state-dir" refuses: a store with
// standbys (kept in memory), and a directory another stream holds,
// naming the holder.
func TestStreamStateDirErrors(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(3)).Servers()
	lib := streamLib(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	config := map[string]any{"servers": servers, "group": "g", "state-dir": dir}
	for name, spec := range map[string]Spec{
		"with standby": {Update: countUpdate, Standbys: 1},
	} {
		spec.From, spec.To, spec.Store = []string{"in"}, "out", "s"
		_, err := Of(lib).Start(ctx, config, spec)
		if !errors.Is(err, kafkabpl.ErrInvalidConfig) || !strings.Contains(err.Error(), `"state-dir"`) {
			t.Errorf("%s: %v, want InvalidConfig naming state-dir", name, err)
		}
	}
	spec := Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s"}
	must[string](t)(Of(lib).Start(ctx, config, spec))
	_, err := Of(lib).Start(ctx, config, spec)
	if !errors.Is(err, kafkabpl.ErrInvalidConfig) || !strings.Contains(err.Error(), fmt.Sprintf("in use by process %d", os.Getpid())) {
		t.Errorf("a second stream of the same store and directory: %v, want InvalidConfig naming the holder", err)
	}
}

// TestStreamStateDirDefault checks the Runtime's default directory
// (SetStateDir, as kafkabpl run --state-dir sets it): a store it can keep
// on disk goes there; a store with standbys stays in memory, and the log
// says why, where an explicit "state-dir" is an error.
func TestStreamStateDirDefault(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in"), embedded.Partitions(3)).Servers()
	lib := newLib(t)
	log := &syncBuffer{}
	lib.SetLogOutput(log)
	ctx := testCtx(t)
	dir := t.TempDir()
	Of(lib).SetStateDir(dir)
	start := func(group string, standbys int) *StoreStatus {
		id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": group},
			Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", Standbys: standbys}))
		return must[*Status](t)(Of(lib).Status(ctx, id)).Store
	}
	if ss := start("on-disk", 0); !strings.HasPrefix(ss.Disk, dir) {
		t.Errorf("a per-key store under the default directory: kept in %q, want under %s", ss.Disk, dir)
	}
	if ss := start("with-standby", 1); ss.Disk != "" || !strings.Contains(log.String(), `store "s" has standbys, whose copies are kept in memory`) {
		t.Errorf("a store with standbys: kept in %q, log:\n%s\nwant memory, and why", ss.Disk, log.String())
	}
}
