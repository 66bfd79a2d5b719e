package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// changelog returns the batch's changelog records, printed and sorted:
// partition/key=value, a window's key as key[start,end], the value
// decoded (or "-" for a tombstone).
func changelog(t *testing.T, st *Store) string {
	t.Helper()
	var recs []string
	st.Changelog(func(partition int32, key, val []byte) {
		v := "-"
		switch {
		case string(key) == timeKey:
			v = fmt.Sprint(int64(binary.BigEndian.Uint64(val)))
		case st.win != nil:
			n := len(key) - 16
			key = fmt.Appendf(nil, "%s[%d,%d]", key[:n], int64(binary.BigEndian.Uint64(key[n:])), int64(binary.BigEndian.Uint64(key[n+8:])))
		}
		if val != nil && string(key) != timeKey {
			d, err := Decode(val)
			if err != nil {
				t.Fatalf("record %q: %v", key, err)
			}
			v = value.Format(d)
		}
		recs = append(recs, fmt.Sprintf("%d/%s=%s", partition, key, v))
	})
	slices.Sort(recs)
	return strings.Join(recs, " ")
}

// states prints the keys' states in p, as the batch in hand left them.
func states(t *testing.T, st *Store, p *Part, keys ...string) string {
	t.Helper()
	var out []string
	for _, k := range keys {
		v, err := st.State(p, k)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k+"="+value.Format(v))
	}
	return strings.Join(out, " ")
}

// TestKeyedBatches commits a batch, then aborts one that changes, deletes
// and makes keys: its changelog says what it did, and the abort puts
// every key and count back.
func TestKeyedBatches(t *testing.T) {
	st, p := held(Config{})
	for k, v := range map[string]any{"a": int64(1), "b": "two", "gone": 1.5} {
		if err := st.SetState(p, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetState(p, "gone", nil); err != nil { // made and deleted in the batch: no record
		t.Fatal(err)
	}
	if got, want := changelog(t, st), `0/a=1 0/b="two"`; got != want {
		t.Errorf("first batch's changelog %s, want %s", got, want)
	}
	st.Commit()
	committed := p.Counts()
	if want := (Counts{Keys: 2, Bytes: int64(2 + len(enc(t, int64(1))) + len(enc(t, "two")))}); committed != want {
		t.Errorf("counts %+v, want %+v", committed, want)
	}

	_ = st.SetState(p, "a", value.NewList(int64(3)))
	_ = st.SetState(p, "a", int64(4)) // twice in a batch: one record, of the last
	_ = st.SetState(p, "b", nil)
	_ = st.SetState(p, "c", true)
	if got, want := states(t, st, p, "a", "b", "c"), "a=4 b=null c=true"; got != want {
		t.Errorf("in the batch: %s, want %s", got, want)
	}
	if got, want := changelog(t, st), "0/a=4 0/b=- 0/c=true"; got != want {
		t.Errorf("second batch's changelog %s, want %s", got, want)
	}
	st.Abort()
	if got, want := states(t, st, p, "a", "b", "c"), `a=1 b="two" c=null`; got != want {
		t.Errorf("after the abort: %s, want %s", got, want)
	}
	if p.Counts() != committed || len(p.slots) != 2 {
		t.Errorf("after the abort: counts %+v, %d slots; want %+v, 2", p.Counts(), len(p.slots), committed)
	}
	if got := changelog(t, st); got != "" {
		t.Errorf("an empty batch's changelog: %s", got)
	}
}

// TestSetStateRefused keeps nothing of a state that has no encoding.
func TestSetStateRefused(t *testing.T) {
	st, p := held(Config{})
	_ = st.SetState(p, "k", int64(1))
	st.Commit()
	for _, v := range []any{opaque{}, value.NewList(opaque{}), struct{}{}} {
		if err := st.SetState(p, "k", v); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%v as state: %v", v, err)
		}
	}
	if got := states(t, st, p, "k"); got != "k=1" || changelog(t, st) != "" {
		t.Errorf("after refused states: %s, changelog %q", got, changelog(t, st))
	}
}

// TestChangelogBuffers checks that a changelog record's value stays as
// it was while the batch after its own runs (kgo may still be sending it
// then, under at-least-once, until that batch's commit): the store writes
// a key's next encodings in other buffers, and reuses a record's buffer
// only two batches on.
func TestChangelogBuffers(t *testing.T) {
	st, p := held(Config{})
	var vals [][]byte // each batch's record of key k
	for i := range 4 {
		_ = st.SetState(p, "k", int64(1000+i))
		_ = st.SetState(p, "k", int64(2000+i)) // again: the batch's own buffer
		st.Changelog(func(_ int32, _, val []byte) { vals = append(vals, val) })
		st.Commit()
		for j, v := range vals[max(0, i-1):] {
			if want := enc(t, int64(2000+max(0, i-1)+j)); !slices.Equal(v, want) {
				t.Fatalf("after batch %d: the record of batch %d holds %v, want %v", i, max(0, i-1)+j, v, want)
			}
		}
	}
	if &vals[0][0] != &vals[2][0] || &vals[1][0] == &vals[2][0] {
		t.Error("batch 2 did not write in batch 0's buffer, its spare")
	}
}
