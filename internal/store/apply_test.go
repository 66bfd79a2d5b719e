package store

import (
	"encoding/binary"
	"testing"
	"time"
)

// enc is the encoding of v.
func enc(t *testing.T, v any) []byte {
	t.Helper()
	b, err := Encode(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestApplyKeyed applies a per-key changelog as a restore does: an
// overwrite replaces a key's state and its share of the counts, a
// tombstone deletes it, and one for a key never held changes nothing.
func TestApplyKeyed(t *testing.T) {
	st := New(Config{})
	p := st.NewPart(0)
	n, err := st.Apply(p, records([]logRecord{
		{Key: []byte("a"), Value: enc(t, int64(1))}, {Key: []byte("bb"), Value: enc(t, int64(2))}, {Key: []byte("a"), Value: enc(t, int64(300))},
		{Key: []byte("bb")}, {Key: []byte("c")}, {Key: []byte("d"), Value: enc(t, int64(4))},
	}))
	if n != 6 || err != nil {
		t.Fatalf("applied %d: %v", n, err)
	}
	a, _ := st.State(p, "a")
	d, _ := st.State(p, "d")
	bb, _ := st.State(p, "bb")
	if a != int64(300) || d != int64(4) || bb != nil || len(p.slots) != 2 {
		t.Errorf("states a %v, d %v, bb %v; %d keys held", a, d, bb, len(p.slots))
	}
	want := Counts{Keys: 2, Bytes: int64(1 + len(enc(t, int64(300))) + 1 + len(enc(t, int64(4))))}
	if got := p.Counts(); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
}

// TestApplyWindowed applies a windowed changelog: windows in start order
// whatever the order of their records, a tombstone closing one, the
// stream time, and the records no stream writes, refused.
func TestApplyWindowed(t *testing.T) {
	st := New(Config{Windows: &WindowSpec{Size: 10 * time.Millisecond, Advance: 10 * time.Millisecond, Grace: 5 * time.Millisecond}})
	p := st.NewPart(3)
	streamTime := binary.BigEndian.AppendUint64(nil, uint64(42))
	n, err := st.Apply(p, records([]logRecord{
		{Key: windowKey("k", 20, 30), Value: enc(t, int64(2))}, {Key: windowKey("k", 10, 20), Value: enc(t, int64(1))},
		{Key: windowKey("j", 0, 10), Value: enc(t, int64(7))}, {Key: windowKey("j", 0, 10)}, {Key: []byte(timeKey), Value: streamTime},
	}))
	if n != 5 || err != nil {
		t.Fatalf("applied %d: %v", n, err)
	}
	if sl := p.slots["k"]; sl == nil || len(sl.wins) != 2 || sl.wins[0].start != 10 || sl.wins[1].start != 20 || p.slots["j"] != nil {
		t.Errorf("windows %v", p.slots)
	}
	// The lowest close time is a lower bound: j's window [0, 10), gone,
	// closed at 15.
	if p.time != 42 || p.btime != 42 || p.minClose != 15 || p.bminClose != 15 {
		t.Errorf("time %d (batch %d), min close %d (batch %d); want 42 and 15", p.time, p.btime, p.minClose, p.bminClose)
	}
	if c := p.Counts(); c.Keys != 1 || c.Windows != 2 || c.Bytes != 2*(1+16+int64(len(enc(t, int64(1))))) {
		t.Errorf("counts %+v", c)
	}
	for _, c := range []struct {
		rec  logRecord
		want string
	}{
		{logRecord{Key: []byte("x"), Value: []byte("y")}, "key of 1 bytes: not a window's"},
		{logRecord{Key: []byte(timeKey), Value: []byte{1}}, "stream time: 1 bytes, want 8"},
	} {
		q := st.NewPart(0)
		n, err := st.Apply(q, records([]logRecord{{Key: windowKey("a", 0, 10), Value: enc(t, 1.5)}, c.rec}))
		if n != 1 || err == nil || err.Error() != c.want {
			t.Errorf("%q: applied %d, %v; want 1, %q", c.rec.Key, n, err, c.want)
		}
	}
}
