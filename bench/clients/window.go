package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The windowed-count workload (issue 20): a count per key per tumbling
// window of one second, exactly-once, over win.records inputs of
// win.keys keys (key i%keys) whose timestamps run evenly over win.windows
// windows, so that windows close all through the run. Each run is a new
// group and a new output topic, timed from starting the stream until the
// group's committed offsets reach every input (the watcher of the stream
// table); the windows whose end the stream time passed are written in
// the same transactions, so by then all but the last window's results
// are committed. The output is read back read_committed and checked:
// every closed window of every key once, with its count.
//
// The results are ("start" => ms "end" => ms "value" => count) in BPL
// text (the library's default result, under the "bpl" value
// serializer). The sides: raw kgo, the loop a franz-go program writes, a
// GroupTransactSession keeping a map of counts per window start and key,
// writing each window's results when the stream time passes its end,
// and, in the same transaction, a compacted changelog record per
// changed count and a tombstone per closed one (what the program needs to
// restore its counts after a crash, as the library's changelog does); the
// same loop without the changelog (state in memory only, lost on a crash:
// a lower bound); Runtime.Start with a Go aggregate; kafka-stream with a
// BPL aggregate through the evaluator.

// winParams is the windowed workload's shape.
type winParams struct {
	records, keys, windows int
	base                   int64 // the first input's timestamp, ms, a multiple of winSize
}

const (
	winSize  = 1000 // ms
	winTopic = "win-in"
	winStore = "counts"
)

// perWindow is the count every closed window of every key must have.
func (w *winParams) perWindow() int64 { return int64(w.records / w.windows / w.keys) }

// closedWindows is how many windows the run closes: all but the last.
func (w *winParams) closedWindows() int { return w.windows - 1 }

// ts is input i's timestamp.
func (w *winParams) ts(i int) int64 {
	return w.base + int64(i)*int64(w.windows*winSize)/int64(w.records)
}

func (w *winParams) check() error {
	if w.records <= 0 || w.keys <= 0 || w.windows < 2 || w.records%(w.windows*w.keys) != 0 {
		return fmt.Errorf("-window-records (%d) must be a multiple of -window-keys (%d) times -windows (%d, 2 or more)", w.records, w.keys, w.windows)
	}
	return nil
}

// fillWindowTopic writes the windowed workload's inputs to topic, once.
func fillWindowTopic(ctx context.Context, adm *kadm.Client, p *params, w *winParams, topic string) error {
	if err := createTopics(ctx, adm, topic); err != nil {
		return err
	}
	cl, err := kgo.NewClient(seeds(p), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 0, 10000)
	for i := range w.records {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i % w.keys)),
			Value: p.valueB, Timestamp: time.UnixMilli(w.ts(i))})
		if len(recs) == cap(recs) || i == w.records-1 {
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				return err
			}
			recs = recs[:0]
		}
	}
	return nil
}

// windowStreamer is one way of running the windowed count.
type windowStreamer interface {
	name() string
	start(ctx context.Context, p *params, w *winParams, out, group string) (stop func() error, err error)
}

var windowTitle = map[string]string{
	"kgo":       "raw kgo loop with a changelog (franz-go), absolute median",
	"kgo-mem":   "raw kgo loop, counts in memory only (no changelog)",
	"gowindow":  "Runtime.Start, Window Tumbling, a Go aggregate",
	"bplwindow": "kafka-stream \"window\", a BPL aggregate through the evaluator",
}

// runWindows runs the windowed table's rounds and prints it.
func runWindows(ctx context.Context, adm *kadm.Client, p *params, w *winParams, rounds int) error {
	if err := fillWindowTopic(ctx, adm, p, w, winTopic); err != nil {
		return fmt.Errorf("filling %s: %w", winTopic, err)
	}
	streamers := []windowStreamer{kgoWindow{changelog: true}, kgoWindow{}, goWindow{}, bplWindow{}}
	ws := []workload{{key: "window", title: "windowed count, exactly-once"}}
	res := newResults(namesOf(streamers), ws)
	res.titles = windowTitle
	fails := runSides("window", streamers, rounds, res, func(s windowStreamer, id string) (time.Duration, uint64, error) {
		return windowOnce(ctx, adm, p, w, s, "out-"+id, "g-"+id)
	})
	fmt.Printf("Windowed count: %d records (%d keys) from one partition, timestamps over %d tumbling windows of %d ms, %d results (%d closed windows x %d keys) to a new topic, exactly-once, a new group each run, %d rounds\n\n",
		w.records, w.keys, w.windows, winSize, w.closedWindows()*w.keys, w.closedWindows(), w.keys, rounds)
	res.print(os.Stdout, fails)
	fmt.Println()
	q := *p
	q.records = w.records
	res.printAllocs(os.Stdout, &q)
	if len(fails) > 0 {
		return fmt.Errorf("%d windowed workloads failed (see the table)", len(fails))
	}
	return nil
}

// windowOnce times one windowed run and checks what it wrote.
func windowOnce(ctx context.Context, adm *kadm.Client, p *params, w *winParams, s windowStreamer, out, group string) (time.Duration, uint64, error) {
	if err := createTopics(ctx, adm, out); err != nil {
		return 0, 0, err
	}
	defer adm.DeleteTopics(ctx, out, group+"-"+winStore+"-changelog")
	d, allocs, err := timeRun(ctx, s.name(), "window", func(ctx context.Context) (func() error, error) {
		return s.start(ctx, p, w, out, group)
	}, func(begin time.Time) error {
		return waitCommitted(ctx, adm, group, winTopic, int64(w.records), begin.Add(120*time.Second))
	})
	if err != nil {
		return 0, 0, err
	}
	return d, allocs, verifyWindows(ctx, p, w, out)
}

// verifyWindows reads out read_committed and checks it holds each closed
// window of each key once, with the count perWindow.
func verifyWindows(ctx context.Context, p *params, w *winParams, out string) error {
	cl, err := kgo.NewClient(seeds(p), kgo.ConsumeTopics(out), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return err
	}
	defer cl.Close()
	want := w.closedWindows() * w.keys
	seen := make(map[string]bool, want)
	for len(seen) < want {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("verifying %s after %d results: %w", out, len(seen), err)
		}
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			vs, err := value.Parse(string(r.Value))
			var l *value.List
			ok := len(vs) == 1
			if ok {
				l, ok = vs[0].(*value.List)
			}
			if err != nil || !ok {
				return fmt.Errorf("%s: result %q is not a list (%v)", out, r.Value, err)
			}
			start, end, count := intField(l, "start"), intField(l, "end"), intField(l, "value")
			k, kerr := strconv.Atoi(string(r.Key))
			id := fmt.Sprintf("%s@%d", r.Key, start)
			switch {
			case kerr != nil || k < 0 || k >= w.keys:
				return fmt.Errorf("%s: result key %q is no input key", out, r.Key)
			case start < w.base || start >= w.base+int64(w.closedWindows()*winSize) || (start-w.base)%winSize != 0 || end != start+winSize:
				return fmt.Errorf("%s: key %q: window [%d, %d) is not a closed one", out, r.Key, start, end)
			case count != w.perWindow():
				return fmt.Errorf("%s: key %q window %d: count %d, want %d", out, r.Key, start, count, w.perWindow())
			case seen[id]:
				return fmt.Errorf("%s: key %q window %d written twice", out, r.Key, start)
			}
			seen[id] = true
		}
	}
	// Nothing more: the open window's result is not written.
	pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if fs := cl.PollFetches(pctx); fs.NumRecords() > 0 {
		return fmt.Errorf("%s: %d results more than the %d closed windows'", out, fs.NumRecords(), want)
	}
	return nil
}

// kgoWindow is the windowed count as a franz-go program writes it.
type kgoWindow struct{ changelog bool }

func (k kgoWindow) name() string {
	if k.changelog {
		return "kgo"
	}
	return "kgo-mem"
}

func (k kgoWindow) start(ctx context.Context, p *params, w *winParams, out, group string) (func() error, error) {
	changelog := ""
	if k.changelog {
		changelog = group + "-" + winStore + "-changelog"
		adm, err := kgo.NewClient(seeds(p))
		if err != nil {
			return nil, err
		}
		compact := "compact"
		_, err = kadm.NewClient(adm).CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, changelog)
		adm.Close()
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return nil, err
		}
	}
	sess, err := kgo.NewGroupTransactSession(seeds(p), kgo.ConsumerGroup(group), kgo.ConsumeTopics(winTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.TransactionalID(group+"-txn"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0)) // as the library sends
	if err != nil {
		return nil, err
	}
	return startCountWindows(sess, out, changelog, nil, int64(w.records)), nil
}

// startCountWindows runs countWindows on a goroutine and returns what
// stops it: a wait (5 s at most) until it has counted records inputs,
// then its end, with its error.
func startCountWindows(sess *kgo.GroupTransactSession, out, changelog string, rekey func(*kgo.Record) *kgo.Record, records int64) func() error {
	ctx, cancel := context.WithCancel(context.Background())
	var processed atomic.Int64
	done := make(chan error, 1)
	go func() { done <- countWindows(ctx, sess, out, changelog, rekey, &processed) }()
	return func() error {
		for deadline := time.Now().Add(5 * time.Second); processed.Load() < records && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
		return <-done
	}
}

// winKey is a count's key in countWindows: the input key and the window.
type winKey struct {
	key   string
	start int64
}

// countWindows is the kgo loop: counts per window start and key, a
// window's results written when the stream time passes its end, and with
// a changelog topic, its changed counts (key, then the start, 8 bytes
// big-endian; the count a varint) and closed windows' tombstones. It
// stops on an aborted transaction rather than roll its map back. With
// rekey, a record rekey returns a repartition record for is produced so,
// in the same transaction, and only the others (the repartition topic's)
// are counted; processed counts those.
func countWindows(ctx context.Context, sess *kgo.GroupTransactSession, out, changelog string,
	rekey func(*kgo.Record) *kgo.Record, processed *atomic.Int64) error {
	defer sess.Close()
	counts := map[int64]map[string]int64{}
	streamTime := int64(-1 << 63)
	dirty := map[winKey]struct{}{}
	for {
		fs := sess.PollRecords(ctx, 500)
		if ctx.Err() != nil {
			return nil
		}
		if err := fs.Err0(); err != nil {
			return err
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return err
		}
		var failed atomic.Bool
		promise := func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(true)
			}
		}
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			if rekey != nil {
				if rr := rekey(r); rr != nil {
					sess.Produce(ctx, rr, promise)
					return
				}
			}
			n++
			t := r.Timestamp.UnixMilli()
			start := t - t%winSize // the inputs are after 1970
			if start+winSize <= streamTime {
				return // late: its window closed
			}
			streamTime = max(streamTime, t)
			m := counts[start]
			if m == nil {
				m = map[string]int64{}
				counts[start] = m
			}
			key := string(r.Key)
			m[key]++
			if changelog != "" {
				dirty[winKey{key, start}] = struct{}{}
			}
		})
		var starts []int64
		for start := range counts {
			if start+winSize <= streamTime {
				starts = append(starts, start)
			}
		}
		slices.Sort(starts)
		for _, start := range starts {
			for key, c := range counts[start] {
				v := fmt.Appendf(nil, `("start" => %d "end" => %d "value" => %d)`, start, start+winSize, c)
				sess.Produce(ctx, &kgo.Record{Topic: out, Key: []byte(key), Value: v}, promise)
				if changelog != "" {
					delete(dirty, winKey{key, start})
					sess.Produce(ctx, &kgo.Record{Topic: changelog, Key: changelogKey(key, start)}, promise)
				}
			}
			delete(counts, start)
		}
		for k := range dirty {
			v := binary.AppendVarint(nil, counts[k.start][k.key])
			sess.Produce(ctx, &kgo.Record{Topic: changelog, Key: changelogKey(k.key, k.start), Value: v}, promise)
		}
		clear(dirty)
		committed, err := sess.End(ctx, kgo.TransactionEndTry(!failed.Load()))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !committed {
			return errors.New("a transaction was aborted (this loop does not roll its counts back)")
		}
		processed.Add(int64(n))
	}
}

// intField is l's integer named name, or -1.
func intField(l *value.List, name string) int64 {
	v, _ := l.Get(name)
	if n, ok := v.(int64); ok {
		return n
	}
	return -1
}

func changelogKey(key string, start int64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, len(key)+8), key...), uint64(start))
}

// libWindowStop stops the library's stream id once its status shows every
// input processed and the closed windows' results written.
func libWindowStop(lib *kafkabpl.Library, id string, w *winParams, closeAll func()) func() error {
	return func() error {
		ctx := context.Background()
		defer closeAll()
		var st *stream.Status
		var err error
		want := int64(w.closedWindows() * w.keys)
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if st, err = stream.Of(lib).Status(ctx, id); err != nil {
				return err
			}
			if st.Processed >= int64(w.records) && st.Produced >= want || time.Now().After(deadline) {
				break
			}
		}
		if st.State != stream.Running {
			return fmt.Errorf("stream %s: %v", st.State, st.LastError)
		}
		if st.Processed != int64(w.records) || st.Produced != want {
			return fmt.Errorf("stream processed %d, produced %d; want %d, %d", st.Processed, st.Produced, w.records, want)
		}
		if st.Store == nil || st.Store.Windows != int64(w.keys) || st.Store.Late != 0 {
			return fmt.Errorf("store: %+v; want %d open windows (the last), none late", st.Store, w.keys)
		}
		_, err = lib.Destroy(ctx, id)
		return err
	}
}

// goWindow is Runtime.Start with a tumbling Window and a Go aggregate
// counting.
type goWindow struct{}

func (goWindow) name() string { return "gowindow" }

func (goWindow) start(ctx context.Context, p *params, w *winParams, out, group string) (func() error, error) {
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	count := func(_ context.Context, _ *kafkabpl.Record, acc any) (any, error) {
		n, _ := acc.(int64)
		return n + 1, nil
	}
	id, err := stream.Of(lib).Start(ctx, map[string]any{"servers": p.servers, "group": group, "value-serializer": "bpl"},
		stream.Spec{From: []string{winTopic}, To: out, Guarantee: stream.ExactlyOnce, Store: winStore,
			Window: &stream.Window{Kind: stream.Tumbling, Size: winSize * time.Millisecond, Aggregate: count}})
	if err != nil {
		lib.Close(ctx)
		return nil, err
	}
	return libWindowStop(lib, id, w, func() { lib.Close(context.Background()) }), nil
}

// bplWindow is kafka-stream with a "window" and a BPL aggregate, called
// by a script the evaluator runs.
type bplWindow struct{}

func (bplWindow) name() string { return "bplwindow" }

var windowScript = strings.ReplaceAll(`
(kafka-stream (list "servers" => servers "group" => group "value-serializer" => "bpl")
  "from" => from "to" => to "guarantee" => "exactly-once" "store" => store
  "window" => (list "type" => "tumbling" "size" => SIZE)
  "aggregate" => (function (in acc) (+ (if (= acc null) 0 acc) 1)))
`, "SIZE", strconv.Itoa(winSize))

func (bplWindow) start(ctx context.Context, p *params, w *winParams, out, group string) (func() error, error) {
	lib, id, closeAll, err := runStreamScript(ctx, "window.bpl", windowScript,
		map[string]any{"servers": p.servers, "group": group, "from": winTopic, "to": out, "store": winStore})
	if err != nil {
		return nil, err
	}
	return libWindowStop(lib, id, w, closeAll), nil
}
