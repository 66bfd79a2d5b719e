package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The store's batches, driven by random inputs in random batches, some
// aborted. Three copies of the store run side by side: live sees every
// batch and commits or aborts it; ref sees only the batches live commits,
// and commits them all; restored is rebuilt by applying, after each
// commit, the changelog records live wrote. After every batch the three
// hold the same state, and live and ref wrote the same outputs (an
// update's, a window's result): an abort leaves no trace in memory, and
// the changelog says exactly what memory holds.

// input is a record of the model: its key, offset and timestamp (ms).
type input struct {
	key       string
	offset, t int64
}

// held returns a store of cfg holding partition 0, and its part.
func held(cfg Config) (*Store, *Part) {
	st := New(cfg)
	p := st.NewPart(0)
	st.Adopt(p, time.Now())
	return st, p
}

// storeModel is one copy of a store, with its part and its work.
type storeModel struct {
	st       *Store
	p        *Part
	onUpdate bool     // a windowed store's results come with each input, not at close
	out      []string // outputs written by committed batches
	prefetch bool     // the next batch reads its inputs' keys ahead first (Prefetch)
}

func newStoreModel(cfg Config, onUpdate bool) *storeModel {
	st, p := held(cfg)
	return &storeModel{st: st, p: p, onUpdate: onUpdate}
}

// errUnlucky is the failure of the model's inputs whose offset is 7
// modulo 11.
var errUnlucky = errors.New("unlucky input")

// modelUpdate is a per-key store's work: it adds the input's offset plus
// one to the key's state, deleting the key when that makes a multiple of
// 5, and writes the new state.
func (m *storeModel) update(in input) (string, error) {
	state, err := m.st.State(m.p, in.key)
	if err != nil {
		return "", err
	}
	n, _ := state.(int64)
	if in.offset%11 == 7 {
		return "", errUnlucky
	}
	n += in.offset + 1
	if n%5 == 0 {
		return "", m.st.SetState(m.p, in.key, nil)
	}
	return fmt.Sprint(in.key, "=", n), m.st.SetState(m.p, in.key, n)
}

// modelAggregate sums the inputs' offsets plus one, and fails on every
// input whose offset is 7 modulo 11 (the failure happens in the input's
// last window of a hopping store, so that its first ones were folded).
func modelAggregate(in input) func(any) (any, error) {
	return func(acc any) (any, error) {
		n, _ := acc.(int64)
		if in.offset%11 == 7 && n%2 == 1 {
			return nil, errUnlucky
		}
		return n + in.offset + 1, nil
	}
}

func modelMerge(a, b any) (any, error) { return a.(int64) + b.(int64), nil }

// result prints a window's result.
func result(t *testing.T, key string, w *Window) string {
	v, err := w.Value()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s[%d,%d]=%v", key, w.Start(), w.End(), v)
}

// batch runs inputs as one batch, as a stream does, and commits it or
// aborts it. It returns the changelog records of a commit.
func (m *storeModel) batch(t *testing.T, inputs []input, commit bool) []logRecord {
	t.Helper()
	if m.prefetch {
		m.st.Prefetch(func(yield func(int32, []byte) bool) {
			for _, in := range inputs {
				if !yield(m.p.id, []byte(in.key)) {
					return
				}
			}
		})
	}
	var outs []string
	for _, in := range inputs {
		var err error
		if m.st.win == nil {
			var o string
			if o, err = m.update(in); o != "" && err == nil {
				outs = append(outs, o)
			}
		} else {
			var wins []*Window
			wins, err = m.st.Fold(m.p, []byte(in.key), in.t, modelAggregate(in), modelMerge)
			for _, w := range wins {
				if m.onUpdate {
					outs = append(outs, result(t, in.key, w))
				}
			}
		}
		if err != nil && !errors.Is(err, ErrLate) && !errors.Is(err, errUnlucky) {
			t.Fatalf("input %d: %v", in.offset, err)
		}
	}
	if m.st.win != nil {
		fn := func(key string, w *Window) error {
			outs = append(outs, result(t, key, w))
			return nil
		}
		if m.onUpdate {
			fn = nil
		}
		if err := m.st.CloseDue(fn); err != nil {
			t.Fatal(err)
		}
	}
	var log []logRecord
	m.st.Changelog(func(partition int32, key, value []byte) {
		log = append(log, logRecord{partition, slices.Clone(key), slices.Clone(value)})
	})
	if !commit {
		m.st.Abort()
		return nil
	}
	m.st.Commit()
	m.out = append(m.out, outs...)
	return log
}

// logRecord is a changelog record, as a test keeps it.
type logRecord struct {
	Partition  int32
	Key, Value []byte
}

// records is recs as Apply reads them.
func records(recs []logRecord) func(yield func(key, value []byte) bool) {
	return func(yield func(key, value []byte) bool) {
		for _, r := range recs {
			if !yield(r.Key, r.Value) {
				return
			}
		}
	}
}

// snapshot prints a part's state: each key's state or windows, the
// stream time, and the counts (minClose too, unless restored: a restore
// keeps a lower bound of it).
func (m *storeModel) snapshot(withMinClose bool) string {
	p := m.p
	var lines []string
	for key, sl := range p.slots {
		if m.st.win == nil {
			lines = append(lines, fmt.Sprintf("%s=%x", key, sl.raw))
			continue
		}
		var ws []string
		for _, w := range sl.wins {
			ws = append(ws, fmt.Sprintf("[%d,%d]=%x", w.start, w.end, w.raw))
		}
		lines = append(lines, key+":"+strings.Join(ws, ","))
	}
	slices.Sort(lines)
	s := fmt.Sprintf("time %d; keys %d windows %d bytes %d\n%s", p.time, p.keys, p.windows, p.bytes, strings.Join(lines, "\n"))
	if withMinClose {
		s = fmt.Sprintf("minClose %d; %s", p.minClose, s)
	}
	return s
}

func TestStoreBatchesAbortAndChangelog(t *testing.T) {
	ms := time.Millisecond
	configs := map[string]*WindowSpec{
		"keyed":     nil,
		"tumbling":  {Size: 10 * ms, Advance: 10 * ms, Grace: 3 * ms},
		"hopping":   {Size: 10 * ms, Advance: 4 * ms},
		"session":   {Session: true, Gap: 5 * ms, Grace: 2 * ms},
		"on update": {Size: 10 * ms, Advance: 10 * ms},
	}
	for name, win := range configs {
		t.Run(name, func(t *testing.T) {
			onUpdate := name == "on update"
			live, ref, restored := newStoreModel(Config{Windows: win}, onUpdate), newStoreModel(Config{Windows: win}, onUpdate), newStoreModel(Config{Windows: win}, onUpdate)
			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			var offset, ts int64
			commits, aborts := 0, 0
			for range 300 {
				inputs := make([]input, rng.IntN(12))
				for i := range inputs {
					ts += int64(rng.IntN(4)) - 1 // mostly forward, sometimes back: late inputs
					inputs[i] = input{key: string(rune('a' + rng.IntN(5))), offset: offset, t: ts}
					offset++
				}
				commit := rng.IntN(3) > 0
				before := live.snapshot(true)
				log := live.batch(t, inputs, commit)
				if !commit {
					aborts++
					if got := live.snapshot(true); got != before {
						t.Fatalf("after an abort:\n%s\nwant, as before it:\n%s", got, before)
					}
					continue
				}
				commits++
				ref.batch(t, inputs, true)
				if got, want := live.snapshot(true), ref.snapshot(true); got != want {
					t.Fatalf("batch of offsets to %d: the state\n%s\nwant, as a run without the aborted batches has it:\n%s", offset, got, want)
				}
				if _, err := restored.st.Apply(restored.p, records(log)); err != nil {
					t.Fatal(err)
				}
				if got, want := restored.snapshot(false), live.snapshot(false); got != want {
					t.Fatalf("batch of offsets to %d: the changelog restores\n%s\nwant, as memory holds it:\n%s", offset, got, want)
				}
			}
			if !slices.Equal(live.out, ref.out) {
				t.Errorf("results differ:\n%v\n%v", live.out, ref.out)
			}
			if commits < 100 || aborts < 50 || len(live.out) < 50 || live.p.keys == 0 {
				t.Errorf("the run tested too little: %d commits, %d aborts, %d results, %d keys at the end", commits, aborts, len(live.out), live.p.keys)
			}
		})
	}
}
