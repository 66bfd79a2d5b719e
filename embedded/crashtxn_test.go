package embedded

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// crashImage copies a running cluster's data dir: what the dir holds when
// the process is killed at this point (kfake writes records and logs with
// plain writes, no buffering of its own).
func crashImage(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy data dir: %v", err)
	}
	return dst
}

// TestCrashOpenTransactionEnds: a transaction open when the process died
// is aborted at the next Start with a marker that ends it, so the same
// producer's later transactions are seen by read_committed readers (issue
// 40). A second crash image of the repaired dir gets no further marker.
func TestCrashOpenTransactionEnds(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	const topic = "ledger"
	txn := func(cl *kgo.Client, vals []string, commit *bool) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		for i, v := range vals {
			produce(t, ctx, cl, &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: []byte(v)})
		}
		if commit != nil {
			if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(*commit)); err != nil {
				t.Fatalf("end: %v", err)
			}
		}
	}
	yes := true
	producer := func(c *Cluster) *kgo.Client {
		return clientT(t, c, kgo.TransactionalID("tx"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}

	dir := t.TempDir()
	c := startT(t, DataDir(dir), Partitions(2), Topics(topic))
	p := producer(c)
	txn(p, []string{"c1", "c2", "c3", "c4"}, &yes)
	txn(p, []string{"open1", "open2", "open3", "open4"}, nil) // left open by the crash
	crashed := crashImage(t, dir)
	p.Close()
	c.Close()

	c2 := startT(t, DataDir(crashed))
	txn(producer(c2), []string{"d1", "d2", "d3", "d4"}, &yes)
	want := []string{"c1", "c2", "c3", "c4", "d1", "d2", "d3", "d4"}
	reader := clientT(t, c2, kgo.ConsumeTopics(topic), kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var got []string
	readCtx, cancel := context.WithTimeout(ctx, testTimeout/3)
	defer cancel()
	for len(got) < len(want) {
		fs := reader.PollRecords(readCtx, len(want)-len(got))
		if readCtx.Err() != nil {
			break // the rest never comes
		}
		for _, r := range fs.Records() {
			got = append(got, string(r.Value))
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("read_committed reader got %q, want %q", got, want)
	}

	ends := func(c *Cluster) map[int32]int64 {
		t.Helper()
		listed, err := adminT(t, c).ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatalf("list end offsets: %v", err)
		}
		m := map[int32]int64{}
		listed.Each(func(o kadm.ListedOffset) { m[o.Partition] = o.Offset })
		return m
	}
	before := ends(c2)
	again := crashImage(t, crashed)
	c2.Close()
	c3 := startT(t, DataDir(again))
	if after := ends(c3); !maps.Equal(after, before) {
		t.Errorf("end offsets %v after a second crash, want %v: a marker written again", after, before)
	}
}
