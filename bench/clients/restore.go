package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The restore workload (issue 20): a per-key store of restoreKeys keys,
// each an int64 count, in its compacted changelog of one partition,
// written once with kgo in the store's state encoding (the version byte
// 1, the integer tag 3, the zig-zag varint: internal/store/codec.go). Each
// round starts a stream of that store's group, on a new input topic of
// checkKeys inputs, and is timed from Runtime.Start until its
// StoreStatus shows the partition restored (Restoring 0, Keys all of
// them). The inputs are then processed, untimed: the Update checks that
// each key's state is the count written for it, so a restore that lost
// or garbled states fails the round. Against it, kgo reads the same
// changelog partition read_committed, from its start to its end, into a
// map of key to value, sized by the end offset: what a franz-go program
// restoring its state does.

const (
	restoreGroup = "g-restore"
	restoreStore = "keys"
	checkKeys    = 1000 // inputs checked after each restore
)

var restoreChangelog = restoreGroup + "-" + restoreStore + "-changelog"

// restoreState is key i's state: the count i, encoded.
func restoreState(i int) []byte {
	return binary.AppendVarint([]byte{1, 3}, int64(i))
}

// fillChangelog writes the changelog, once.
func fillChangelog(ctx context.Context, adm *kadm.Client, p *params, keys int) error {
	compact := "compact"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, restoreChangelog); err != nil {
		return err
	}
	cl, err := kgo.NewClient(seeds(p), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var wg sync.WaitGroup
	var first atomic.Value
	for i := range keys {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: restoreChangelog, Key: []byte(strconv.Itoa(i)), Value: restoreState(i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				first.CompareAndSwap(nil, err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

var restoreTitle = map[string]string{
	"kgo":     "raw kgo reading the changelog into a map, absolute median",
	"restore": "Runtime.Start restoring its store, to StoreStatus Restoring 0",
}

// runRestores runs the restore table's rounds and prints it.
func runRestores(ctx context.Context, adm *kadm.Client, p *params, keys, rounds int) error {
	if err := fillChangelog(ctx, adm, p, keys); err != nil {
		return fmt.Errorf("filling %s: %w", restoreChangelog, err)
	}
	ws := []workload{{key: "restore", title: fmt.Sprintf("restore %d keys", keys)}}
	res := newResults([]string{"kgo", "restore"}, ws)
	res.titles = restoreTitle
	fails := map[string]string{}
	var own []time.Duration     // the library's restore as it logs it
	for r := range rounds + 1 { // round 0 warms up, untimed
		for si := range 2 {
			name := []string{"kgo", "restore"}[(si+r)%2]
			if _, failed := fails[name+"/restore"]; failed {
				continue
			}
			runtime.GC()
			m0 := mallocs()
			var d, logged time.Duration
			var err error
			pprof.Do(ctx, pprof.Labels("client", name, "workload", "restore"), func(ctx context.Context) {
				if name == "kgo" {
					d, err = kgoRestore(ctx, p, keys)
				} else {
					d, logged, err = libRestore(ctx, adm, p, keys, r)
				}
			})
			allocs := mallocs() - m0
			if r == 0 {
				if err != nil {
					fmt.Fprintf(os.Stderr, "warm-up: %s restore: %v\n", name, err)
				}
				continue
			}
			if err != nil {
				fails[name+"/restore"] = err.Error()
				fmt.Fprintf(os.Stderr, "round %d: %s restore: FAILED: %v\n", r, name, err)
				continue
			}
			res.add("restore", name, r, d, allocs)
			if name == "restore" {
				own = append(own, logged)
			}
			fmt.Fprintf(os.Stderr, "round %d: %-8s restore %v (%.0f keys/s)\n", r, name, d.Round(time.Millisecond), float64(keys)/d.Seconds())
		}
	}
	fmt.Printf("Restore: a per-key store of %d keys (int64 states) from its changelog of one partition, read_committed, %d rounds\n\n", keys, rounds)
	res.print(os.Stdout, fails)
	fmt.Println()
	q := *p
	q.records = keys
	res.printAllocs(os.Stdout, &q)
	fmt.Println()
	fmt.Println("Keys per second, median [min–max] over the rounds:")
	fmt.Println()
	for _, name := range []string{"kgo", "restore"} {
		var rates []float64
		for _, d := range res.d["restore"][name] {
			rates = append(rates, float64(keys)/d.Seconds())
		}
		if len(rates) > 0 {
			m := median(rates)
			fmt.Printf("- %s: %.0f [%.0f–%.0f]\n", restoreTitle[name], m, rates[0], rates[len(rates)-1])
		}
	}
	if len(own) > 0 {
		m := median(own)
		fmt.Printf("- the library's restore alone, as its log line times it (the group join and changelog check left out): %v [%v–%v], %.0f keys/s\n",
			m.Round(time.Millisecond), own[0].Round(time.Millisecond), own[len(own)-1].Round(time.Millisecond), float64(keys)/m.Seconds())
	}
	if len(fails) > 0 {
		return fmt.Errorf("%d restore workloads failed (see the table)", len(fails))
	}
	return nil
}

// kgoRestore reads the changelog into a map and times it, client
// creation included.
func kgoRestore(ctx context.Context, p *params, keys int) (time.Duration, error) {
	start := time.Now()
	// Kept control records (the library's rounds leave transaction
	// markers) move the position to the end offset as the markers do.
	cl, err := kgo.NewClient(seeds(p), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{restoreChangelog: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, restoreChangelog)
	if err != nil {
		return 0, err
	}
	end, _ := ends.Lookup(restoreChangelog, 0)
	state := make(map[string][]byte, end.Offset) // sized as the library sizes its store
	for next := int64(0); next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return 0, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			if r.Attrs.IsControl() {
				return
			}
			if r.Value == nil {
				delete(state, string(r.Key))
			} else {
				state[string(r.Key)] = bytes.Clone(r.Value)
			}
		})
	}
	d := time.Since(start)
	if len(state) != keys {
		return 0, fmt.Errorf("kgo read %d keys, want %d", len(state), keys)
	}
	return d, nil
}

// restoredIn reads the duration of the library's log line "store ...
// restored: ... in 1.234s".
var restoredIn = regexp.MustCompile(`restored: .* in (\S+)\n`)

// syncBuffer is a log output the stream writes on its goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(b)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// libRestore starts the store's stream on a new input topic of checkKeys
// inputs, times it to the end of its restore, then checks the states the
// inputs find.
func libRestore(ctx context.Context, adm *kadm.Client, p *params, keys, round int) (time.Duration, time.Duration, error) {
	in := fmt.Sprintf("restore-in-%d", round)
	if err := createTopics(ctx, adm, in); err != nil {
		return 0, 0, err
	}
	defer adm.DeleteTopics(ctx, in)
	if err := fillCheckInputs(ctx, p, in, keys); err != nil {
		return 0, 0, err
	}
	var checked, wrong atomic.Int64
	var firstWrong atomic.Value
	update := func(_ context.Context, r *kafkabpl.Record, state any) ([]stream.Output, any, error) {
		i, _ := strconv.Atoi(string(r.KeyBytes()))
		if n, ok := state.(int64); !ok || n != int64(i) {
			wrong.Add(1)
			firstWrong.CompareAndSwap(nil, fmt.Sprintf("key %q: state %v (%T), want %d", r.KeyBytes(), state, state, i))
		}
		checked.Add(1)
		return nil, state, nil // the same state: the changelog gets the same count again
	}
	lib := kafkabpl.New()
	var log syncBuffer
	lib.SetLogOutput(&log)
	defer lib.Close(context.Background())
	runtime.GC()
	start := time.Now()
	id, err := stream.Of(lib).Start(ctx, map[string]any{"servers": p.servers, "group": restoreGroup},
		stream.Spec{From: []string{in}, To: in + "-out", Guarantee: stream.ExactlyOnce, Store: restoreStore, Update: update})
	if err != nil {
		return 0, 0, err
	}
	var d time.Duration
	for deadline := start.Add(60 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		st, err := stream.Of(lib).Status(ctx, id)
		if err != nil {
			return 0, 0, err
		}
		if s := st.Store; s != nil && s.Partitions == 1 && s.Restoring == 0 {
			d = time.Since(start)
			if s.Keys != int64(keys) {
				return 0, 0, fmt.Errorf("restored %d keys, want %d", s.Keys, keys)
			}
			break
		}
		if st.State != stream.Running || time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("stream %s, store %+v: %v", st.State, st.Store, st.LastError)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); checked.Load() < checkKeys; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("the restored stream checked %d of its %d inputs", checked.Load(), checkKeys)
		}
	}
	if n := wrong.Load(); n > 0 {
		return 0, 0, fmt.Errorf("%d of %d restored states wrong, the first: %v", n, checkKeys, firstWrong.Load())
	}
	if _, err := lib.Destroy(ctx, id); err != nil {
		return 0, 0, err
	}
	m := restoredIn.FindStringSubmatch(log.String())
	if m == nil {
		return 0, 0, fmt.Errorf("no restore line in the stream's log: %q", log.String())
	}
	logged, err := time.ParseDuration(m[1])
	if err != nil {
		return 0, 0, fmt.Errorf("the restore line's time %q: %w", m[1], err)
	}
	return d, logged, nil
}

// fillCheckInputs writes checkKeys inputs keyed by keys spread over the
// store's keys.
func fillCheckInputs(ctx context.Context, p *params, topic string, keys int) error {
	cl, err := kgo.NewClient(seeds(p))
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, checkKeys)
	for j := range recs {
		recs[j] = &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(j * (keys / checkKeys))), Value: p.valueB}
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}
