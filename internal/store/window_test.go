package store

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// sum is an aggregate that adds n to a window's sum.
func sum(n int64) func(any) (any, error) {
	return func(acc any) (any, error) {
		s, _ := acc.(int64)
		return s + n, nil
	}
}

// folded folds an input of n at t into key's windows and prints them.
func folded(t *testing.T, st *Store, p *Part, key string, at, n int64) string {
	t.Helper()
	wins, err := st.Fold(p, []byte(key), at, sum(n), modelMerge)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, w := range wins {
		out = append(out, result(t, key, w))
	}
	return strings.Join(out, " ")
}

// closeDue closes what is due and prints it, in the order it came.
func closeDue(t *testing.T, st *Store) string {
	t.Helper()
	var out []string
	if err := st.CloseDue(func(key string, w *Window) error {
		out = append(out, result(t, key, w))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// TestFoldTimeWindows folds inputs into tumbling and hopping windows: an
// input is in each window that holds it, windows close in close time
// order once the stream time passes their end by the grace, and an input
// for closed windows only is late.
func TestFoldTimeWindows(t *testing.T) {
	st, p := held(Config{Windows: &WindowSpec{Size: 10 * ms, Advance: 10 * ms, Grace: 5 * ms}})
	for _, c := range []struct {
		key     string
		at, n   int64
		want    string
		wantDue string
	}{
		{"a", 1, 1, "a[0,10]=1", ""},
		{"b", -3, 2, "b[-10,0]=2", ""}, // before 1970: the window starts earlier
		{"a", 12, 4, "a[10,20]=4", "b[-10,0]=2"},
		{"a", 9, 8, "a[0,10]=9", ""}, // within the grace
		{"b", 15, 16, "b[10,20]=16", "a[0,10]=9"},
		{"a", 3, 0, "late record: timestamp 3, and the stream time 15 passed the close of its windows (grace 5ms)", ""},
	} {
		if got := folded(t, st, p, c.key, c.at, c.n); got != c.want {
			t.Errorf("%s at %d: %s, want %s", c.key, c.at, got, c.want)
		}
		if got := closeDue(t, st); got != c.wantDue {
			t.Errorf("after %s at %d, closed %q, want %q", c.key, c.at, got, c.wantDue)
		}
		st.Commit()
	}
	if _, err := st.Fold(p, []byte("a"), 3, sum(1), nil); !errors.Is(err, ErrLate) {
		t.Errorf("late input: %v", err)
	}
	if c := p.Counts(); c.Keys != 2 || c.Windows != 2 || p.time != 15 {
		t.Errorf("counts %+v, time %d", c, p.time)
	}

	hop, hp := held(Config{Windows: &WindowSpec{Size: 10 * ms, Advance: 4 * ms}})
	if got, want := folded(t, hop, hp, "a", 9, 1), "a[0,10]=1 a[4,14]=1 a[8,18]=1"; got != want {
		t.Errorf("hopping: %s, want %s", got, want)
	}
}

// TestFoldFailsWhole checks that an input whose aggregate fails in its
// last window leaves its first ones as they were.
func TestFoldFailsWhole(t *testing.T) {
	st, p := held(Config{Windows: &WindowSpec{Size: 10 * ms, Advance: 5 * ms}})
	folded(t, st, p, "a", 7, 1)
	calls := 0
	failSecond := func(acc any) (any, error) {
		if calls++; calls == 2 {
			return nil, errors.New("no")
		}
		return int64(100), nil
	}
	if _, err := st.Fold(p, []byte("a"), 8, failSecond, nil); err == nil || err.Error() != "no" {
		t.Fatalf("fold: %v", err)
	}
	nothing := func(any) (any, error) { return nil, nil }
	if _, err := st.Fold(p, []byte("a"), 8, nothing, nil); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "aggregate returned null") {
		t.Fatalf("an aggregate of null: %v", err)
	}
	if got, want := folded(t, st, p, "a", 9, 0), "a[0,10]=1 a[5,15]=1"; got != want {
		t.Errorf("after the failures: %s, want %s", got, want)
	}
}

// TestFoldSessions bridges two sessions with an input, which merges them;
// an input within a session changes it in place.
func TestFoldSessions(t *testing.T) {
	st, p := held(Config{Windows: &WindowSpec{Session: true, Gap: 10 * ms, Grace: 10 * ms}})
	for _, c := range []struct {
		at, n int64
		want  string
	}{
		{0, 1, "a[0,0]=1"},
		{15, 2, "a[15,15]=2"},
		{8, 4, "a[0,15]=7"}, // bridges [0,0] and [15,15]
		{12, 8, "a[0,15]=15"},
		{40, 16, "a[40,40]=16"},
	} {
		if got := folded(t, st, p, "a", c.at, c.n); got != c.want {
			t.Errorf("at %d: %s, want %s", c.at, got, c.want)
		}
	}
	// Sessions made and merged in the batch leave no record.
	if got, want := changelog(t, st), "0/a[0,15]=15 0/a[40,40]=16 0/stream-time=40"; got != want {
		t.Errorf("changelog %s, want %s", got, want)
	}
	st.Commit()
	if c := p.Counts(); c.Windows != 2 {
		t.Errorf("counts %+v", c)
	}
	// Session [0,15] closes at 15+10+1+10 = 36: a stream time of 40 passed it.
	if got, want := closeDue(t, st), "a[0,15]=15"; got != want {
		t.Errorf("closed %s, want %s", got, want)
	}
	if got, want := changelog(t, st), "0/a[0,15]=-"; got != want {
		t.Errorf("changelog %s, want %s", got, want)
	}
	st.Commit()
	if c := p.Counts(); c.Windows != 1 || c.Keys != 1 {
		t.Errorf("counts %+v", c)
	}
}

// TestIdleAndClosing moves an idle partition's stream time on with the
// clock, until its windows are due with no input.
func TestIdleAndClosing(t *testing.T) {
	st, p := held(Config{Windows: &WindowSpec{Size: 10 * ms, Advance: 10 * ms, Idle: time.Second}})
	start := time.Now()
	st.Adopt(p, start)
	folded(t, st, p, "a", 1, 1)
	st.Commit()
	if st.Closing() {
		t.Error("closing at once")
	}
	st.Idle(start.Add(500 * ms))
	if p.btime != 1 {
		t.Errorf("stream time moved before Idle: %d", p.btime)
	}
	st.Idle(start.Add(1500 * ms))
	if p.btime != 1501 || !st.Closing() {
		t.Errorf("stream time %d after an idle 1.5 s, closing %v", p.btime, st.Closing())
	}
	if got := closeDue(t, st); got != "a[0,10]=1" {
		t.Errorf("closed %s", got)
	}
	if got, want := changelog(t, st), "0/a[0,10]=- 0/stream-time=1501"; got != want {
		t.Errorf("changelog %s, want %s", got, want)
	}
	st.Abort()
	if p.btime != 1 || st.Closing() {
		t.Errorf("after the abort: stream time %d, closing %v", p.btime, st.Closing())
	}
}

// TestCloseDueOrder closes windows of two partitions: partition by
// partition, in close time, start and key order within one. An error of
// fn ends CloseDue, and the abort that follows reopens what it closed.
func TestCloseDueOrder(t *testing.T) {
	st := New(Config{Windows: &WindowSpec{Size: 10 * ms, Advance: 5 * ms}})
	p1, p0 := st.NewPart(1), st.NewPart(0)
	st.Adopt(p1, time.Now())
	st.Adopt(p0, time.Now())
	for _, in := range []struct {
		p   *Part
		key string
		at  int64
	}{{p1, "b", 1}, {p1, "a", 2}, {p1, "c", 30}, {p0, "z", 4}, {p0, "y", 30}} {
		folded(t, st, in.p, in.key, in.at, 1)
	}
	want := "z[-5,5]=1 z[0,10]=1 a[-5,5]=1 b[-5,5]=1 a[0,10]=1 b[0,10]=1"
	if got := closeDue(t, st); got != want {
		t.Errorf("closed %s\nwant   %s", got, want)
	}
	st.Commit()
	if c := st.Counts(); c.Windows != 4 || c.Keys != 2 {
		t.Errorf("counts %+v: want the 4 windows of c and y", c)
	}

	folded(t, st, p0, "y", 100, 1)
	folded(t, st, p1, "c", 100, 1)
	stop := errors.New("stop")
	n := 0
	err := st.CloseDue(func(string, *Window) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("CloseDue: %v after %d windows; want stop after 1", err, n)
	}
	st.Abort()
	if c := st.Counts(); c.Windows != 4 || closeDue(t, st) != "" {
		t.Errorf("after the abort: counts %+v", c)
	}
}
