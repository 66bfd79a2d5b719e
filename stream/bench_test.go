package stream

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/benchloop"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkStream compares a kafkabpl stream with an identity transform
// against the loop a franz-go program writes for the same work, under both
// guarantees, on the cluster of the other benchmarks. See BENCHMARKS.md.
//
// Each iteration streams benchStreamN records from bench-stream-in to a
// new output topic in a new group, and ends when the group has committed
// all of them, as seen by the same watcher (kadm committed offsets, every
// 2 ms) on both sides. Making the output topic, stopping the stream and
// checking the counts are not timed.

const benchStreamN = 100000 // records per stream iteration

const benchStreamIn = "bench-stream-in"

// benchValue is each input's value: 100 bytes, as the client's
// benchmarks send.
var benchValue = strings.Repeat("x", 100)

// fillStreamTopic puts benchStreamN keyed records in bench-stream-in (four
// partitions) on the cluster at servers.
func fillStreamTopic(servers string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 4, 1, nil, benchStreamIn); err != nil {
		return err
	}
	recs := make([]*kgo.Record, benchStreamN)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: benchStreamIn, Key: []byte(fmt.Sprint(i % 100)), Value: []byte(benchValue)}
	}
	return cl.ProduceSync(context.Background(), recs...).FirstErr()
}

// identity is a Go transform that writes each input's key and value to the
// stream's output topic, as a program would write it with the Go API.
func identity(_ context.Context, in *kafkabpl.Record) ([]Output, error) {
	return []Output{{Message: kafkabpl.Message{Key: in.Key(), Value: in.Value()}}}, nil
}

// identityBytes is identity on the record's bytes, not decoding them: the
// library's own cost, without the transform's.
func identityBytes(_ context.Context, in *kafkabpl.Record) ([]Output, error) {
	return []Output{{Message: kafkabpl.Message{Key: in.KeyBytes(), Value: in.ValueBytes()}}}, nil
}

// streamRunner starts one side's stream from bench-stream-in to out in
// group and returns a function that stops it (untimed) and returns how
// many records it says it produced, or an error.
type streamRunner func(ctx context.Context, servers, group, out string) (stop func() (int64, error), err error)

// benchAdmin returns an admin client of servers, closed when b ends.
func benchAdmin(b *testing.B, servers string) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func BenchmarkStream(b *testing.B) {
	servers := newCluster(b).Servers()
	if err := fillStreamTopic(servers); err != nil {
		b.Fatal(err)
	}
	adm := benchAdmin(b, servers)

	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce} {
		b.Run("kafkabpl/"+g.String(), func(b *testing.B) {
			runStreamBench(b, adm, servers, benchStreamIn, kafkabplStream(g, identity))
		})
		b.Run("kafkabpl-bytes/"+g.String(), func(b *testing.B) {
			runStreamBench(b, adm, servers, benchStreamIn, kafkabplStream(g, identityBytes))
		})
		b.Run("kgo/"+g.String(), func(b *testing.B) {
			if g == ExactlyOnce {
				runStreamBench(b, adm, servers, benchStreamIn, kgoExactlyOnce)
			} else {
				runStreamBench(b, adm, servers, benchStreamIn, kgoAtLeastOnce)
			}
		})
	}
}

// runStreamBench times start's stream from in (benchStreamN records) as
// BenchmarkStream says.
func runStreamBench(b *testing.B, adm *kadm.Client, servers, in string, start streamRunner) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		id := fmt.Sprintf("%d-%d", time.Now().UnixNano(), i)
		group, out := "bench-stream-"+id, "bench-stream-out-"+id
		if _, err := adm.CreateTopic(ctx, 4, 1, nil, out); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		stop, err := start(ctx, servers, group, out)
		if err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			n, err := benchloop.Committed(ctx, adm, group, in)
			if err != nil {
				b.Fatal(err)
			}
			if n == benchStreamN {
				break
			}
			if n > benchStreamN || time.Now().After(deadline) {
				stop()
				b.Fatalf("group %s committed %d of %d", group, n, benchStreamN)
			}
			time.Sleep(2 * time.Millisecond)
		}

		b.StopTimer()
		produced, err := stop()
		if err != nil {
			b.Fatal(err)
		}
		written, err := written(ctx, adm, out)
		if err != nil {
			b.Fatal(err)
		}
		// Exactly-once output offsets include one commit marker per
		// partition per transaction, so only a lower bound there.
		if produced != benchStreamN || written < benchStreamN {
			b.Fatalf("produced %d, %d offsets in %s; want %d", produced, written, out, benchStreamN)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*benchStreamN)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchStreamN), "ns/record")
}

// written is the sum of out's end offsets.
func written(ctx context.Context, adm *kadm.Client, out string) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, out)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, o := range ends[out] {
		if o.Err != nil {
			return 0, o.Err
		}
		n += o.Offset
	}
	return n, nil
}

// kafkabplStream runs Runtime.Start with transform.
func kafkabplStream(g Guarantee, transform Transform) streamRunner {
	return func(ctx context.Context, servers, group, out string) (func() (int64, error), error) {
		return kafkabplStreamSpec(ctx, servers, group, Spec{From: []string{benchStreamIn}, To: out, Transform: transform, Guarantee: g})
	}
}

// kgoLoop runs loop on a goroutine until stop is called, and returns stop,
// which waits for it and returns its count of committed outputs.
func kgoLoop(loop func(ctx context.Context, produced *atomic.Int64) error) func() (int64, error) {
	ctx, cancel := context.WithCancel(context.Background())
	var produced atomic.Int64
	done := make(chan error, 1)
	go func() { done <- loop(ctx, &produced) }()
	return func() (int64, error) {
		// The loop counts a batch when End or the commit returns, a
		// moment after the watcher saw it committed.
		for deadline := time.Now().Add(5 * time.Second); produced.Load() < benchStreamN && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
		err := <-done
		return produced.Load(), err
	}
}

// kgoExactlyOnce is the loop of franz-go's GroupTransactSession: poll,
// begin, produce each record to out, end with a commit if all went well.
func kgoExactlyOnce(_ context.Context, servers, group, out string) (func() (int64, error), error) {
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(strings.Split(servers, ",")...),
		kgo.TransactionalID(group+"-txn"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(benchStreamIn),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), // as the library's default
	)
	if err != nil {
		return nil, err
	}
	return kgoLoop(func(ctx context.Context, produced *atomic.Int64) error {
		return benchloop.Transact(ctx, sess, out, produced)
	}), nil
}

// kgoAtLeastOnce is the at-least-once loop of a franz-go program: poll
// (rebalances held), produce each record to out, flush, commit what was
// polled, allow rebalances.
func kgoAtLeastOnce(_ context.Context, servers, group, out string) (func() (int64, error), error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(servers, ",")...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(benchStreamIn),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ProducerBatchCompression(kgo.NoCompression()), // as the library's default
	)
	if err != nil {
		return nil, err
	}
	return kgoLoop(func(ctx context.Context, produced *atomic.Int64) error {
		return benchloop.Commit(ctx, cl, out, produced)
	}), nil
}
