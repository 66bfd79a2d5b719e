package stream

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lockedLog keeps what the library logs, for a test to look for a line.
type lockedLog struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.Log(strings.TrimSpace(string(p)))
	return l.b.Write(p)
}

func (l *lockedLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.b.String(), s)
}

// TestStreamRestoreWaitsAndRevokes holds a transaction open on a
// changelog partition: its restore waits for the transaction to end
// (what it wrote is not known before), processing none of the
// partition's input meanwhile, while the other partition's input is
// processed. A revocation during the wait ends the restore; assigned
// again, the partition is restored once the transaction aborts, and its
// inputs counted from the state the changelog holds, the aborted record
// not included.
func TestStreamRestoreWaitsAndRevokes(t *testing.T) {
	t.Parallel()
	c := newCluster(t, embedded.Topics("in"), embedded.Partitions(2))
	servers := c.Servers()
	ctx := testCtx(t)
	cl := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(servers), kgo.TransactionalID("dangling"), kgo.DefaultProduceTopic("g-s-changelog"), kgo.RecordPartitioner(kgo.ManualPartitioner())))
	defer cl.Close()
	adm := kadm.NewClient(cl)
	compact := "compact"
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": &compact}, "g-s-changelog"); err != nil {
		t.Fatal(err)
	}
	// A count of 100 for key "a", in a transaction left open.
	raw := must[[]byte](t)(store.Encode(nil, int64(100)))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte("a"), Value: raw, Partition: 1}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	lib := kafkabpl.New()
	log := &lockedLog{t: t}
	lib.SetLogOutput(log)
	t.Cleanup(func() { lib.Close(context.Background()) })
	zero, one := int32(0), int32(1)
	var ins []kafkabpl.Message
	for range 3 {
		ins = append(ins, kafkabpl.Message{Key: "a", Value: "v", Partition: &one})
	}
	for range 2 {
		ins = append(ins, kafkabpl.Message{Key: "b", Value: "v", Partition: &zero})
	}
	sendValues(t, lib, servers, "in", ins...)
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "g"},
		Spec{From: []string{"in"}, To: "out", Update: countUpdate, Store: "s"}))
	// Partition 0 restored and its input processed while partition 1's
	// restore waits.
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 2 })
	if st.Store.Restoring != 1 || st.Store.RestoreTotal != 0 || st.Store.Partitions != 2 {
		t.Fatalf("partition 1 not waiting: %+v", st.Store)
	}
	if got := lastPerKey(readAll(t, lib, servers, 2, "out")); got != "b=2" {
		t.Errorf("partition 0's counts %s", got)
	}
	hs := streamOf(t, lib, id)
	s := hs
	time.Sleep(200 * time.Millisecond) // a while: still waiting, none of its input processed
	if st = must[*Status](t)(Of(lib).Status(ctx, id)); st.Processed != 2 || st.Store.Restoring != 1 {
		t.Fatalf("processed partition 1 while restoring: %+v %+v", st, st.Store)
	}

	s.store.revoked(ctx, nil, map[string][]int32{"in": {1}})
	waitFor(t, "the restore ended by the revocation", func() bool { return log.has(`partition 1 was revoked during its restore`) })
	st = must[*Status](t)(Of(lib).Status(ctx, id))
	if st.Store.Restoring != 0 || st.Store.Partitions != 1 {
		t.Errorf("after the revocation: %+v", st.Store)
	}

	s.store.assign(ctx, nil, map[string][]int32{"in": {1}})
	waitStream(t, lib, id, func(st *Status) bool { return st.Store.Restoring == 1 })
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	st = waitStream(t, lib, id, func(st *Status) bool { return st.Processed == 5 })
	if got := lastPerKey(readAll(t, lib, servers, 5, "out")); got != "a=3 b=2" {
		t.Errorf("counts %s: the aborted state leaked", got)
	}
	if st.Store.Restoring != 0 || st.Store.Partitions != 2 || st.Store.Keys != 2 {
		t.Errorf("store %+v", st.Store)
	}
	lib.Destroy(ctx, id)
}

// TestStreamWindowIdle closes the windows of a partition that receives
// nothing more, with "idle": its stream time moves on with the clock.
func TestStreamWindowIdle(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Topics("in")).Servers()
	lib := streamLib(t)
	cfg := map[string]any{"servers": servers, "group": "w", "value-serializer": "JSON", "value-deserializer": "JSON"}
	now := time.Now().UnixMilli()/50*50 + 10 // both of a's inputs in one window
	sendValues(t, lib, servers, "in", at("a", now, 1), at("b", now, 2), at("a", now+1, 3))
	w := &Window{Kind: Tumbling, Size: 50 * time.Millisecond, Idle: 100 * time.Millisecond, Aggregate: sumAggregate}
	id := must[string](t)(Of(lib).Start(testCtx(t), cfg, Spec{From: []string{"in"}, To: "out", Store: "sums", Window: w}))
	got := windowResults(t, lib, servers, 2)
	if !strings.HasPrefix(got, "a[") || !strings.Contains(got, ")=4 b[") || !strings.HasSuffix(got, ")=2") {
		t.Errorf("results %s", got)
	}
	st := waitStream(t, lib, id, func(st *Status) bool { return st.Store.Windows == 0 })
	if st.Processed != 3 || st.Produced != 2 {
		t.Errorf("status %+v", st)
	}
	lib.Destroy(testCtx(t), id)
}

// TestStreamRestoreFails restores a windowed store whose changelog holds
// a record no stream wrote (a key too short for a window's): the restore
// fails, and the stream with it, saying which store, partition and offset,
// while the destroy that follows returns at once.
func TestStreamRestoreFails(t *testing.T) {
	t.Parallel()
	c := newCluster(t, embedded.Topics("in"), embedded.Partitions(2))
	servers := c.Servers()
	ctx := testCtx(t)
	cl := must[*kgo.Client](t)(kgo.NewClient(kgo.SeedBrokers(servers), kgo.RecordPartitioner(kgo.ManualPartitioner())))
	defer cl.Close()
	compact := "compact"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": &compact}, "g-w-changelog"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "g-w-changelog", Key: []byte("x"), Value: []byte("y"), Partition: 1}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	lib := streamLib(t)
	w := &Window{Kind: Tumbling, Size: time.Second, Aggregate: sumAggregate}
	id := must[string](t)(Of(lib).Start(ctx, map[string]any{"servers": servers, "group": "g"},
		Spec{From: []string{"in"}, To: "out", Store: "w", Window: w}))
	st := waitStream(t, lib, id, func(st *Status) bool { return st.State == Failed })
	want := `restore store "w" partition 1 from "g-w-changelog": offset 0: key of 1 bytes: not a window's`
	if st.LastError == nil || !strings.Contains(st.LastError.Error(), want) {
		t.Errorf("error %v, want one with %q", st.LastError, want)
	}
	if _, err := lib.Destroy(ctx, id); err != nil {
		t.Errorf("destroy: %v", err)
	}
}

// TestStoreRevokedBeforeRestore revokes, and forgets, a partition that
// syncStore has put in restoring but whose restore has not begun, so that
// it has no cancel func yet: kgo calls revoked on a goroutine of its own,
// at any time. It once panicked on the nil func (found on Apache Kafka
// 4.4 by TestRealKafkaStreamState's repeated kills).
func TestStoreRevokedBeforeRestore(t *testing.T) {
	cfg := testConfig(t, map[string]any{"servers": "127.0.0.1:1", "group": "g"})
	st := must[*kafkaStore](t)(newStore(cfg, &Spec{From: []string{"in"}, To: "out", Store: "s", Update: countUpdate}, func(string) {}))
	ctx := context.Background()
	st.assign(ctx, nil, map[string][]int32{"in": {0, 1}})
	for id, gen := range st.assigned {
		st.restoring[id] = st.newPart(id, gen) // as syncStore does, before startRestore
	}
	st.revoked(ctx, nil, map[string][]int32{"in": {0}})
	st.forget()
	if len(st.assigned) != 0 || !st.pending {
		t.Errorf("assigned %v, pending %v", st.assigned, st.pending)
	}
}
