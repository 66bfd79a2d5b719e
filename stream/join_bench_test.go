package stream

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/internal/benchloop"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkStreamJoin compares a stream–table join (issue 34) through
// Runtime.Start (Tables, Join, a Go transform) with the loop a franz-go
// program writes for it (the table into a map, then a
// GroupTransactSession looking each input up), exactly-once, on the
// cluster of the other benchmarks. Each iteration joins benchStreamN
// records of bench-join-in (benchJoinKeys keys, four partitions) with
// bench-join-table (benchJoinKeys keys, compacted) into a new output
// topic in a new group, the table's read included, and ends when the
// group has committed every input (runStreamBench's watcher);
// "kafkabpl-partitioned" is the join with the table partitioned. Its
// allocations per record are exact where bench/clients' are the
// process's; bench/clients has the sizes and a BPL side. See
// BENCHMARKS.md.

const (
	benchJoinKeys  = 10000
	benchJoinIn    = "bench-join-in"
	benchJoinTable = "bench-join-table"
)

// fillJoinTopics writes the table (key k, value "t<k>") and the inputs
// (key i % benchJoinKeys) on the cluster at servers.
func fillJoinTopics(servers string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(servers, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	compact := "compact"
	if _, err := adm.CreateTopic(context.Background(), 4, 1, map[string]*string{"cleanup.policy": &compact}, benchJoinTable); err != nil {
		return err
	}
	if _, err := adm.CreateTopic(context.Background(), 4, 1, nil, benchJoinIn); err != nil {
		return err
	}
	recs := make([]*kgo.Record, 0, benchJoinKeys+benchStreamN)
	for k := range benchJoinKeys {
		recs = append(recs, &kgo.Record{Topic: benchJoinTable, Key: []byte(fmt.Sprint(k)), Value: []byte(fmt.Sprint("t", k))})
	}
	for i := range benchStreamN {
		recs = append(recs, &kgo.Record{Topic: benchJoinIn, Key: []byte(fmt.Sprint(i % benchJoinKeys)), Value: []byte(benchValue)})
	}
	return cl.ProduceSync(context.Background(), recs...).FirstErr()
}

// joinTransform is the Go transform: the input's key, "<joined>|<value>".
func joinTransform(_ context.Context, in *kafkabpl.Record) ([]Output, error) {
	t, _ := in.Joined()
	s, _ := t.(string)
	v, _ := in.Value().(string)
	return []Output{{Message: kafkabpl.Message{Key: in.Key(), Value: s + "|" + v}}}, nil
}

func BenchmarkStreamJoin(b *testing.B) {
	servers := newCluster(b).Servers()
	if err := fillJoinTopics(servers); err != nil {
		b.Fatal(err)
	}
	adm := benchAdmin(b, servers)
	b.Run("kafkabpl", func(b *testing.B) {
		runStreamBench(b, adm, servers, benchJoinIn, kafkabplJoin)
	})
	b.Run("kgo", func(b *testing.B) {
		runStreamBench(b, adm, servers, benchJoinIn, kgoJoin)
	})
	b.Run("kafkabpl-partitioned", func(b *testing.B) {
		runStreamBench(b, adm, servers, benchJoinIn, kafkabplPartitionedJoin)
	})
}

// kafkabplPartitionedJoin is kafkabplJoin with the table partitioned: the
// topics are co-partitioned (four partitions each, keyed alike).
func kafkabplPartitionedJoin(ctx context.Context, servers, group, out string) (func() (int64, error), error) {
	return kafkabplStreamSpec(ctx, servers, group, Spec{From: []string{benchJoinIn}, To: out, Transform: joinTransform,
		Tables: []Table{{Name: "t", Topic: benchJoinTable, Partitioned: true}}, Join: &Join{Table: "t"}})
}

// kafkabplJoin runs Runtime.Start joining bench-join-in with the table.
func kafkabplJoin(ctx context.Context, servers, group, out string) (func() (int64, error), error) {
	return kafkabplStreamSpec(ctx, servers, group, Spec{From: []string{benchJoinIn}, To: out, Transform: joinTransform,
		Tables: []Table{{Name: "t", Topic: benchJoinTable}}, Join: &Join{Table: "t"}})
}

// kgoJoin reads the table into a map, then runs the join loop.
func kgoJoin(ctx context.Context, servers, group, out string) (func() (int64, error), error) {
	seeds := kgo.SeedBrokers(strings.Split(servers, ",")...)
	table, err := benchloop.ReadTable(ctx, seeds, benchJoinTable)
	if err != nil {
		return nil, err
	}
	sess, err := kgo.NewGroupTransactSession(seeds,
		kgo.TransactionalID(group+"-txn"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(benchJoinIn),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), // as the library's default
	)
	if err != nil {
		return nil, err
	}
	return kgoLoop(func(ctx context.Context, produced *atomic.Int64) error {
		return benchloop.Join(ctx, sess, table, out, produced)
	}), nil
}

// kafkabplStreamSpec runs Runtime.Start with spec and returns what stops
// it (see streamRunner).
func kafkabplStreamSpec(ctx context.Context, servers, group string, spec Spec) (func() (int64, error), error) {
	lib := kafkabpl.New()
	lib.SetLogOutput(io.Discard)
	id, err := Of(lib).Start(ctx, map[string]any{"servers": servers, "group": group}, spec)
	if err != nil {
		lib.Close(ctx)
		return nil, err
	}
	return func() (int64, error) {
		defer lib.Close(ctx)
		// The counts follow the commit the watcher saw by a moment.
		var st *Status
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if st, err = Of(lib).Status(ctx, id); err != nil {
				return 0, err
			}
			if st.Processed >= benchStreamN || time.Now().After(deadline) {
				break
			}
		}
		if st.State != Running || st.Processed != benchStreamN {
			return 0, fmt.Errorf("stream %s, processed %d: %v", st.State, st.Processed, st.LastError)
		}
		_, err = lib.Destroy(ctx, id)
		return st.Produced, err
	}, nil
}
