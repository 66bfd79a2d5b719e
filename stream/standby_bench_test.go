package stream

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/benchloop"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Benchmarks of standbys (issue 35); see BENCHMARKS.md.

// benchStandbyKeys is the keys of each store partition in
// BenchmarkStandbyTakeover: the moved partition's. KAFKABPL_STANDBY_KEYS
// sets it (the default, a million, takes some 20 s of setup per round).
func benchStandbyKeys() int {
	if n, err := strconv.Atoi(os.Getenv("KAFKABPL_STANDBY_KEYS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// fillChangelog makes topic, compacted, with two partitions of keys keys
// each, every state the count 1.
func fillChangelog(ctx context.Context, cl *kgo.Client, topic string, keys int) error {
	compact := "compact"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": &compact}, topic); err != nil {
		return err
	}
	raw, err := store.Encode(nil, int64(1))
	if err != nil {
		return err
	}
	const chunk = 100_000
	for p := range int32(2) {
		for from := 0; from < keys; from += chunk {
			recs := make([]*kgo.Record, 0, chunk)
			for i := from; i < min(from+chunk, keys); i++ {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "k%d-%d", p, i), Value: raw})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchmarkStandbyTakeover times a takeover: a counting stream of two
// members, whose store partitions hold benchStandbyKeys keys each, loses
// one member (Destroy, which leaves the group), and the other takes its
// partition over; timed from the destroy's call until the survivor has
// processed an input of each partition sent right after it (the moved
// partition's is its first output after the takeover). "standby": with
// "standbys" 1, the survivor's copy of the moved partition was caught up;
// "none": it restores the partition from its changelog. Setting up each
// round (both members' restores, the copy catching up) is not timed.
func BenchmarkStandbyTakeover(b *testing.B) {
	servers := newCluster(b).Servers()
	keys := benchStandbyKeys()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "in"); err != nil {
		b.Fatal(err)
	}
	for _, standbys := range []int{1, 0} {
		name, group := "standby", "bench-standby"
		if standbys == 0 {
			name, group = "none", "bench-none"
		}
		if err := fillChangelog(ctx, cl, group+"-s-changelog", keys); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				runTakeover(b, servers, group, standbys)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/takeover")
			b.ReportMetric(float64(keys), "keys")
		})
	}
}

// runTakeover runs one round of BenchmarkStandbyTakeover, the timer
// stopped; it starts the timer at the kill and stops it at the outputs.
func runTakeover(b *testing.B, servers, group string, standbys int) {
	ctx := context.Background()
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	if os.Getenv("DBG") != "" {
		lib.SetLogOutput(dbgLog{})
	}
	defer lib.Close(ctx)
	cfg := map[string]any{"servers": servers, "group": group}
	spec := Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s", Standbys: standbys}
	victim := must[string](b)(Of(lib).Start(ctx, cfg, spec))
	waitBench(b, lib, victim, func(ss *StoreStatus) bool { return ss.Partitions == 2 && ss.Restoring == 0 })
	survivor := must[string](b)(Of(lib).Start(ctx, cfg, spec))
	waitBench(b, lib, survivor, func(ss *StoreStatus) bool {
		return ss.Partitions == 1 && ss.Restoring == 0 &&
			(standbys == 0 || len(ss.Standbys) == 1 && ss.Standbys[0].Position > 0 && ss.Standbys[0].Lag == 0)
	})
	waitBench(b, lib, victim, func(ss *StoreStatus) bool { // its own copy too: no catching up in the way of its destroy
		return standbys == 0 || len(ss.Standbys) == 1 && ss.Standbys[0].Position > 0 && ss.Standbys[0].Lag == 0
	})
	hs := streamOf(b, lib, survivor)
	before := hs.totals.processed.Load()
	p := must[string](b)(lib.Create(ctx, kafkabpl.Producer, servers))
	zero, one := int32(0), int32(1)

	b.StartTimer()
	t0 := time.Now()
	if _, err := lib.Destroy(ctx, victim); err != nil {
		b.Fatal(err)
	}
	if os.Getenv("DBG") != "" {
		fmt.Fprintf(os.Stderr, "%s destroy %v\n", time.Now().Format("05.000"), time.Since(t0))
	}
	if _, err := lib.Send(ctx, p, []string{"in"}, []kafkabpl.Message{{Key: "probe", Value: "v", Partition: &zero}, {Key: "probe", Value: "v", Partition: &one}}); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); hs.totals.processed.Load() < before+2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the moved partition's input was never processed")
		}
	}
	b.StopTimer()
	st := must[*Status](b)(Of(lib).Status(ctx, survivor))
	if standbys > 0 && st.Store.Takeovers != 1 {
		b.Fatalf("takeovers %d, want 1", st.Store.Takeovers)
	}
}

// waitBench waits until stream id's store status satisfies ok.
func waitBench(b *testing.B, lib *kafkabpl.Library, id string, ok func(*StoreStatus) bool) {
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		st := must[*Status](b)(Of(lib).Status(context.Background(), id))
		if ok(st.Store) {
			return
		}
		if st.State != Running || time.Now().After(deadline) {
			b.Fatalf("stream %s: %+v %+v", id, st, st.Store)
		}
	}
}

// benchStandbyInputs is the inputs of BenchmarkStandbyThroughput.
const benchStandbyInputs = 200_000

// BenchmarkStandbyThroughput times a counting stream of two members over
// benchStandbyInputs inputs (10,000 keys, two partitions), from the
// members' start until their group has committed every input, with
// "standbys" 0 ("none") and 1 ("standby": each member also follows the
// other's changelog): the extra cost of a standby to the stream.
func BenchmarkStandbyThroughput(b *testing.B) {
	servers := newCluster(b).Servers()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	const in = "bench-standby-in"
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, in); err != nil {
		b.Fatal(err)
	}
	recs := make([]*kgo.Record, benchStandbyInputs)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: in, Key: fmt.Appendf(nil, "%d", i%10_000), Value: []byte("v")}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	for _, standbys := range []int{0, 1} {
		name := "none"
		if standbys > 0 {
			name = "standby"
		}
		b.Run(name, func(b *testing.B) {
			for i := range b.N {
				b.StopTimer()
				lib := kafkabpl.New()
				lib.SetLogOutput(io.Discard)
				group := fmt.Sprintf("bench-sbt-%s-%d-%d", name, time.Now().UnixNano(), i)
				cfg := map[string]any{"servers": servers, "group": group}
				spec := Spec{From: []string{in}, To: "bench-standby-out", Update: countUpdate, Store: "s", Standbys: standbys}
				b.StartTimer()
				must[string](b)(Of(lib).Start(ctx, cfg, spec))
				must[string](b)(Of(lib).Start(ctx, cfg, spec))
				for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
					n, err := benchloop.Committed(ctx, adm, group, in)
					if err != nil {
						b.Fatal(err)
					}
					if n == benchStandbyInputs {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("group %s committed %d of %d", group, n, benchStandbyInputs)
					}
				}
				b.StopTimer()
				lib.Close(ctx)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N*benchStandbyInputs)/b.Elapsed().Seconds(), "inputs/s")
		})
	}
}

type dbgLog struct{}

func (dbgLog) Write(p []byte) (int, error) {
	fmt.Fprintf(os.Stderr, "%s %s", time.Now().Format("05.000"), p)
	return len(p), nil
}
