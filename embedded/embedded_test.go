package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sr"
)

// testTimeout bounds every wait of a test, so none can hang.
const testTimeout = 30 * time.Second

func startT(t *testing.T, opts ...Option) *Cluster {
	t.Helper()
	c, err := Start(append([]Option{Port(0)}, opts...)...)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func clientT(t *testing.T, c *Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...)}, opts...)...)
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func adminT(t *testing.T, c *Cluster) *kadm.Client {
	return kadm.NewClient(clientT(t, c))
}

func produce(t *testing.T, ctx context.Context, cl *kgo.Client, rs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consume polls until n records came, or fails at the context's deadline.
func consume(t *testing.T, ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollRecords(ctx, n-len(got))
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s/%d: %v", topic, p, err)
		})
		got = append(got, fs.Records()...)
	}
	return got
}

func partitionCount(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) int {
	t.Helper()
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	td := tds[topic]
	if td.Err != nil {
		t.Fatalf("topic %s: %v", topic, td.Err)
	}
	return len(td.Partitions)
}

func TestStartFreePortProduceConsume(t *testing.T) {
	t.Parallel()
	c := startT(t)
	addrs := c.Addrs()
	if len(addrs) != 1 || !strings.HasPrefix(addrs[0], "127.0.0.1:") || addrs[0] == "127.0.0.1:0" {
		t.Fatalf("Addrs = %q, want one 127.0.0.1:port", addrs)
	}
	if c.Servers() != addrs[0] {
		t.Errorf("Servers = %q, want %q", c.Servers(), addrs[0])
	}
	if c.Kfake() == nil {
		t.Error("Kfake() = nil")
	}

	ctx := ctxT(t)
	cl := clientT(t, c, kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics("t"), kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()))
	produce(t, ctx, cl, &kgo.Record{Topic: "t", Key: []byte("k"), Value: []byte("v")})
	r := consume(t, ctx, cl, 1)[0]
	if string(r.Key) != "k" || string(r.Value) != "v" {
		t.Errorf("consumed %q=%q, want k=v", r.Key, r.Value)
	}
}

func TestSeveralBrokers(t *testing.T) {
	t.Parallel()
	c := startT(t, Brokers(3))
	addrs := c.Addrs()
	if len(addrs) != 3 {
		t.Fatalf("Addrs = %q, want 3", addrs)
	}
	if got := strings.Split(c.Servers(), ","); !slices.Equal(got, addrs) {
		t.Errorf("Servers = %q, want %q joined", c.Servers(), addrs)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if !strings.HasPrefix(a, "127.0.0.1:") || seen[a] {
			t.Errorf("bad or repeated address %q in %q", a, addrs)
		}
		seen[a] = true
	}

	ctx := ctxT(t)
	adm := adminT(t, c)
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatalf("broker metadata: %v", err)
	}
	if len(meta.Brokers) != 3 {
		t.Errorf("metadata lists %d brokers, want 3", len(meta.Brokers))
	}
	for _, b := range meta.Brokers {
		if b.Host != "127.0.0.1" {
			t.Errorf("broker %d advertises %s, want 127.0.0.1", b.NodeID, b.Host)
		}
	}

	// Enough partitions that their leaders spread over the brokers.
	if _, err := adm.CreateTopic(ctx, 6, -1, nil, "spread"); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	cl := clientT(t, c, kgo.ConsumeTopics("spread"),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()))
	var rs []*kgo.Record
	for i := range 60 {
		rs = append(rs, &kgo.Record{Topic: "spread", Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)})
	}
	produce(t, ctx, cl, rs...)
	got := consume(t, ctx, cl, len(rs))
	if len(got) != len(rs) {
		t.Errorf("consumed %d records, want %d", len(got), len(rs))
	}
}

func TestAutoCreateOnePartitionByDefault(t *testing.T) {
	t.Parallel()
	c := startT(t)
	ctx := ctxT(t)
	produce(t, ctx, clientT(t, c, kgo.AllowAutoTopicCreation()), &kgo.Record{Topic: "auto", Value: []byte("v")})
	if n := partitionCount(t, ctx, adminT(t, c), "auto"); n != 1 {
		t.Errorf("auto-created topic has %d partitions, want 1", n)
	}
}

func TestPartitions(t *testing.T) {
	t.Parallel()
	c := startT(t, Partitions(4))
	ctx := ctxT(t)
	adm := adminT(t, c)
	produce(t, ctx, clientT(t, c, kgo.AllowAutoTopicCreation()), &kgo.Record{Topic: "auto", Value: []byte("v")})
	if n := partitionCount(t, ctx, adm, "auto"); n != 4 {
		t.Errorf("auto-created topic has %d partitions, want 4", n)
	}
	// -1 asks for the broker's default.
	if _, err := adm.CreateTopic(ctx, -1, -1, nil, "explicit"); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if n := partitionCount(t, ctx, adm, "explicit"); n != 4 {
		t.Errorf("topic created with the default has %d partitions, want 4", n)
	}
}

func TestNoAutoCreate(t *testing.T) {
	t.Parallel()
	c := startT(t, NoAutoCreate())
	ctx := ctxT(t)
	// The client asks for auto-creation; the broker must refuse.
	cl := clientT(t, c, kgo.AllowAutoTopicCreation(), kgo.UnknownTopicRetries(0))
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "unknown", Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("produce to unknown topic: err = %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	adm := adminT(t, c)
	tds, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	if tds.Has("unknown") {
		t.Error("topic was created despite NoAutoCreate")
	}
	// Explicit creation still works.
	if _, err := adm.CreateTopic(ctx, -1, -1, nil, "known"); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	produce(t, ctx, cl, &kgo.Record{Topic: "known", Value: []byte("v")})
}

func TestTopics(t *testing.T) {
	t.Parallel()
	c := startT(t, Topics("a", "b"), Topics("c"), Partitions(3), NoAutoCreate())
	ctx := ctxT(t)
	adm := adminT(t, c)
	for _, topic := range []string{"a", "b", "c"} {
		if n := partitionCount(t, ctx, adm, topic); n != 3 {
			t.Errorf("seed topic %s has %d partitions, want 3", topic, n)
		}
	}
}

func TestPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	// The busy port is the first broker's, then the second's: both
	// must fail cleanly, and fast.
	for _, first := range []int{port, port - 1} {
		done := make(chan error, 1)
		go func() {
			c, err := Start(Port(first), Brokers(2))
			if err == nil {
				c.Close()
			}
			done <- err
		}()
		select {
		case err = <-done:
		case <-time.After(testTimeout):
			t.Fatalf("Start on busy port %d did not return", port)
		}
		if !errors.Is(err, ErrPortInUse) {
			t.Fatalf("Start(Port(%d), Brokers(2)) with %d busy: err = %v, want ErrPortInUse", first, port, err)
		}
		if !strings.Contains(err.Error(), "--port 0") {
			t.Errorf("error %q does not suggest --port 0", err)
		}
	}
}

func TestFailedStartReleasesPorts(t *testing.T) {
	t.Parallel()
	// Find two adjacent free ports, then take the second.
	var ln net.Listener
	var first int
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
			first = p
			break
		}
	}
	if ln == nil {
		t.Skip("found no two adjacent free ports")
	}
	defer ln.Close()

	if _, err := Start(Port(first), Brokers(2)); !errors.Is(err, ErrPortInUse) {
		t.Fatalf("err = %v, want ErrPortInUse", err)
	}
	// The first broker's listener must have been closed again.
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", first))
	if err != nil {
		t.Fatalf("port %d still taken after a failed Start: %v", first, err)
	}
	l.Close()
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string][]Option{
		"no brokers":         {Brokers(0)},
		"negative port":      {Port(-1)},
		"port too big":       {Port(65536)},
		"ports run out":      {Port(65535), Brokers(2)},
		"no partitions":      {Partitions(0)},
		"empty topic":        {Topics("")},
		"topic with space":   {Topics("a b")},
		"dot-dot topic":      {Topics("..")},
		"topic too long":     {Topics(strings.Repeat("x", 250))},
		"topic with slash":   {Topics("a/b")},
		"topic with colon":   {Topics("a:b")},
		"one bad of several": {Topics("ok", "not ok")},
		"colliding names":    {Topics("a.b", "a_b")},
	} {
		if c, err := Start(append([]Option{Port(0)}, opts...)...); !errors.Is(err, ErrInvalidOption) {
			if err == nil {
				c.Close()
			}
			t.Errorf("%s: err = %v, want ErrInvalidOption", name, err)
		}
	}
}

func TestDataDirPersists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	const topic, group = "persisted", "g1"
	want := map[string]string{}
	var rs []*kgo.Record
	for i := range 20 {
		k, v := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		want[k] = v
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(k), Value: []byte(v)})
	}

	c := startT(t, DataDir(dir), Partitions(2))
	produce(t, ctx, clientT(t, c, kgo.AllowAutoTopicCreation()), rs...)
	// A group member consumes everything and commits, as an app would.
	cons := clientT(t, c, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	consume(t, ctx, cons, len(rs))
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	adm := adminT(t, c)
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	cons.Close() // leave the group before the cluster goes
	c.Close()
	c.Close()

	// Start again on other ports: everything is back.
	c2 := startT(t, DataDir(dir), NoAutoCreate())
	adm2 := adminT(t, c2)
	if n := partitionCount(t, ctx, adm2, topic); n != 2 {
		t.Errorf("topic has %d partitions after restart, want 2", n)
	}
	after, err := adm2.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets after restart: %v", err)
	}
	var total int64
	committed.Each(func(o kadm.OffsetResponse) {
		a, ok := after.Lookup(o.Topic, o.Partition)
		if !ok || a.At != o.At {
			t.Errorf("%s/%d: committed %d before restart, %+v after", o.Topic, o.Partition, o.At, a)
		}
		total += o.At
	})
	if total != int64(len(rs)) {
		t.Errorf("committed offsets sum to %d, want %d", total, len(rs))
	}

	got := map[string]string{}
	for _, r := range consume(t, ctx, clientT(t, c2, kgo.ConsumeTopics(topic),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart())), len(rs)) {
		got[string(r.Key)] = string(r.Value)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records after restart = %v, want %v", got, want)
	}

	// The group resumes after its commits: only a new record comes.
	produce(t, ctx, clientT(t, c2), &kgo.Record{Topic: topic, Key: []byte("new"), Value: []byte("after restart")})
	resumed := clientT(t, c2, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()))
	if r := consume(t, ctx, resumed, 1)[0]; string(r.Key) != "new" {
		t.Errorf("group resumed at %s=%s, want the record produced after restart", r.Key, r.Value)
	}
}

func TestTopicsOnReloadedDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	c := startT(t, DataDir(dir), Topics("old"))
	c.Close()
	// kfake seeds only an empty dir; Topics must still add "new".
	c2 := startT(t, DataDir(dir), Topics("old", "new"), Partitions(2))
	adm := adminT(t, c2)
	if n := partitionCount(t, ctx, adm, "old"); n != 1 {
		t.Errorf("old topic has %d partitions, want its original 1", n)
	}
	if n := partitionCount(t, ctx, adm, "new"); n != 2 {
		t.Errorf("new topic has %d partitions, want 2", n)
	}
}

func TestDataDirInUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := startT(t, DataDir(dir))
	if c2, err := Start(Port(0), DataDir(dir)); !errors.Is(err, ErrDataDirInUse) {
		if err == nil {
			c2.Close()
		}
		t.Fatalf("second Start on a used data dir: err = %v, want ErrDataDirInUse", err)
	}
	c.Close()
	startT(t, DataDir(dir)).Close()
}

func TestCloseIdempotent(t *testing.T) {
	t.Parallel()
	for _, opts := range [][]Option{nil, {DataDir(t.TempDir())}} {
		c := startT(t, opts...)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(c.Close)
		}
		wg.Wait()
		c.Close()
		// Addrs and Servers stay usable after Close.
		if len(c.Addrs()) != 1 || c.Servers() == "" {
			t.Errorf("after Close: Addrs = %q, Servers = %q", c.Addrs(), c.Servers())
		}
	}
}

func TestSyncWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	c := startT(t, DataDir(dir), SyncWrites())
	produce(t, ctx, clientT(t, c, kgo.AllowAutoTopicCreation()), &kgo.Record{Topic: "s", Value: []byte("durable")})
	c.Close()
	c2 := startT(t, DataDir(dir))
	r := consume(t, ctx, clientT(t, c2, kgo.ConsumeTopics("s"), kgo.ConsumeStartOffset(kgo.NewOffset().AtStart())), 1)[0]
	if string(r.Value) != "durable" {
		t.Errorf("after restart %q, want durable", r.Value)
	}
}

func TestDataDirNotADirectory(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Start(Port(0), DataDir(file)); err == nil {
		c.Close()
		t.Fatal("Start with a file as data dir succeeded")
	}
}

func TestCorruptDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	startT(t, DataDir(dir), Topics("t")).Close()
	meta := filepath.Join(dir, "meta.json")
	if err := os.WriteFile(meta, []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Start(Port(0), DataDir(dir))
	if err == nil {
		c.Close()
		t.Fatal("Start on a corrupt data dir succeeded")
	}
	if !strings.Contains(err.Error(), "meta.json") {
		t.Errorf("error %q does not name the bad file", err)
	}
	// The failed Start released the directory.
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	startT(t, DataDir(dir)).Close()
}

// TestAutoCreateForOldClients checks that a client speaking Metadata older
// than v4 (kafka-python 2.0 speaks v1) gets topics created on first use,
// as Kafka gives them, and still none under NoAutoCreate.
func TestAutoCreateForOldClients(t *testing.T) {
	t.Parallel()
	v := kversion.Stable()
	v.SetMaxKeyVersion(int16(kmsg.Metadata), 1) // as kafka-python 2.0 asks
	old := []kgo.Opt{kgo.MaxVersions(v), kgo.UnknownTopicRetries(2)}
	c := startT(t)
	ctx := ctxT(t)
	produce(t, ctx, clientT(t, c, old...), &kgo.Record{Topic: "made-by-v2", Value: []byte("v")})
	if n := partitionCount(t, ctx, adminT(t, c), "made-by-v2"); n != 1 {
		t.Errorf("topic has %d partitions, want 1", n)
	}

	none := startT(t, NoAutoCreate())
	err := clientT(t, none, old...).ProduceSync(ctx, &kgo.Record{Topic: "nope", Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("NoAutoCreate, old client: err = %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
}

// TestSchemaRegistry: the registry beside the cluster speaks Confluent's
// API, and with a data dir keeps its schemas, ids and all, across a
// restart.
func TestSchemaRegistry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := func() (*Cluster, *sr.Client) {
		c, err := Start(Port(0), DataDir(dir), SchemaRegistry(0))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c.RegistryURL(), "http://127.0.0.1:") {
			t.Fatalf("RegistryURL %q", c.RegistryURL())
		}
		cl, err := sr.NewClient(sr.URLs(c.RegistryURL()))
		if err != nil {
			t.Fatal(err)
		}
		return c, cl
	}
	ctx := context.Background()
	c, cl := start()
	var ids []int
	for i, subject := range []string{"a-value", "b-value", "a-value"} {
		s := sr.Schema{Schema: fmt.Sprintf(`{"type":"record","name":"R","doc":"R%d","fields":[]}`, i), Type: sr.TypeAvro}
		ss, err := cl.CreateSchema(ctx, subject, s)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ss.ID)
	}
	if _, err := cl.DeleteSubject(ctx, "b-value", sr.SoftDelete); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// A line cut short by a crash is dropped, the rest kept.
	f, err := os.OpenFile(filepath.Join(dir, "schema-registry.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"method":"POST","path":"/subj`)
	f.Close()

	c, cl = start()
	defer c.Close()
	for i, id := range ids {
		s, err := cl.SchemaByID(ctx, id)
		if err != nil || !strings.Contains(s.Schema, fmt.Sprintf(`"R%d"`, i)) {
			t.Errorf("schema id %d after the restart: %v %v", id, s.Schema, err)
		}
	}
	subjects, err := cl.Subjects(ctx)
	if err != nil || fmt.Sprint(subjects) != "[a-value]" {
		t.Errorf("subjects after the restart: %v %v (b-value was deleted)", subjects, err)
	}
	ss, err := cl.CreateSchema(ctx, "c-value", sr.Schema{Schema: `{"type":"record","name":"New","fields":[]}`, Type: sr.TypeAvro})
	if err != nil || ss.ID <= ids[2] {
		t.Errorf("a new schema after the restart got id %d (%v); the last before was %d", ss.ID, err, ids[2])
	}
}
