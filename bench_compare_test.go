package kafkabpl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The benchmarks compare the library with raw kgo doing the same work on
// the same in-process cluster (one per benchmark function, one broker, four
// partitions per topic), in one run, so that their ratio means something on
// a noisy machine: through the Go API (kafkabpl), through the BPL functions
// (kafkabpl-bpl, package functions, which an external test may import), and
// with kgo alone. See BENCHMARKS.md for the commands.

// The workload, shared with the package's own benchmarks (bench_test.go,
// export_test.go).
const (
	benchBatch     = kafkabpl.BenchBatch
	benchValueSize = kafkabpl.BenchValueSize
	benchDrain     = 100000 // records per Poll drain
)

var benchValue, benchKeys = kafkabpl.BenchValue, kafkabpl.BenchKeys

func BenchmarkSend(b *testing.B) {
	servers := testkit.NewCluster(b, embedded.Partitions(4), embedded.Topics("bench-send")).Servers()
	ctx := context.Background()

	b.Run("kafkabpl", func(b *testing.B) {
		lib, p := benchProducer(b, servers)
		msgs := make([]kafkabpl.Message, benchBatch)
		for i := range msgs {
			msgs[i] = kafkabpl.Message{Key: benchKeys[i%len(benchKeys)], Value: benchValue}
		}
		b.SetBytes(benchBatch * benchValueSize)
		b.ReportAllocs()
		for b.Loop() {
			if n, err := lib.Send(ctx, p, []string{"bench-send"}, msgs); err != nil || n != benchBatch {
				b.Fatal(n, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/msg")
	})

	// The same through the BPL function kafka-send, with the messages as
	// a script holds them: a list of values named by their keys.
	b.Run("kafkabpl-bpl", func(b *testing.B) {
		lib, p := benchProducer(b, servers)
		send := functions.Table(lib)["kafka-send"]
		msgs := &value.List{}
		for i := range benchBatch {
			msgs.AppendNamed(benchKeys[i%len(benchKeys)], any(benchValue))
		}
		args := value.NewList(p, "bench-send", msgs)
		b.SetBytes(benchBatch * benchValueSize)
		b.ReportAllocs()
		for b.Loop() {
			if n, err := send(ctx, args); err != nil || n != int64(benchBatch) {
				b.Fatal(n, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/msg")
	})

	b.Run("kgo", func(b *testing.B) {
		// Uncompressed and without linger, as the library sends by
		// default (kgo's own defaults are snappy and 10 ms).
		cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...),
			kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		value := []byte(benchValue)
		keys := make([][]byte, len(benchKeys))
		for i, k := range benchKeys {
			keys[i] = []byte(k)
		}
		b.SetBytes(benchBatch * benchValueSize)
		b.ReportAllocs()
		for b.Loop() {
			// Records are built per call, as a program would from its data,
			// in one slice and sharing one value: kgo at its cheapest.
			recs := make([]kgo.Record, benchBatch)
			ptrs := make([]*kgo.Record, benchBatch)
			for i := range recs {
				recs[i] = kgo.Record{Topic: "bench-send", Key: keys[i%len(keys)], Value: value}
				ptrs[i] = &recs[i]
			}
			if err := cl.ProduceSync(ctx, ptrs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/msg")
	})
}

// BenchmarkSendOne is the one-record send: a call per message, each
// waiting for its acknowledgement, as a script that sends events one by
// one does. What a call costs beyond the round trip shows here.
func BenchmarkSendOne(b *testing.B) {
	servers := testkit.NewCluster(b, embedded.Partitions(1), embedded.Topics("bench-one")).Servers()
	ctx := context.Background()

	b.Run("kafkabpl", func(b *testing.B) {
		lib, p := benchProducer(b, servers)
		topics := []string{"bench-one"}
		msgs := []kafkabpl.Message{{Key: benchKeys[0], Value: benchValue}}
		b.ReportAllocs()
		for b.Loop() {
			if n, err := lib.Send(ctx, p, topics, msgs); err != nil || n != 1 {
				b.Fatal(n, err)
			}
		}
	})

	b.Run("kafkabpl-bpl", func(b *testing.B) {
		lib, p := benchProducer(b, servers)
		send := functions.Table(lib)["kafka-send"]
		args := value.NewList(p, "bench-one", (&value.List{}).AppendNamed(benchKeys[0], benchValue))
		b.ReportAllocs()
		for b.Loop() {
			if n, err := send(ctx, args); err != nil || n != int64(1) {
				b.Fatal(n, err)
			}
		}
	})

	b.Run("kgo", func(b *testing.B) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...),
			kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		key, value := []byte(benchKeys[0]), []byte(benchValue)
		b.ReportAllocs()
		for b.Loop() {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "bench-one", Key: key, Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchProducer returns a library, closed when b ends, with a producer on
// servers.
func benchProducer(b *testing.B, servers string) (*kafkabpl.Library, string) {
	ctx := context.Background()
	lib := kafkabpl.New()
	b.Cleanup(func() { lib.Close(ctx) })
	p, err := lib.Create(ctx, kafkabpl.Producer, servers)
	if err != nil {
		b.Fatal(err)
	}
	return lib, p
}

// fillDrainTopic puts benchDrain records in bench-drain.
func fillDrainTopic(servers string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, benchDrain)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "bench-drain", Key: []byte(fmt.Sprint(i % 100)), Value: []byte(benchValue)}
	}
	return cl.ProduceSync(context.Background(), recs...).FirstErr()
}

func BenchmarkPoll(b *testing.B) {
	servers := testkit.NewCluster(b, embedded.Partitions(4), embedded.Topics("bench-drain")).Servers()
	if err := fillDrainTopic(servers); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	group, size := 0, 0
	nextGroup := func() string { group++; return fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), group) }

	// Each iteration drains the topic with a new consumer group, so both
	// sides pay for joining the group and fetching every record.
	b.Run("kafkabpl", func(b *testing.B) {
		lib := kafkabpl.New()
		defer lib.Close(ctx)
		b.SetBytes(benchDrain * benchValueSize)
		b.ReportAllocs()
		for b.Loop() {
			c, err := lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": nextGroup(), "auto-offset-reset": "earliest", "topics": "bench-drain"})
			if err != nil {
				b.Fatal(err)
			}
			for n := 0; n < benchDrain; {
				res, err := lib.Poll(ctx, c, 5*time.Second)
				if err != nil || res.Len() == 0 {
					b.Fatal(n, err)
				}
				for _, t := range res.Topics { // read every value, as a program would
					for i := range t.Records {
						size += len(t.Records[i].ValueBytes())
					}
				}
				n += res.Len()
			}
			lib.Destroy(ctx, c)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchDrain), "ns/msg")
	})

	// The same drain through the BPL function, which builds a BPL list of
	// every message: the cost a script pays, shown beside the other two.
	b.Run("kafkabpl-bpl", func(b *testing.B) {
		lib := kafkabpl.New()
		defer lib.Close(ctx)
		poll := functions.Table(lib)["kafka-poll"]
		b.SetBytes(benchDrain * benchValueSize)
		b.ReportAllocs()
		for b.Loop() {
			c, err := lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": nextGroup(), "auto-offset-reset": "earliest", "topics": "bench-drain"})
			if err != nil {
				b.Fatal(err)
			}
			args := value.NewList(c, int64(5000))
			for n := 0; n < benchDrain; {
				res, err := poll(ctx, args)
				if err != nil {
					b.Fatal(n, err)
				}
				msgs := res.(*value.List).At(0).(*value.List)
				if msgs.Len() == 0 {
					b.Fatal(n, "no messages")
				}
				for i := range msgs.Len() { // read every value, as the other rows do
					size += len(msgs.At(i).(string))
				}
				n += msgs.Len()
			}
			lib.Destroy(ctx, c)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchDrain), "ns/msg")
	})

	b.Run("kgo", func(b *testing.B) {
		b.SetBytes(benchDrain * benchValueSize)
		b.ReportAllocs()
		for b.Loop() {
			cl, err := kgo.NewClient(
				kgo.SeedBrokers(strings.Split(servers, ",")...),
				kgo.ConsumerGroup(nextGroup()),
				kgo.ConsumeTopics("bench-drain"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			)
			if err != nil {
				b.Fatal(err)
			}
			for n := 0; n < benchDrain; {
				pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				fs := cl.PollRecords(pctx, 500)
				cancel()
				if fs.NumRecords() == 0 {
					b.Fatal(n, fs.Errors())
				}
				fs.EachRecord(func(r *kgo.Record) { size += len(r.Value) })
				n += fs.NumRecords()
			}
			cl.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchDrain), "ns/msg")
	})
	if size == 0 {
		b.Fatal("no values read")
	}
}
