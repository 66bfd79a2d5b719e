//go:build unix

package main

// The crash test of re-keying (issue 34): a stateful stream that counts
// readings per site rather than per device ("rekey"), through its
// repartition topic, is killed with SIGKILL mid-flow and started again;
// the counts per site must come out exact. The inputs are rekeyInputs
// readings, keyed by device dK (K 0..rekeyDevices-1), valued "gS dK-SEQ"
// with the device's site S = K mod rekeySites and SEQ 0..rekeyPerDevice-1;
// they are fed by stateRig.feed, a bounded loop that keeps feedAhead
// records ahead of the group's committed inputs. The stream re-keys each
// reading by its site (the value's first two characters) and writes
// "gS=COUNT gS dK-SEQ" under key gS. The process is killed once the group
// committed a fifth of the repartition topic's records (the counting
// step) and fewer than all inputs; a second process of the group
// finishes. A read_committed reader must then find, per site, the counts
// 1 to the site's readings in order, each once; each reading counted
// once; and each device's SEQs in order.

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	rekeyDevices   = 40
	rekeySites     = 5
	rekeyPerDevice = 100
	rekeyInputs    = rekeyDevices * rekeyPerDevice
	rekeyPerSite   = rekeyInputs / rekeySites
)

// rekeyScript counts per site: args config's group, from, to, throttle.
const rekeyScript = `(kafka-stream ` + stateConfig + `
  "from" => %q "to" => %q "store" => "per-site"
  "rekey" => (function (in) (substring (get in "value") 0 2))
  "transform" => (function (in n)
    (when (= 0 (mod (get in "offset") %d)) (sleep 1))
    (set n (+ n 1))
    (kafka-state n (concat (get in "key") "=" n " " (get in "value")))))
`

func TestStreamRekeyKill(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	b := startBrokerProc(t, bin, "--port", "0", "--brokers", "1", "--no-auto-create")
	start := time.Now()
	r := seedRekeyRig(t, bin, b.addrs, "")
	rekeyRestart(t, r)
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}

// seedRekeyRig creates the input and output topics on the brokers at
// addrs (named with prefix), starts feeding the input and writes the
// script.
func seedRekeyRig(t *testing.T, bin string, addrs []string, prefix string) *stateRig {
	t.Helper()
	r := &stateRig{crashRig: &crashRig{bin: bin, guarantee: "exactly-once", addrs: addrs, servers: addrs[0], adm: newAdmin(t, addrs),
		in: prefix + "readings", out: prefix + "site-counts", group: prefix + "sites"}, inputs: rekeyInputs}
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	r.ctx = ctx
	t.Cleanup(cancel)
	for _, topic := range []string{r.in, r.out} {
		if _, err := r.adm.CreateTopic(ctx, statePartitions, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	var rs []*kgo.Record
	for seq := range rekeyPerDevice {
		for k := range rekeyDevices {
			rs = append(rs, &kgo.Record{Topic: r.in, Key: fmt.Appendf(nil, "d%d", k), Value: fmt.Appendf(nil, "g%d d%d-%d", k%rekeySites, k, seq)})
		}
	}
	rekeyFeed(t, r, rs)
	r.script = filepath.Join(t.TempDir(), "sites.bpl")
	writeFile(t, r.script, fmt.Sprintf(rekeyScript, r.group, r.in, r.out, stateThrottle))
	return r
}

// rekeyFeed produces rs as stateRig.feed does, feedChunk records at a
// time, but each once the group has committed all but feedAhead of the
// records produced before it on the repartition topic, the counting step
// (its offsets count the transactions' markers too: a little ahead), so
// that the kill finds inputs neither repartitioned nor counted. A bounded
// loop, in a goroutine that ends with the test.
func rekeyFeed(t *testing.T, r *stateRig, rs []*kgo.Record) {
	t.Helper()
	cl := newClient(t, r.addrs)
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for sent := 0; sent < len(rs); {
			if n := committedOn(r, repartition(r)); n < int64(sent-feedAhead) {
				select {
				case <-ctx.Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
				continue
			}
			chunk := rs[sent:min(len(rs), sent+feedChunk)]
			if err := cl.ProduceSync(ctx, chunk...).FirstErr(); err != nil {
				if ctx.Err() == nil {
					t.Errorf("feed the input: %v", err)
				}
				return
			}
			sent += len(chunk)
		}
	}()
}

// repartition is the stream's repartition topic.
func repartition(r *stateRig) string { return r.group + "-per-site-repartition" }

// committedOn is the sum of the group's committed offsets on topic; -1
// when the broker did not say.
func committedOn(r *stateRig, topic string) int64 {
	ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
	defer cancel()
	offsets, err := r.adm.FetchOffsets(ctx, r.group)
	if err != nil {
		return -1
	}
	var n int64
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.Topic == topic && o.At > 0 {
			n += o.At
		}
	})
	return n
}

// rekeyRestart: one process, killed once it counted a fifth of the
// readings, then a second, which restores the counts and finishes.
func rekeyRestart(t *testing.T, r *stateRig) {
	p1 := r.start(t, "first")
	rep := repartition(r)
	start := time.Now()
	for n := committedOn(r, rep); n < rekeyInputs/5; n = committedOn(r, rep) {
		if p1.exited() {
			t.Fatalf("the stream process exited: %v\n%s", p1.err, p1)
		}
		if time.Since(start) > 90*time.Second {
			t.Fatalf("after %v the group committed %d records of %s, want %d\n%s", time.Since(start).Round(time.Millisecond), n, rep, rekeyInputs/5, p1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	at := r.committed()
	counted := committedOn(r, rep)
	r.killMidRun(t, p1, at)
	t.Logf("killed with %d inputs and %d repartitioned records committed", at, counted)
	p2 := r.start(t, "second")
	r.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == rekeyInputs }, p2)
	readCommitted(t, r.ctx, r.addrs, r.out, rekeyInputs) // every count, committed
	restored := storeRestores(p2)
	if processed := r.term(t, p2); processed <= 0 {
		t.Errorf("the second process processed %d records", processed)
	}
	if restored <= 0 {
		t.Errorf("the second process restored no changelog records, although %d counts were committed before the kill\n%s", counted, p2)
	}
	t.Logf("the second process restored %d changelog records", restored)
	recs := readCommitted(t, r.ctx, r.addrs, r.out, rekeyInputs)
	checkSiteCounts(t, recs)
	all := readUncommitted(t, r.ctx, r.addrs, r.out, len(recs))
	t.Logf("read_uncommitted sees %d output records, %d of them from aborted transactions", all, all-len(recs))
}

// checkSiteCounts checks the outputs "gS=COUNT gS dK-SEQ" (see the file's
// comment).
func checkSiteCounts(t *testing.T, recs []*kgo.Record) {
	t.Helper()
	e := &errorLimit{t: t}
	counts := map[string]int{}      // by site: the last count
	seqs := map[int]int{}           // by device: the next SEQ
	seen := map[string]bool{}       // the readings counted
	partition := map[string]int32{} // by site
	for _, rec := range recs {
		var s, s2, k, count, seq int
		site := string(rec.Key)
		if _, err := fmt.Sscanf(string(rec.Value), "g%d=%d g%d d%d-%d", &s, &count, &s2, &k, &seq); err != nil ||
			s != s2 || site != fmt.Sprintf("g%d", s) || k%rekeySites != s {
			e.errorf("output %s=%q at %d/%d: want \"gS=COUNT gS dK-SEQ\" under key gS, S = K mod %d (%v)", site, rec.Value, rec.Partition, rec.Offset, rekeySites, err)
			continue
		}
		if p, ok := partition[site]; ok && p != rec.Partition {
			e.errorf("site %s in partitions %d and %d", site, p, rec.Partition)
		}
		partition[site] = rec.Partition
		reading := fmt.Sprintf("d%d-%d", k, seq)
		if seen[reading] {
			e.errorf("reading %s counted twice, again as %s=%q", reading, site, rec.Value)
		}
		seen[reading] = true
		if count != counts[site]+1 {
			e.errorf("site %s: count %d (of %s) after count %d", site, count, reading, counts[site])
		}
		counts[site] = count
		if seq != seqs[k] {
			e.errorf("device d%d: SEQ %d counted after SEQ %d", k, seq, seqs[k]-1)
		}
		seqs[k] = seq + 1
	}
	for s := range rekeySites {
		if site := fmt.Sprintf("g%d", s); counts[site] != rekeyPerSite {
			e.errorf("site %s: final count %d, want %d", site, counts[site], rekeyPerSite)
		}
	}
	if len(recs) != rekeyInputs || len(seen) != rekeyInputs {
		e.errorf("%d outputs counting %d readings, want %d, each once", len(recs), len(seen), rekeyInputs)
	}
	t.Logf("read %d counts, read_committed: %d sites, exact", len(recs), len(counts))
}
