//go:build unix

package main

// The crash test of interval joins (issue 34): `kafkabpl run` with an
// interval join of two topics is killed with SIGKILL mid-run and started
// again; every pair must come out once. Keys k0..k39 each get ijPerKey
// left records ("kK-SEQ-L", at SEQ × 10 s) and as many right ones
// ("kK-SEQ-R", half a second later), in two topics of statePartitions
// partitions, all produced before the first process starts. The window is
// a second each way, so each left record matches its right one only; the
// grace is a day, so that neither side is late whichever topic the
// stream happens to read first. The joiner sleeps 1 ms every other left
// offset, so that the kill lands mid-run. A read_committed reader must
// find "kK-SEQ-L+kK-SEQ-R" under key kK once for each pair, and nothing
// else.

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	ijKeys   = 40
	ijPerKey = 50
	ijPairs  = ijKeys * ijPerKey
)

// ijScript joins: args config's group, left, right, to.
const ijScript = `(kafka-stream ` + stateConfig + `
  "from" => (%q %q) "to" => %q "store" => "pairs"
  "interval-join" => ("window" => 1000 "grace" => 86400000)
  "transform" => (function (l r)
    (when (= 0 (mod (get l "offset") 2)) (sleep 1))
    (concat (get l "value") "+" (get r "value"))))
`

func TestStreamIntervalJoinKill(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	b := startBrokerProc(t, bin, "--port", "0", "--brokers", "1", "--no-auto-create")
	intervalKillRestart(t, bin, b.addrs, "")
}

// intervalKillRestart runs the scenario on the brokers at addrs, its
// topics and group named with prefix.
func intervalKillRestart(t *testing.T, bin string, addrs []string, prefix string) {
	start := time.Now()
	r := &stateRig{crashRig: &crashRig{bin: bin, guarantee: "exactly-once", addrs: addrs, servers: addrs[0], adm: newAdmin(t, addrs),
		in: prefix + "ij-left", out: prefix + "ij-pairs", group: prefix + "ij-joiner", ctx: t.Context()}, inputs: ijPairs}
	right := prefix + "ij-right"
	forever := "-1" // the records' timestamps are of 2026-01-01
	for _, topic := range []string{r.in, right, r.out} {
		if _, err := r.adm.CreateTopic(r.ctx, statePartitions, 1, map[string]*string{"retention.ms": &forever}, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	var rs []*kgo.Record
	for seq := range ijPerKey {
		at := time.UnixMilli(winBase + int64(seq)*10000)
		for k := range ijKeys {
			key := fmt.Appendf(nil, "k%d", k)
			rs = append(rs,
				&kgo.Record{Topic: r.in, Key: key, Value: fmt.Appendf(nil, "k%d-%d-L", k, seq), Timestamp: at},
				&kgo.Record{Topic: right, Key: key, Value: fmt.Appendf(nil, "k%d-%d-R", k, seq), Timestamp: at.Add(500 * time.Millisecond)})
		}
	}
	if err := newClient(t, r.addrs).ProduceSync(r.ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	r.script = filepath.Join(t.TempDir(), "pairs.bpl")
	writeFile(t, r.script, fmt.Sprintf(ijScript, r.group, r.in, right, r.out))

	p1 := r.start(t, "first")
	at := r.waitCommitted(t, "some left records committed", func(n int64) bool { return n >= ijPairs/5 }, p1)
	r.killMidRun(t, p1, at)
	p2 := r.start(t, "second")
	r.waitCommitted(t, "every left record committed", func(n int64) bool { return n == ijPairs }, p2)
	recs := readCommitted(t, r.ctx, r.addrs, r.out, ijPairs)
	restored := restores(p2)
	r.term(t, p2)
	if restored <= 0 {
		t.Errorf("the second process restored no changelog records, although %d left records were committed before the kill\n%s", at, p2)
	}
	checkPairs(t, recs)
	t.Logf("the second process restored %d changelog records; took %v", restored, time.Since(start).Round(time.Millisecond))
}

// checkPairs checks the join's outputs (see the file's comment).
func checkPairs(t *testing.T, recs []*kgo.Record) {
	t.Helper()
	e := &errorLimit{t: t}
	seen := map[string]bool{}
	for _, rec := range recs {
		var k, seq, k2, seq2 int
		v := string(rec.Value)
		if _, err := fmt.Sscanf(v, "k%d-%d-L+k%d-%d-R", &k, &seq, &k2, &seq2); err != nil || k != k2 || seq != seq2 ||
			string(rec.Key) != fmt.Sprintf("k%d", k) || k >= ijKeys || seq >= ijPerKey {
			e.errorf("output %d@%d: key %q value %q, want kK-SEQ-L+kK-SEQ-R under key kK", rec.Partition, rec.Offset, rec.Key, v)
			continue
		}
		if seen[v] {
			e.errorf("pair %s written twice", v)
		}
		seen[v] = true
	}
	if len(recs) != ijPairs || len(seen) != ijPairs {
		e.errorf("%d outputs, %d distinct pairs, want %d, each once", len(recs), len(seen), ijPairs)
	}
}
