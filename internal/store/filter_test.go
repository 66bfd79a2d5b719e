package store

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestMain makes the disks' key filters small, so that the model tests
// on disk, with their handful of keys, grow them (a scan beside the
// batches) again and again.
func TestMain(m *testing.M) {
	filterMinKeys = 4
	os.Exit(m.Run())
}

// TestKeyFilter: every key added is held, and some 1 % of keys not added
// seem held, at the size the filter was made for.
func TestKeyFilter(t *testing.T) {
	const n = 200_000
	f := newKeyFilter(n)
	defer f.free()
	full := false
	for i := range n {
		full = f.add([]byte("k"+strconv.Itoa(i))) || full
	}
	for i := range n {
		if !f.mayHave([]byte("k" + strconv.Itoa(i))) {
			t.Fatalf("k%d added, not held", i)
		}
	}
	seem := 0
	for i := range n {
		if f.mayHave([]byte("x" + strconv.Itoa(i))) {
			seem++
		}
	}
	if rate := float64(seem) / n; rate > 0.025 {
		t.Errorf("%.2f %% of keys not added seem held, want about 1 %%", 100*rate)
	}
	if got := f.added.Load(); got < n*98/100 || got > n || full {
		t.Errorf("counted %d keys added (full %v), want about %d, not full", got, full, n)
	}
	if f.add([]byte("k1")) || f.added.Load() > n {
		t.Error("a key added again was counted")
	}
}

// waitFilters waits until d has a filter in use and builds none.
func waitFilters(t *testing.T, d *Disk) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); d.filters.cur.Load() == nil || d.filters.building.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the disk's filter was not built in a minute")
		}
	}
}

// TestDiskFilter writes new keys in batches while filters too small for
// them are built beside (filterMinKeys is 4), by the run goroutine's
// commits to one partition and a restore's Applies to another: after
// each commit, the filter in use holds each key the disk holds. Then the
// reads of a batch and of a restore see every key's state and count
// every key once, and a disk opened again builds a filter of what it
// holds, that tells most keys it lacks from those it has.
func TestDiskFilter(t *testing.T) {
	dir := t.TempDir()
	d := openDisk(t, dir, testID, func(s string) { t.Error("logged: " + s) })
	st := New(Config{Disk: d})
	p, r := st.NewPart(0), st.NewPart(1)
	st.Adopt(p, time.Now())
	const batches, size = 200, 50
	held := func(part int32, key string) bool { return d.mayHave(stateKey(nil, part, key)) }

	vals := make([][]byte, batches)
	for b := range vals {
		vals[b] = enc(t, int64(b))
	}
	var wg sync.WaitGroup
	restoreErr := make(chan error, 1)
	wg.Go(func() { // a restore of partition 1, beside
		for b := range batches {
			recs := func(yield func(key, value []byte) bool) {
				for i := range size {
					if !yield([]byte(fmt.Sprintf("r%d", b*size+i)), vals[b]) {
						return
					}
				}
			}
			st.SetPosition(r, int64(b))
			if _, err := st.Apply(r, recs); err != nil {
				restoreErr <- err
				return
			}
			for i := range size {
				if key := fmt.Sprintf("r%d", b*size+i); !held(1, key) {
					restoreErr <- fmt.Errorf("%s applied, not in the filter in use", key)
					return
				}
			}
		}
	})
	for b := range batches {
		for i := range size {
			key := fmt.Sprintf("k%d", b*size+i)
			if err := st.SetState(p, key, int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		st.SetPosition(p, int64(b))
		if err := st.Commit(); err != nil {
			t.Fatal(err)
		}
		for i := range size {
			if key := fmt.Sprintf("k%d", b*size+i); !held(0, key) {
				t.Fatalf("%s committed, not in the filter in use", key)
			}
		}
	}
	wg.Wait()
	close(restoreErr)
	if err := <-restoreErr; err != nil {
		t.Fatal(err)
	}
	waitFilters(t, d)
	if built, keys := d.filters.built.Load(), d.filters.cur.Load().keys; built < 2 || keys < 2*batches*size*9/10 {
		t.Errorf("%d filters built, the last for %d keys; want some, growing past %d", built, keys, 2*batches*size)
	}

	// Every key read again, as the next batch does: its state, once.
	for b := range batches {
		for i := range size {
			key := fmt.Sprintf("k%d", b*size+i)
			if v, err := st.State(p, key); err != nil || v != int64(i) {
				t.Fatalf("%s: %v %v, want %d", key, v, err, i)
			}
			if err := st.SetState(p, key, int64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if p.Counts().Keys != batches*size || r.Counts().Keys != batches*size {
		t.Errorf("keys %d and %d, want %d each", p.Counts().Keys, r.Counts().Keys, batches*size)
	}
	// A restore applying every key again counts none twice.
	again := func(yield func(key, value []byte) bool) {
		for i := range batches * size {
			if !yield([]byte(fmt.Sprintf("r%d", i)), vals[0]) {
				return
			}
		}
	}
	if _, err := st.Apply(r, again); err != nil || r.Counts().Keys != batches*size {
		t.Errorf("applied again: %v, %d keys, want %d", err, r.Counts().Keys, batches*size)
	}

	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openDisk(t, dir, testID, func(s string) { t.Error("logged: " + s) })
	waitFilters(t, d)
	lacks := 0
	for i := range batches * size {
		if !held(0, fmt.Sprintf("k%d", i)) || !held(1, fmt.Sprintf("r%d", i)) {
			t.Fatalf("opened again: k%d or r%d not in the filter", i, i)
		}
		if !held(0, fmt.Sprintf("x%d", i)) {
			lacks++
		}
	}
	if lacks < batches*size*95/100 {
		t.Errorf("opened again: the filter told %d of %d keys the disk lacks, want most", lacks, batches*size)
	}
}

// TestDiskPrefetch: a batch's reads ahead give what the disk committed,
// never a state from before the last commit, and give way to what the
// batch itself set; keys of partitions not held are not read.
func TestDiskPrefetch(t *testing.T) {
	d := openDisk(t, t.TempDir(), testID, func(s string) { t.Error("logged: " + s) })
	st := New(Config{Disk: d})
	p := st.NewPart(0)
	st.Adopt(p, time.Now())
	set := func(key string, v int64) {
		t.Helper()
		if err := st.SetState(p, key, v); err != nil {
			t.Fatal(err)
		}
	}
	get := func(key string) any {
		t.Helper()
		v, err := st.State(p, key)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ahead := func(keys ...string) {
		st.Prefetch(func(yield func(int32, []byte) bool) {
			for _, k := range keys {
				if !yield(0, []byte(k)) || !yield(5, []byte(k)) {
					return
				}
			}
		})
		if st.pf == nil {
			t.Fatal("no reads ahead")
		}
		<-st.pf.done
	}
	set("a", 1)
	set("b", 2)
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	ahead("a", "b", "c")
	if len(st.pf.keys) != 3 {
		t.Errorf("%d keys read ahead, want 3 (partition 5 is not held)", len(st.pf.keys))
	}
	for _, k := range []string{"a", "b", "c"} {
		if e := st.pf.keys[prefetchKey{0, k}]; e.state.Load() != prefetchRead {
			t.Fatalf("%s not read ahead", k)
		}
	}
	if a, b, c := get("a"), get("b"), get("c"); a != int64(1) || b != int64(2) || c != nil {
		t.Errorf("read ahead: a %v b %v c %v, want 1 2 none", a, b, c)
	}
	set("a", 10)
	set("c", 3)
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if st.pf != nil {
		t.Fatal("the reads ahead outlived their batch")
	}

	// The batch set b before it read b ahead: its own b.
	set("b", 20)
	ahead("a", "b", "c")
	if a, b, c := get("a"), get("b"), get("c"); a != int64(10) || b != int64(20) || c != int64(3) {
		t.Errorf("after a commit: a %v b %v c %v, want 10 20 3", a, b, c)
	}
	st.Abort()
	ahead("b")
	if b := get("b"); b != int64(2) {
		t.Errorf("after an abort: b %v, want the committed 2", b)
	}
	st.Abort()
}
