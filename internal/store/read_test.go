package store

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// decoded prints an encoding read back.
func decoded(t *testing.T, raw []byte) string {
	t.Helper()
	v, err := Decode(raw)
	if err != nil {
		t.Fatalf("%v: %v", raw, err)
	}
	return value.Format(v)
}

// ranged prints partition 0's keys from from to to, as Range reads them.
func ranged(t *testing.T, st *Store, from, to []byte) string {
	t.Helper()
	var out []string
	err := st.Range(0, from, to, func(key, val []byte) bool {
		out = append(out, string(key)+"="+decoded(t, val))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// got prints key's committed state in partition 0, as Get reads it.
func got(t *testing.T, st *Store, key string) string {
	t.Helper()
	raw, ok, err := st.Get(0, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "none"
	}
	return decoded(t, raw)
}

// TestReadKeyed reads a per-key store while a batch is in hand: the
// reads show the committed state, whatever the batch changed, until it
// commits; an aborted batch never shows.
func TestReadKeyed(t *testing.T) {
	st, p := held(Config{})
	for i, k := range []string{"c", "a", "b", "e"} {
		_ = st.SetState(p, k, int64(i))
	}
	if r := ranged(t, st, nil, nil); r != "" {
		t.Errorf("before the first commit: %s", r)
	}
	st.Commit()
	const committed = "a=1 b=2 c=0 e=3"
	for _, abort := range []bool{true, false} {
		_ = st.SetState(p, "a", "changed")
		_ = st.SetState(p, "b", nil)
		_ = st.SetState(p, "d", int64(9))
		if r := ranged(t, st, nil, nil); r != committed || got(t, st, "a") != "1" || got(t, st, "d") != "none" {
			t.Errorf("in the batch (abort %v): %s, a %s, d %s; want %s", abort, r, got(t, st, "a"), got(t, st, "d"), committed)
		}
		if abort {
			st.Abort()
			if r := ranged(t, st, nil, nil); r != committed {
				t.Errorf("after the abort: %s, want %s", r, committed)
			}
		}
	}
	st.Commit()
	if r, want := ranged(t, st, nil, nil), `a="changed" c=0 d=9 e=3`; r != want {
		t.Errorf("after the commit: %s, want %s", r, want)
	}
	if r, want := ranged(t, st, []byte("b"), []byte("d")), "c=0 d=9"; r != want {
		t.Errorf("b to d: %s, want %s", r, want)
	}
	if r, want := ranged(t, st, []byte("d"), nil), "d=9 e=3"; r != want {
		t.Errorf("from d: %s, want %s", r, want)
	}
	n := 0
	_ = st.Range(0, nil, nil, func(_, _ []byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Range went on after fn said stop: %d calls", n)
	}
}

// windows prints key's windows (all keys' for nil) in partition 0 that
// start from since to until.
func windows(t *testing.T, st *Store, key []byte, since, until int64) string {
	t.Helper()
	var out []string
	err := st.Windows(0, key, key, since, until, func(k []byte, start, end int64, val []byte) bool {
		out = append(out, fmt.Sprintf("%s[%d,%d]=%s", k, start, end, decoded(t, val)))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// TestReadWindows reads a windowed store's windows while a batch in hand
// makes, merges and closes sessions.
func TestReadWindows(t *testing.T) {
	st, p := held(Config{Windows: &WindowSpec{Session: true, Gap: 10 * ms, Grace: 100 * ms}})
	folded(t, st, p, "b", 0, 1)
	folded(t, st, p, "a", 0, 1)
	folded(t, st, p, "a", 15, 2)
	st.Commit()
	const committed = "a[0,0]=1 a[15,15]=2 b[0,0]=1"
	folded(t, st, p, "a", 8, 4)  // merges a's two sessions
	folded(t, st, p, "c", 20, 8) // a new key
	folded(t, st, p, "b", 5, 16) // changes b's session in place
	if r := windows(t, st, nil, -100, 100); r != committed {
		t.Errorf("in the batch: %s, want %s", r, committed)
	}
	if err := st.CloseDue(nil); err != nil {
		t.Fatal(err)
	}
	if r := windows(t, st, nil, -100, 100); r != committed {
		t.Errorf("after CloseDue, in the batch: %s, want %s", r, committed)
	}
	st.Commit()
	if r, want := windows(t, st, nil, -100, 100), "a[0,15]=7 b[0,5]=17 c[20,20]=8"; r != want {
		t.Errorf("after the commit: %s, want %s", r, want)
	}
	if r, want := windows(t, st, []byte("a"), 0, 0), "a[0,15]=7"; r != want {
		t.Errorf("a's windows starting at 0: %s, want %s", r, want)
	}
	if r := windows(t, st, []byte("a"), 1, 100); r != "" {
		t.Errorf("a's windows starting after 0: %s", r)
	}
	folded(t, st, p, "c", 200, 1) // closes every other session: the last, c's at 20, at 20+10+1+100
	if err := st.CloseDue(nil); err != nil {
		t.Fatal(err)
	}
	if r, want := windows(t, st, nil, -100, 300), "a[0,15]=7 b[0,5]=17 c[20,20]=8"; r != want {
		t.Errorf("after the close, in the batch: %s, want %s", r, want)
	}
	st.Commit()
	if r, want := windows(t, st, nil, -100, 300), "c[200,200]=1"; r != want {
		t.Errorf("after the close: %s, want %s", r, want)
	}
}

// TestReadErrors reads partitions not held, and stores of the other kind.
func TestReadErrors(t *testing.T) {
	keyed, _ := held(Config{})
	windowed, _ := held(Config{Windows: &WindowSpec{Size: ms, Advance: ms}})
	if _, _, err := keyed.Get(1, []byte("k")); !errors.Is(err, ErrNotHeld) || err.Error() != "partition not held: 1" {
		t.Errorf("Get of partition 1: %v", err)
	}
	if err := keyed.Range(7, nil, nil, nil); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Range of partition 7: %v", err)
	}
	for _, err := range []error{
		windowed.Range(0, nil, nil, nil),
		keyed.Windows(0, nil, nil, 0, 1, nil),
		func() error { _, _, err := windowed.Get(0, nil); return err }(),
	} {
		if !errors.Is(err, ErrKind) {
			t.Errorf("a read of the other kind of store: %v", err)
		}
	}
	if ps := keyed.Partitions(); len(ps) != 1 || ps[0] != 0 {
		t.Errorf("partitions %v", ps)
	}
	keyed.Drop(0)
	if ps := keyed.Partitions(); len(ps) != 0 {
		t.Errorf("partitions after the drop %v", ps)
	}
}

// TestReadFromClosures reads the store from the functions it calls on
// the run goroutine: an aggregate and a window's close. No lock is held
// then, and the reads see the committed state.
func TestReadFromClosures(t *testing.T) {
	st, p := held(Config{Windows: &WindowSpec{Size: 10 * ms, Advance: 10 * ms}})
	folded(t, st, p, "a", 1, 1)
	st.Commit()
	var seen []string
	agg := func(acc any) (any, error) {
		seen = append(seen, windows(t, st, []byte("a"), 0, 100))
		return int64(5), nil
	}
	if _, err := st.Fold(p, []byte("a"), 2, agg, nil); err != nil {
		t.Fatal(err)
	}
	folded(t, st, p, "b", 30, 1)
	if err := st.CloseDue(func(string, *Window) error {
		seen = append(seen, windows(t, st, nil, 0, 100))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a[0,10]=1", "a[0,10]=1"}; strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("read from the closures: %q, want %q", seen, want)
	}
}

// TestReadConcurrent reads a store from other goroutines while the run
// goroutine runs batches, half of them aborted, and a restore applies a
// partition beside it: no read shows an aborted batch's state, a key's
// committed count never goes back, and, under -race, nothing races.
func TestReadConcurrent(t *testing.T) {
	st, p := held(Config{})
	keys := []string{"a", "b", "c", "d"}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			last := map[string]int64{}
			for {
				select {
				case <-done:
					return
				default:
				}
				_ = st.Range(0, nil, nil, func(key, val []byte) bool {
					v, err := Decode(val)
					n, _ := v.(int64)
					if err != nil || n < 0 || n < last[string(key)] {
						t.Errorf("read %s=%v (%v) after %d", key, v, err, last[string(key)])
					}
					last[string(key)] = n
					return true
				})
				_ = st.Counts()
			}
		})
	}
	wg.Go(func() { // a restore, of a part not held
		q := st.NewPart(1)
		for i := range 200 {
			rec := []logRecord{{Key: []byte(keys[i%4]), Value: enc(t, int64(i))}}
			if _, err := st.Apply(q, records(rec)); err != nil {
				t.Error(err)
			}
			_ = q.Counts()
		}
	})
	for i := range 400 {
		abort := i%2 == 1
		for _, k := range keys[:1+i%4] {
			v := int64(i)
			if abort {
				v = -1 // never to be read
			}
			if err := st.SetState(p, k, v); err != nil {
				t.Fatal(err)
			}
		}
		if abort {
			st.Abort()
		} else {
			st.Commit()
		}
		runtime.Gosched() // let the readers in
	}
	close(done)
	wg.Wait()
}

// TestReadApplied reads a held part that only Apply feeds, as a standby
// or a table's would be, while records are applied to it.
func TestReadApplied(t *testing.T) {
	st, p := held(Config{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 300 {
			if _, err := st.Apply(p, records([]logRecord{{Key: []byte("k"), Value: enc(t, int64(i))}})); err != nil {
				t.Error(err)
			}
		}
	})
	last := int64(-1)
	for last < 299 {
		raw, ok, err := st.Get(0, []byte("k"))
		if err != nil || !ok {
			continue
		}
		v, _ := Decode(raw)
		if n := v.(int64); n < last {
			t.Fatalf("read %d after %d", n, last)
		} else {
			last = n
		}
	}
	wg.Wait()
}
