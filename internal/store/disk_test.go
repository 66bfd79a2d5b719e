package store

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// logTo returns a log function that keeps its lines for the test.
func logTo(lines *[]string) func(string) {
	return func(s string) { *lines = append(*lines, s) }
}

var testID = Identity{Group: "g", Store: "counts", Changelog: "g-counts-changelog"}

// openDisk opens a disk store in dir, closed at the end of the test.
func openDisk(t *testing.T, dir string, id Identity, log func(string)) *Disk {
	t.Helper()
	d, err := OpenDisk(dir, id, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// diskModel is a storeModel on disk, with the position it reached.
func diskModel(t *testing.T, d *Disk) *storeModel { return diskModelOf(t, d, nil, false) }

// diskModelOf is diskModel of a windowed store.
func diskModelOf(t *testing.T, d *Disk, win *WindowSpec, onUpdate bool) *storeModel {
	st := New(Config{Disk: d, Windows: win})
	p := st.NewPart(0)
	if _, _, err := st.Open(p); err != nil {
		t.Fatal(err)
	}
	st.Adopt(p, time.Now())
	return &storeModel{st: st, p: p, onUpdate: onUpdate}
}

// committed prints p's committed state as its reads see it, and its
// counts.
func committed(t *testing.T, p *Part) string {
	t.Helper()
	var lines []string
	err := p.Range(nil, nil, func(key, value []byte) bool {
		lines = append(lines, fmt.Sprintf("%s=%x", key, value))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Counts()
	return fmt.Sprintf("keys %d bytes %d\n%s", c.Keys, c.Bytes, strings.Join(lines, "\n"))
}

// committedWindows is committed of a windowed store's part, with its
// stream time.
func committedWindows(t *testing.T, p *Part) string {
	t.Helper()
	var lines []string
	err := p.Windows(nil, nil, math.MinInt64, math.MaxInt64, func(key []byte, start, end int64, value []byte) bool {
		lines = append(lines, fmt.Sprintf("%s[%d,%d]=%x", key, start, end, value))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Counts()
	return fmt.Sprintf("time %d; keys %d windows %d bytes %d\n%s", p.time, c.Keys, c.Windows, c.Bytes, strings.Join(lines, "\n"))
}

// TestDiskBatches runs the per-key store's model on disk: random batches,
// some aborted, against a store in memory that sees only the committed
// ones. After each batch the disk's committed state equals the memory
// store's, an abort leaves the disk as it was, a second disk store fed
// the changelog by Apply holds the same, and a disk closed and opened
// again holds the same at the position of the last commit.
func TestDiskBatches(t *testing.T) {
	dir := t.TempDir()
	var logged []string
	d := openDisk(t, filepath.Join(dir, "live"), testID, logTo(&logged))
	live := diskModel(t, d)
	ref := newStoreModel(Config{}, false)
	restored := diskModel(t, openDisk(t, filepath.Join(dir, "restored"), testID, logTo(&logged)))
	rng := rand.New(rand.NewPCG(7, 11))
	var offset, pos int64
	commits, aborts, reopens := 0, 0, 0
	for range 300 {
		inputs := make([]input, rng.IntN(12))
		for i := range inputs {
			inputs[i] = input{key: string(rune('a' + rng.IntN(7))), offset: offset}
			offset++
		}
		commit := rng.IntN(3) > 0
		live.prefetch = rng.IntN(2) == 0
		before := committed(t, live.p)
		if commit {
			pos += int64(len(inputs)) + 1
			live.st.SetPosition(live.p, pos) // as a stream does, its changelog records acknowledged
		}
		log := live.batch(t, inputs, commit)
		if got := committed(t, live.p); !commit && got != before {
			t.Fatalf("after an abort the disk holds\n%s\nwant, as before it:\n%s", got, before)
		}
		if !commit {
			aborts++
			continue
		}
		commits++
		ref.batch(t, inputs, true)
		want := checkCommit(t, commits, committed, ref, live, restored, pos, log)
		if rng.IntN(10) == 0 { // the process stops, and starts again
			reopens++
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = openDisk(t, filepath.Join(dir, "live"), testID, logTo(&logged))
			live = diskModel(t, d)
			got, ok, err := live.st.Open(live.p)
			if err != nil || !ok || got != pos {
				t.Fatalf("opened again: position %d %v %v, want %d", got, ok, err, pos)
			}
			if got := committed(t, live.p); got != want {
				t.Fatalf("opened again, the disk holds\n%s\nwant:\n%s", got, want)
			}
		}
	}
	if commits < 100 || aborts < 50 || reopens < 5 || ref.p.keys == 0 {
		t.Errorf("the run tested too little: %d commits, %d aborts, %d reopens, %d keys at the end", commits, aborts, reopens, ref.p.keys)
	}
	if len(live.p.slots) != 0 {
		t.Errorf("between batches the part holds %d keys in memory, want none", len(live.p.slots))
	}
	if len(logged) > 0 {
		t.Errorf("logged %q, want nothing", logged)
	}
}

// checkCommit checks a commit of the disk models: live, on disk, holds
// what ref, in memory, holds, as show prints them; so does restored, on
// disk, once it applied the commit's changelog records log at pos. It
// returns what ref holds.
func checkCommit(t *testing.T, commit int, show func(*testing.T, *Part) string, ref, live, restored *storeModel, pos int64, log []logRecord) string {
	t.Helper()
	want := show(t, ref.p)
	if got := show(t, live.p); got != want {
		t.Fatalf("commit %d: the disk holds\n%s\nwant, as memory holds it:\n%s", commit, got, want)
	}
	restored.st.SetPosition(restored.p, pos)
	if _, err := restored.st.Apply(restored.p, records(log)); err != nil {
		t.Fatal(err)
	}
	if got := show(t, restored.p); got != want {
		t.Fatalf("commit %d: the changelog restores on disk\n%s\nwant:\n%s", commit, got, want)
	}
	return want
}

// TestDiskRebuilds checks what OpenDisk does with a directory it cannot
// use as it is: one of another store is emptied, one whose files are
// cut short is emptied, each with a log line saying why; one another
// open holds is refused, naming the holder.
func TestDiskRebuilds(t *testing.T) {
	dir := t.TempDir()
	fill := func(id Identity) {
		var logged []string
		d, err := OpenDisk(dir, id, logTo(&logged))
		if err != nil {
			t.Fatal(err)
		}
		m := diskModel(t, d)
		m.st.SetPosition(m.p, 42)
		m.batch(t, []input{{key: "k", offset: 1}}, true)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	reopen := func() (*storeModel, []string) {
		var logged []string
		d := openDisk(t, dir, testID, logTo(&logged))
		return diskModel(t, d), logged
	}

	fill(testID)
	m, logged := reopen()
	if pos, ok, _ := m.st.Open(m.p); !ok || pos != 42 || m.p.Counts().Keys != 1 || len(logged) != 0 {
		t.Fatalf("the same store opened again: position %d %v, %+v, logged %q; want 42, its key, nothing logged", pos, ok, m.p.Counts(), logged)
	}
	if _, err := OpenDisk(dir, testID, func(string) {}); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Errorf("a second open: %v, want ErrLocked naming this process", err)
	}
	m.st.disk.Close()

	other := testID
	other.Group = "another"
	fill(other)
	m, logged = reopen()
	if _, ok, _ := m.st.Open(m.p); ok || len(logged) != 1 || !strings.Contains(logged[0], `"group":"another"`) {
		t.Errorf("another group's directory: holds a position %v, logged %q; want it emptied, saying whose it was", ok, logged)
	}
	m.st.disk.Close()

	fill(testID)
	manifests, _ := filepath.Glob(filepath.Join(dir, "db", "MANIFEST-*"))
	if len(manifests) == 0 {
		t.Fatal("no manifest to cut short")
	}
	for _, f := range manifests {
		if err := os.Truncate(f, 10); err != nil {
			t.Fatal(err)
		}
	}
	m, logged = reopen()
	if _, ok, _ := m.st.Open(m.p); ok || len(logged) != 1 || !strings.Contains(logged[0], "cannot be read") {
		t.Errorf("a directory cut short: holds a position %v, logged %q; want it emptied, saying why", ok, logged)
	}
	if err := m.st.Reset(m.p); err != nil {
		t.Fatal(err)
	}
}

// TestDiskReadsAndReset checks a disk part's reads (Get, and Range with
// its bounds included) and Reset, which forgets the partition only.
func TestDiskReadsAndReset(t *testing.T) {
	d := openDisk(t, t.TempDir(), testID, func(string) {})
	st := New(Config{Disk: d})
	parts := []*Part{st.NewPart(0), st.NewPart(1)}
	for _, p := range parts {
		st.Adopt(p, time.Now())
		for _, k := range []string{"a", "b", "c", "d"} {
			if err := st.SetState(p, k, k+"!"); err != nil {
				t.Fatal(err)
			}
		}
		st.SetPosition(p, 10)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := st.Range(0, []byte("b"), []byte("c"), func(k, v []byte) bool {
		dv, _ := Decode(v)
		got = append(got, fmt.Sprintf("%s=%v", k, dv))
		return true
	}); err != nil || !slices.Equal(got, []string{"b=b!", "c=c!"}) {
		t.Errorf("range b to c: %q %v", got, err)
	}
	if raw, ok, err := st.Get(1, []byte("d")); !ok || err != nil {
		t.Errorf("get d: %x %v %v", raw, ok, err)
	}
	if err := st.Reset(parts[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.Get(0, []byte("a")); ok {
		t.Error("partition 0 reset, but a is still there")
	}
	if _, ok, _ := st.Get(1, []byte("a")); !ok {
		t.Error("partition 0 reset, and partition 1 lost a")
	}
	if pos, ok, err := st.Open(st.NewPart(0)); ok || err != nil {
		t.Errorf("partition 0 reset: position %d %v %v, want none", pos, ok, err)
	}
	enc, _ := Encode(nil, "a!")
	if c := parts[1].Counts(); c.Keys != 4 || c.Bytes != int64(4*(1+len(enc))) {
		t.Errorf("partition 1's counts %+v, want 4 keys of %d bytes", c, 1+len(enc))
	}
}

// TestDiskKilled checks that what Commit wrote survives the process's
// kill (SIGKILL, no chance to close) once the disk's syncer synced it: a
// child process, this test binary again, commits a batch, waits for the
// sync that follows it (never called by hand) and kills itself; the disk
// opened again holds the batch at its position.
func TestDiskKilled(t *testing.T) {
	if dir := os.Getenv("KAFKABPL_DISK_KILLED"); dir != "" {
		d, err := OpenDisk(dir, testID, func(string) {})
		if err != nil {
			panic(err)
		}
		m := diskModel(t, d)
		m.st.SetPosition(m.p, 7)
		if err := m.st.SetState(m.p, "k", int64(42)); err != nil {
			panic(err)
		}
		if err := m.st.Commit(); err != nil {
			panic(err)
		}
		for deadline := time.Now().Add(time.Minute); d.synced.Load() == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				panic("no sync followed the commit")
			}
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskKilled$")
	cmd.Env = append(os.Environ(), "KAFKABPL_DISK_KILLED="+dir)
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child: %v, want killed", err)
	}
	m := diskModel(t, openDisk(t, dir, testID, func(string) {}))
	pos, ok, err := m.st.Open(m.p)
	raw, has, _ := m.st.Get(0, []byte("k"))
	v, _ := Decode(raw)
	if !ok || err != nil || pos != 7 || !has || v != int64(42) {
		t.Errorf("after the kill: position %d %v %v, k %v %v; want 7, 42", pos, ok, err, v, has)
	}
}

// TestDiskWindowBatches runs the windowed store's model on disk: random
// batches of inputs of random times, some late, some batches aborted,
// against a store in memory that sees only the committed ones, for each
// kind of window. After each batch the disk's windows, stream time and
// counts equal memory's, and both wrote the same results; an abort
// leaves the disk as it was; a disk fed the changelog by Apply holds the
// same; a disk closed and opened again holds the same and goes on the
// same.
func TestDiskWindowBatches(t *testing.T) {
	ms := time.Millisecond
	for name, win := range map[string]*WindowSpec{
		"tumbling":  {Size: 10 * ms, Advance: 10 * ms, Grace: 3 * ms},
		"hopping":   {Size: 10 * ms, Advance: 4 * ms},
		"session":   {Session: true, Gap: 5 * ms, Grace: 2 * ms},
		"on update": {Size: 10 * ms, Advance: 10 * ms},
	} {
		t.Run(name, func(t *testing.T) {
			onUpdate := name == "on update"
			dir := t.TempDir()
			liveDir, restoredDir := filepath.Join(dir, "live"), filepath.Join(dir, "restored")
			open := func(dir string) *storeModel {
				return diskModelOf(t, openDisk(t, dir, testID, func(s string) { t.Error("logged: " + s) }), win, onUpdate)
			}
			live := open(liveDir)
			ref := newStoreModel(Config{Windows: win}, onUpdate)
			restored := open(restoredDir)
			rng := rand.New(rand.NewPCG(3, uint64(len(name))))
			var offset, ts, pos int64
			commits, aborts, reopens, takeovers := 0, 0, 0, 0
			for range 300 {
				inputs := make([]input, rng.IntN(12))
				for i := range inputs {
					ts += int64(rng.IntN(4)) - 1
					inputs[i] = input{key: string(rune('a' + rng.IntN(5))), offset: offset, t: ts}
					offset++
				}
				commit := rng.IntN(3) > 0
				before := committedWindows(t, live.p)
				if commit {
					pos++
					live.st.SetPosition(live.p, pos)
				}
				log := live.batch(t, inputs, commit)
				if !commit {
					aborts++
					if got := committedWindows(t, live.p); got != before {
						t.Fatalf("after an abort the disk holds\n%s\nwant, as before it:\n%s", got, before)
					}
					continue
				}
				commits++
				ref.batch(t, inputs, true)
				want := checkCommit(t, commits, committedWindows, ref, live, restored, pos, log)
				switch rng.IntN(10) {
				case 0:
					reopens++
					live.st.disk.Close()
					out := live.out
					live = open(liveDir)
					live.out = out
					if got := committedWindows(t, live.p); got != want {
						t.Fatalf("opened again, the disk holds\n%s\nwant:\n%s", got, want)
					}
				case 1:
					// A takeover: the disk the changelog restored goes
					// on with the inputs (what Apply wrote is read as
					// the batches' writes are), and the live one follows
					// the changelog from now on.
					takeovers++
					live.st.disk.Close()
					restored.st.disk.Close()
					liveDir, restoredDir = restoredDir, liveDir
					out := live.out
					live, restored = open(liveDir), open(restoredDir)
					live.out = out
				}
			}
			if !slices.Equal(live.out, ref.out) {
				t.Errorf("results differ:\n%v\n%v", live.out, ref.out)
			}
			if commits < 100 || aborts < 50 || reopens < 5 || takeovers < 5 || len(ref.out) < 50 || ref.p.keys == 0 {
				t.Errorf("the run tested too little: %d commits, %d aborts, %d reopens, %d takeovers, %d results, %d keys at the end", commits, aborts, reopens, takeovers, len(ref.out), ref.p.keys)
			}
		})
	}
}

// TestDiskReadAfterClose checks that a read that outlasts its store's
// close (a query in flight while its stream stops) fails with ErrNotHeld,
// not a panic of the closed database.
func TestDiskReadAfterClose(t *testing.T) {
	d := openDisk(t, t.TempDir(), testID, func(string) {})
	st := New(Config{Disk: d})
	p := st.NewPart(0)
	st.Adopt(p, time.Now())
	d.Close()
	if _, _, err := p.Get([]byte("k")); !errors.Is(err, ErrNotHeld) {
		t.Errorf("get after close: %v, want ErrNotHeld", err)
	}
	if err := p.Range(nil, nil, func(k, v []byte) bool { return true }); !errors.Is(err, ErrNotHeld) {
		t.Errorf("range after close: %v, want ErrNotHeld", err)
	}
	if n := d.Size(); n != 0 {
		t.Errorf("size after close: %d", n)
	}
}
