package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The store's batches, driven without a cluster: random inputs in random
// batches, some aborted. Three copies of the store run side by side:
// live sees every batch and commits or aborts it; ref sees only the
// batches live commits, and commits them all; restored is rebuilt by
// applying, after each commit, the changelog records live wrote. After
// every batch the three hold the same state, and live and ref wrote the
// same window results: an abort leaves no trace in memory, and the
// changelog says exactly what memory holds.

// storeModel is one copy of a store, with its part and transform.
type storeModel struct {
	st  *kafkaStore
	p   *part
	tr  Transform
	out []string // results written by committed batches
}

func newStoreModel(t *testing.T, spec *StreamSpec) *storeModel {
	t.Helper()
	cfg, err := parseConfig(map[string]any{"servers": "127.0.0.1:1", "group": "g"})
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(cfg, spec)
	p := newPart(0, 1)
	st.parts[0] = p
	m := &storeModel{st: st, p: p, tr: st.windowedTransform()}
	if spec.Window == nil {
		m.tr = st.keyedTransform(spec.Update)
	}
	return m
}

// batch runs inputs as one batch, as stream.transact does, and commits
// it or aborts it. It returns the changelog records of a commit.
func (m *storeModel) batch(t *testing.T, cfg *config, inputs []*kgo.Record, commit bool) []*kgo.Record {
	t.Helper()
	ctx := context.Background()
	var outs []string
	for _, r := range inputs {
		os, err := m.tr(ctx, &Record{r: r, cfg: cfg})
		if err != nil && !errors.Is(err, ErrLate) && !strings.Contains(err.Error(), "unlucky") {
			t.Fatalf("input %d: %v", r.Offset, err)
		}
		for _, o := range os {
			outs = append(outs, fmt.Sprint(o.Message.Key, o.Message.Value))
		}
	}
	var log []*kgo.Record
	if m.st.win != nil {
		var b batchCounts
		os, err := m.st.closeDue(ctx, SkipOnError, &b)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range os {
			outs = append(outs, fmt.Sprint(o.Message.Key, o.Message.Value))
		}
	}
	m.st.changelog(func(r *kgo.Record) { log = append(log, r) })
	if !commit {
		m.st.abort()
		return nil
	}
	m.st.commit()
	m.out = append(m.out, outs...)
	return log
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

// modelAggregate sums the inputs' offsets plus one, and fails on every
// input whose offset is 7 modulo 11 (the failure happens in the input's
// last window of a hopping stream, so that its first ones were folded).
func modelAggregate(_ context.Context, in *Record, acc any) (any, error) {
	n, _ := acc.(int64)
	if in.Offset()%11 == 7 && n%2 == 1 {
		return nil, errors.New("unlucky input")
	}
	return n + in.Offset() + 1, nil
}

func TestStoreBatchesAbortAndChangelog(t *testing.T) {
	merge := func(_ context.Context, a, b any) (any, error) { return a.(int64) + b.(int64), nil }
	update := func(_ context.Context, in *Record, state any) ([]StreamOutput, any, error) {
		n, _ := state.(int64)
		if in.Offset()%11 == 7 {
			return nil, nil, errors.New("unlucky input")
		}
		n += in.Offset() + 1
		if n%5 == 0 {
			return nil, nil, nil // deleted
		}
		return []StreamOutput{{Message: Message{Key: in.Key(), Value: n}}}, n, nil
	}
	specs := map[string]StreamSpec{
		"keyed":     {Update: update},
		"tumbling":  {Window: &Window{Kind: Tumbling, Size: 10 * time.Millisecond, Grace: 3 * time.Millisecond}},
		"hopping":   {Window: &Window{Kind: Hopping, Size: 10 * time.Millisecond, Advance: 4 * time.Millisecond}},
		"session":   {Window: &Window{Kind: Session, Gap: 5 * time.Millisecond, Grace: 2 * time.Millisecond, Merge: merge}},
		"on update": {Window: &Window{Kind: Tumbling, Size: 10 * time.Millisecond, Emit: EmitOnUpdate}},
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			spec.From, spec.To, spec.Store = []string{"in"}, "out", "s"
			if spec.Window != nil {
				spec.Window.Aggregate = modelAggregate
			}
			live, ref, restored := newStoreModel(t, &spec), newStoreModel(t, &spec), newStoreModel(t, &spec)
			cfg := live.st.cfg
			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			var offset, ts int64
			commits, aborts := 0, 0
			for range 300 {
				inputs := make([]*kgo.Record, rng.IntN(12))
				for i := range inputs {
					ts += int64(rng.IntN(4)) - 1 // mostly forward, sometimes back: late inputs
					inputs[i] = &kgo.Record{Key: []byte{'a' + byte(rng.IntN(5))}, Offset: offset, Timestamp: time.UnixMilli(ts)}
					offset++
				}
				commit := rng.IntN(3) > 0
				before := live.snapshot(true)
				log := live.batch(t, cfg, inputs, commit)
				if !commit {
					aborts++
					if got := live.snapshot(true); got != before {
						t.Fatalf("after an abort:\n%s\nwant, as before it:\n%s", got, before)
					}
					continue
				}
				commits++
				ref.batch(t, cfg, inputs, true)
				if got, want := live.snapshot(true), ref.snapshot(true); got != want {
					t.Fatalf("batch of offsets to %d: the state\n%s\nwant, as a run without the aborted batches has it:\n%s", offset, got, want)
				}
				restored.st.mu.Lock()
				for _, r := range log {
					if err := restored.st.apply(restored.p, r); err != nil {
						t.Fatal(err)
					}
				}
				restored.st.mu.Unlock()
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
