//go:build unix

package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBrokerCrashTransactions kills a `kafkabpl broker --data-dir` process
// with SIGKILL while a transaction is open, restarts it on the same
// directory, and checks what a read_committed reader sees (issue 40): every
// committed record exactly once, before and after the crash, and none of
// the aborted ones, neither the transaction the crash left open nor one
// aborted after the restart. The producer that had the open transaction
// keeps its transactional id across the restart, so its producer id too:
// the crash's abort must end before its next transactions, which commit.
func TestBrokerCrashTransactions(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	const (
		topic      = "ledger"
		partitions = 3
		perTxn     = 12 // records per transaction, spread over the partitions
	)
	args := []string{"--port", "0", "--data-dir", dir, "--partitions", fmt.Sprint(partitions), "--topic", topic}

	// txn produces one transaction of records named prefix-0..prefix-(perTxn-1)
	// and ends it: commit, abort, or neither (left open).
	type end int
	const (
		commit end = iota
		abort
		leaveOpen
	)
	committed := map[string]bool{} // value -> seen by the reader
	aborted := map[string]bool{}
	txn := func(cl *kgo.Client, prefix string, e end) {
		t.Helper()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatalf("begin %s: %v", prefix, err)
		}
		var rs []*kgo.Record
		for i := range perTxn {
			v := fmt.Sprintf("%s-%d", prefix, i)
			rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: []byte(v)})
			if e == commit {
				committed[v] = false
			} else {
				aborted[v] = true
			}
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", prefix, err)
		}
		if e == leaveOpen {
			return
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(e == commit)); err != nil {
			t.Fatalf("end %s: %v", prefix, err)
		}
	}
	producer := func(addrs []string, id string) *kgo.Client {
		return newClient(t, addrs, kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}

	// 1. Two producers commit; then each leaves a transaction open, and the
	// broker is killed.
	p := startBrokerProc(t, bin, args...)
	a, b := producer(p.addrs, "crash-a"), producer(p.addrs, "crash-b")
	for i := range 3 {
		txn(a, fmt.Sprintf("a%d", i), commit)
		txn(b, fmt.Sprintf("b%d", i), commit)
	}
	txn(a, "a-open", leaveOpen)
	txn(b, "b-open", leaveOpen)
	if code := p.stop(t, syscall.SIGKILL); code != -1 {
		t.Fatalf("exit %d on SIGKILL, want -1 (killed)", code)
	}
	a.Close()
	b.Close()

	// 2. Restart on the same directory. The same transactional ids commit
	// again, and abort once, in between.
	p = startBrokerProc(t, bin, args...)
	a, b = producer(p.addrs, "crash-a"), producer(p.addrs, "crash-b")
	for i := 3; i < 5; i++ {
		txn(a, fmt.Sprintf("a%d", i), commit)
		txn(b, fmt.Sprintf("b%d", i), commit)
	}
	txn(a, "a-aborted", abort)
	txn(a, "a5", commit)
	txn(b, "b5", commit)

	// 3. A read_committed reader from the start. It reads until it saw
	// every committed record (the last ones come after the aborted
	// transactions); an aborted or repeated record fails.
	cl := newClient(t, p.addrs, kgo.ConsumeTopics(topic), kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var seen, bad []string
	missing := len(committed)
	for missing > 0 && ctx.Err() == nil {
		readCtx, readCancel := context.WithTimeout(ctx, testTimeout/4)
		fs := cl.PollFetches(readCtx)
		quiet := readCtx.Err() != nil
		readCancel()
		if quiet {
			break // nothing more comes
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			v := string(r.Value)
			seen = append(seen, v)
			switch got, ok := committed[v]; {
			case aborted[v]:
				bad = append(bad, "aborted "+v)
			case !ok:
				bad = append(bad, "unknown "+v)
			case got:
				bad = append(bad, "again "+v)
			default:
				committed[v] = true
				missing--
			}
		}
	}
	t.Logf("read_committed reader: %d records, %d of %d committed", len(seen), len(committed)-missing, len(committed))
	if missing > 0 {
		var lost []string
		for v, got := range committed {
			if !got {
				lost = append(lost, v)
			}
		}
		t.Errorf("%d committed records never came, such as %s", missing, strings.Join(lost[:min(len(lost), 8)], " "))
	}
	if len(bad) > 0 {
		t.Errorf("the reader got %d records it should not: %s", len(bad), strings.Join(bad[:min(len(bad), 8)], " "))
	}
	if code := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d on SIGTERM, want 0; stderr:\n%s", code, p.stderr)
	}
}
