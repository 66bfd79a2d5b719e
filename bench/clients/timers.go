package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Timer overhead (issue 34): a per-key stream (an Update counting, a new
// group each run) reads keys inputs, one per key, so that it holds keys
// keys; with a Silence each ("silence"), every key then falls silent and
// gets an OnTimer call (which keeps the state and writes nothing). Two
// figures:
//
//   - memory per key: the Go heap (after a GC) while the stream holds
//     every key, its silences pending, less the heap once it is destroyed
//     (the broker's records, the changelog's included, stay in both), over
//     keys; the same for the stream without OnTimer ("no timers"), so that
//     the difference is what a silence costs;
//   - the time to fire them all: from the last input processed to the
//     last silence call committed (Store.Fired), less the silence: how far
//     the last call comes after the last key's due time; and from the
//     first call to the last, against the span of the inputs (a key's due
//     time is its input's processing time plus the silence).

type timerParams struct {
	keys    int
	silence time.Duration
}

const timerTopic = "timer-in"

type timerRun struct {
	perKey    float64       // heap bytes per key
	lag       time.Duration // the last call after the last due time
	span      time.Duration // the first call to the last
	inputSpan time.Duration // the first input processed to the last (about)
}

// runTimers runs the timer table's rounds and prints it.
func runTimers(ctx context.Context, adm *kadm.Client, p *params, t *timerParams, rounds int) error {
	if err := createTopics(ctx, adm, timerTopic); err != nil {
		return err
	}
	cl, err := kgo.NewClient(seeds(p), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	recs := make([]*kgo.Record, 0, 10000)
	for i := range t.keys {
		recs = append(recs, &kgo.Record{Topic: timerTopic, Key: []byte(strconv.Itoa(i)), Value: p.valueB})
		if len(recs) == cap(recs) || i == t.keys-1 {
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				cl.Close()
				return err
			}
			recs = recs[:0]
		}
	}
	cl.Close()
	runs := map[bool][]timerRun{}
	n := 0
	for r := range rounds + 1 { // round 0 warms up, untimed
		for _, silence := range []bool{r%2 == 0, r%2 != 0} {
			n++
			tr, err := timerOnce(ctx, p, t, silence, fmt.Sprintf("g-timer-%d", n))
			if err != nil {
				return fmt.Errorf("round %d, silence %v: %w", r, silence, err)
			}
			if r == 0 {
				continue
			}
			runs[silence] = append(runs[silence], tr)
			fmt.Fprintf(os.Stderr, "round %d: silence %-5v %.0f B/key, last call %v after the last due time, calls over %v (inputs over %v)\n",
				r, silence, tr.perKey, tr.lag.Round(time.Millisecond), tr.span.Round(time.Millisecond), tr.inputSpan.Round(time.Millisecond))
			if benchOut != nil {
				if silence {
					fmt.Fprintf(benchOut, "BenchmarkTimers/timers=silence 1 %.0f B/key %.0f last-call-after-due-ns %.0f first-to-last-call-ns\n",
						tr.perKey, float64(tr.lag), float64(tr.span))
				} else {
					fmt.Fprintf(benchOut, "BenchmarkTimers/timers=none 1 %.0f B/key\n", tr.perKey)
				}
			}
		}
	}
	fmt.Printf("Timers: %d keys, one input each, a per-key stream, exactly-once, a silence of %v each (or none), a new group each run, %d rounds\n\n", t.keys, t.silence, rounds)
	fmt.Println("| stream | heap per key held | last call after the last due time | first call to last (inputs' span) |")
	fmt.Println("|---|---|---|---|")
	for _, silence := range []bool{false, true} {
		rs := runs[silence]
		field := func(f func(timerRun) float64) []float64 {
			var out []float64
			for _, r := range rs {
				out = append(out, f(r))
			}
			slices.Sort(out)
			return out
		}
		per := field(func(r timerRun) float64 { return r.perKey })
		title := "no timers"
		if !silence {
			fmt.Printf("| %s | %.0f B [%.0f–%.0f] | – | – |\n", title, median(per), per[0], per[len(per)-1])
			continue
		}
		lag := field(func(r timerRun) float64 { return float64(r.lag) })
		span := field(func(r timerRun) float64 { return float64(r.span) })
		in := field(func(r timerRun) float64 { return float64(r.inputSpan) })
		ms := func(v float64) string { return time.Duration(v).Round(time.Millisecond).String() }
		fmt.Printf("| a silence of %v each | %.0f B [%.0f–%.0f] | %s [%s–%s] | %s [%s–%s] (%s) |\n", t.silence,
			median(per), per[0], per[len(per)-1], ms(median(lag)), ms(lag[0]), ms(lag[len(lag)-1]),
			ms(median(span)), ms(span[0]), ms(span[len(span)-1]), ms(median(in)))
	}
	return nil
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// timerOnce runs the stream once, with silences or without.
func timerOnce(ctx context.Context, p *params, t *timerParams, silence bool, group string) (timerRun, error) {
	var tr timerRun
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	defer lib.Close(context.Background())
	count := func(_ context.Context, _ *kafkabpl.Record, state any) ([]stream.Output, any, error) {
		n, _ := state.(int64)
		return nil, n + 1, nil
	}
	spec := stream.Spec{From: []string{timerTopic}, To: timerTopic + "-out", Store: "keys", Update: count}
	if silence {
		spec.Silence = t.silence
		spec.OnTimer = func(_ context.Context, _ *stream.TimerEvent, state any) ([]stream.Output, any, error) {
			return nil, state, nil
		}
	}
	id, err := stream.Of(lib).Start(ctx, map[string]any{"servers": p.servers, "group": group}, spec)
	if err != nil {
		return tr, err
	}
	status := func() (*stream.Status, error) {
		st, err := stream.Of(lib).Status(ctx, id)
		if err == nil && st.State != stream.Running {
			err = fmt.Errorf("stream %s: %v", st.State, st.LastError)
		}
		return st, err
	}
	var first, last time.Time
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		st, err := status()
		if err != nil {
			return tr, err
		}
		if first.IsZero() && st.Processed > 0 {
			first = time.Now()
		}
		if st.Processed == int64(t.keys) {
			last = time.Now()
			break
		}
		if time.Now().After(deadline) {
			return tr, fmt.Errorf("processed %d of %d", st.Processed, t.keys)
		}
	}
	tr.inputSpan = last.Sub(first)
	// The last batch's silences are counted a moment after its inputs.
	for deadline := time.Now().Add(2 * time.Second); silence && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if st, err := status(); err != nil || st.Store.Timers >= int64(t.keys) {
			break
		}
	}
	held := heapAfterGC()
	st, err := status()
	if err != nil {
		return tr, err
	}
	if st.Store.Keys != int64(t.keys) || silence && (st.Store.Fired != 0 || st.Store.Timers != int64(t.keys)) {
		return tr, fmt.Errorf("store %+v: want %d keys, as many silences pending (the heap measured late: a longer -timer-silence?)", st.Store, t.keys)
	}
	if silence {
		var firstCall time.Time
		for deadline := last.Add(t.silence + 120*time.Second); ; time.Sleep(2 * time.Millisecond) {
			st, err := status()
			if err != nil {
				return tr, err
			}
			if firstCall.IsZero() && st.Store.Fired > 0 {
				firstCall = time.Now()
			}
			if st.Store.Fired == int64(t.keys) {
				tr.lag = time.Since(last) - t.silence
				tr.span = time.Since(firstCall)
				break
			}
			if time.Now().After(deadline) {
				return tr, fmt.Errorf("fired %d of %d", st.Store.Fired, t.keys)
			}
		}
	}
	if _, err := lib.Destroy(ctx, id); err != nil {
		return tr, err
	}
	lib.Close(ctx)
	tr.perKey = (float64(held) - float64(heapAfterGC())) / float64(t.keys)
	return tr, nil
}
