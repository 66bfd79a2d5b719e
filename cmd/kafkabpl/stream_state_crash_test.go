//go:build unix

package main

// The crash tests of stateful streams (issue 20), after TestStreamCrash:
// `kafkabpl run` with a stateful stream is killed with SIGKILL mid-run, or
// shares its group with a second process, and a read_committed consumer of
// the output checks the results exactly. Each scenario runs its own
// `kafkabpl broker` process (kfake, one broker), and all run at once.
//
//   - counts: per-key state, (kafka-state n ...), over 6,000 inputs (keys
//     k0..k39, values "kK-SEQ" with SEQ 0..149 per key, 4 partitions). Each
//     input's output is "kK=COUNT kK-SEQ". Under exactly-once every key's
//     outputs are COUNT 1..150 in order, each with SEQ COUNT-1, once. Under
//     at-least-once every SEQ has an output, every COUNT from 1 to the
//     key's last comes, the last is 150 or more (an input counted twice
//     after the crash: logged), and no output under-counts (COUNT > SEQ).
//   - windows: a tumbling window of 1 s averaging numbers, over 6,000
//     inputs with timestamps the producer set (keys k0..k19, 30 windows of
//     10 inputs per key, in time order, then one input per key a window
//     later, which closes the last windows). The aggregate is ("sum" => s
//     "count" => n); the result function writes "start=MS n=N sum=S
//     avg=A". Under exactly-once each key's 30 windows have one result
//     each, in order, with n 10 and the exact sum and average, and nothing
//     else comes; under at-least-once each window has a result (more than
//     one, or one that counted an input twice, are logged), none counting
//     fewer than its 10 inputs.
//
// Scenarios: restart (one process killed mid-run, then a new one; counts
// and windows, each guarantee), second joins (a rebalance while windows are
// open; exactly-once) and two in group, one killed (the survivor takes the
// killed one's partitions and restores their windows; exactly-once). The
// scripts set a transaction timeout of 10 s, so that the transaction a
// killed process left open, which holds up the restore of its partitions
// and read_committed readers, is aborted sooner than at the 30 s default.

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	countKeys   = 40
	countPerKey = 150
	countInputs = countKeys * countPerKey

	winKeys    = 20
	winWindows = 30
	winPerWin  = 10
	winSizeMs  = 1000
	winInputs  = winKeys*winWindows*winPerWin + winKeys // and the closing input per key
	winBase    = 1767225600000                          // 2026-01-01T00:00:00Z, in ms

	statePartitions = 4
)

// stateThrottle: a sleep of 1 ms every stateThrottle inputs (by offset).
const stateThrottle = 2

// stateConfig is the stream's config: the group, Kafka's minimum session
// timeout, so that a killed member is noticed soon, and a short
// transaction timeout (see the file's comment).
const stateConfig = `(list "servers" => kafka-servers "group" => %q
    "session-timeout" => 6000 "heartbeat-interval" => 1000 "max-poll-records" => 100
    "transaction-timeout" => 10000 "log-level" => "info")`

// countScript counts inputs per key: args config, from, to, guarantee,
// throttle.
const countScript = `(kafka-stream ` + stateConfig + countStream

// countStream is countScript after its config.
const countStream = `
  "from" => %q "to" => %q "guarantee" => %q "store" => "counts"
  "transform" => (function (in state)
    (when (= 0 (mod (get in "offset") %d)) (sleep 1))
    (local n)
    (set n (+ state 1))
    (kafka-state n (concat (get in "key") "=" n " " (get in "value")))))
`

// windowScript averages per key and tumbling window of 1 s.
const windowScript = `(kafka-stream ` + stateConfig + `
  "from" => %q "to" => %q "guarantee" => %q "store" => "averages"
  "window" => (list "type" => "tumbling" "size" => 1000)
  "aggregate" => (function (in acc)
    (when (= 0 (mod (get in "offset") %d)) (sleep 1))
    (list "sum" => (+ (get acc "sum") (number (get in "value"))) "count" => (+ (get acc "count") 1)))
  "result" => (function (w)
    (local s n)
    (set s (get (get w "value") "sum"))
    (set n (get (get w "value") "count"))
    (concat "start=" (get w "start") " n=" n " sum=" s " avg=" (/ s n))))
`

// restoredLine is what a stream process logs for each partition it
// restored.
var restoredLine = regexp.MustCompile(`store "[a-z]+" partition [0-9]+ restored: ([0-9]+) changelog records`)

// stateRig is a stateful scenario: the crash rig (broker, topics, group,
// script) and what the stream computes.
type stateRig struct {
	*crashRig
	windows bool  // the window stream, else the counts
	inputs  int64 // inputs seeded
}

// TestStreamStateCrash runs the stateful scenarios, concurrently (see
// TestStreamCrash).
func TestStreamStateCrash(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	tests := map[string]func(*testing.T){}
	add := func(name string, windows bool, guarantee string, run func(*testing.T, *stateRig)) {
		tests[name] = func(t *testing.T) {
			start := time.Now()
			b := startBrokerProc(t, bin, "--port", "0", "--brokers", "1", "--no-auto-create")
			r := seedStateRig(t, bin, guarantee, b.addrs, "", windows)
			run(t, r)
			r.check(t)
			t.Logf("took %v", time.Since(start).Round(time.Millisecond))
		}
	}
	for _, g := range []string{"exactly-once", "at-least-once"} {
		add("counts/"+g+"/restart", false, g, stateRestart)
		add("windows/"+g+"/restart", true, g, stateRestart)
		add("counts/"+g+"/restart, state on disk", false, g, stateRestartOnDisk)
		add("windows/"+g+"/restart, state on disk", true, g, stateRestartOnDisk)
	}
	add("windows/exactly-once/second joins", true, "exactly-once", stateSecondJoins)
	add("windows/exactly-once/two in group, one killed", true, "exactly-once", stateTwoOneKilled)
	concurrently(t, tests)
}

// seedStateRig creates the input and output topics on the brokers at
// addrs (named with prefix), seeds the input and writes the script.
func seedStateRig(t *testing.T, bin, guarantee string, addrs []string, prefix string, windows bool) *stateRig {
	t.Helper()
	r := &stateRig{crashRig: &crashRig{bin: bin, guarantee: guarantee, addrs: addrs, servers: addrs[0], adm: newAdmin(t, addrs),
		in: prefix + "in", out: prefix + "out", group: prefix + "counter"}, windows: windows}
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	r.ctx = ctx
	t.Cleanup(cancel)
	// The windows' inputs carry timestamps of 2026-01-01, older than a
	// real broker's default retention (7 days): its first retention pass,
	// 30 s after it starts, deleted an input being fed, the restarted
	// stream found its committed offsets out of range, and it waited for
	// ever for inputs that were gone. Kept for ever, as event-time data of
	// the past must be.
	forever := "-1"
	for _, topic := range []string{r.in, r.out} {
		if _, err := r.adm.CreateTopic(ctx, statePartitions, 1, map[string]*string{"retention.ms": &forever}, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	var rs []*kgo.Record
	if windows {
		r.group = prefix + "averager"
		for w := range winWindows {
			for j := range winPerWin {
				for k := range winKeys {
					rs = append(rs, &kgo.Record{Topic: r.in, Key: fmt.Appendf(nil, "k%d", k),
						Value:     strconv.AppendInt(nil, winValue(k, w, j), 10),
						Timestamp: time.UnixMilli(winBase + int64(w*winSizeMs+j*winSizeMs/winPerWin))})
				}
			}
		}
		for k := range winKeys { // a window later: closes the last ones
			rs = append(rs, &kgo.Record{Topic: r.in, Key: fmt.Appendf(nil, "k%d", k), Value: []byte("0"),
				Timestamp: time.UnixMilli(winBase + winWindows*winSizeMs)})
		}
	} else {
		for seq := range countPerKey {
			for k := range countKeys {
				rs = append(rs, &kgo.Record{Topic: r.in, Key: fmt.Appendf(nil, "k%d", k), Value: fmt.Appendf(nil, "k%d-%d", k, seq)})
			}
		}
	}
	r.inputs = int64(len(rs))
	r.feed(t, rs)
	r.script = filepath.Join(t.TempDir(), "state.bpl")
	if windows {
		writeFile(t, r.script, fmt.Sprintf(windowScript, r.group, r.in, r.out, guarantee, stateThrottle))
	} else {
		writeFile(t, r.script, fmt.Sprintf(countScript, r.group, r.in, r.out, guarantee, stateThrottle))
	}
	return r
}

// Feeding: the input is produced as the stream goes, feedChunk records
// at a time, each once the group has committed all but feedAhead of the
// records produced before it. Each fetch then holds a few inputs of every
// partition, so that all partitions progress together and a kill or a
// rebalance finds windows open on each (seeded at once, the input is
// fetched whole and processed a partition after another).
const (
	feedChunk = 200
	feedAhead = 600
)

// feed produces rs, in time order, as the stream goes (see feedChunk), in
// a goroutine that ends with the test.
func (r *stateRig) feed(t *testing.T, rs []*kgo.Record) {
	t.Helper()
	cl := newClient(t, r.addrs)
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for sent := 0; sent < len(rs); {
			if n := r.committed(); n < int64(sent-feedAhead) {
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

// winValue is input j of key k's window w: the window's average,
// winAverage, plus -5..-1 or 1..5, which add up to 0.
func winValue(k, w, j int) int64 {
	d := int64(j - winPerWin/2)
	if d >= 0 {
		d++
	}
	return winAverage(k, w) + d
}

// winAverage is the average of key k's window w.
func winAverage(k, w int) int64 { return int64(100*k + 3*w + 7) }

// killMidRun kills p once at committed inputs, which must be fewer than
// all.
func (r *stateRig) killMidRun(t *testing.T, p *peerProc, at int64) {
	t.Helper()
	if at >= r.inputs {
		t.Fatalf("all %d inputs were committed before the kill; slow the stream (stateThrottle)", at)
	}
	r.kill(t, p, at)
}

// restores is how many changelog records p says it restored.
func restores(p *peerProc) (n int64) {
	for _, m := range restoredLine.FindAllStringSubmatch(p.stderr.String(), -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		n += v
	}
	return n
}

// stateRestart: one process, killed mid-run, then a new one, which
// restores the state and finishes.
func stateRestart(t *testing.T, r *stateRig) {
	p1 := r.start(t, "first")
	at := r.waitCommitted(t, "some inputs committed", func(n int64) bool { return n >= r.inputs/5 }, p1)
	r.killMidRun(t, p1, at)
	p2 := r.start(t, "second")
	r.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == r.inputs }, p2)
	restored := restores(p2)
	processed := r.term(t, p2)
	if processed <= 0 || processed > r.inputs-at {
		t.Errorf("the second process processed %d inputs, want 1 to %d (%d were committed before the kill)", processed, r.inputs-at, at)
	}
	if restored <= 0 {
		t.Errorf("the second process restored no changelog records, although %d inputs were committed before\n%s", at, p2)
	}
	t.Logf("the second process restored %d changelog records", restored)
}

// stateRestartOnDisk: stateRestart with --state-dir: the process killed
// mid-transaction leaves its state on disk at the last batch it wrote
// there, and the new one restores every partition from that position,
// reading only the changelog's tail, to the state the outputs say
// (check).
func stateRestartOnDisk(t *testing.T, r *stateRig) {
	r.runArgs = []string{"--state-dir", t.TempDir()}
	p1 := r.start(t, "first")
	at := r.waitCommitted(t, "some inputs committed", func(n int64) bool { return n >= r.inputs/5 }, p1)
	r.killMidRun(t, p1, at)
	p2 := r.start(t, "second")
	r.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == r.inputs }, p2)
	restored := restores(p2)
	r.term(t, p2)
	if got := strings.Count(p2.stderr.String(), "from the state on disk's position"); got != statePartitions {
		t.Errorf("the second process restored %d of %d partitions from the state on disk's position\n%s", got, statePartitions, p2)
	}
	t.Logf("the second process restored %d changelog records, the tail after the state on disk", restored)

	// Stopped cleanly (SIGTERM), the disk holds every committed batch: a
	// third process applies no changelog record.
	p3 := r.start(t, "third")
	deadline := time.Now().Add(90 * time.Second)
	for len(restoredLine.FindAllString(p3.stderr.String(), -1)) < statePartitions {
		if time.Now().After(deadline) {
			t.Fatalf("the third process did not restore its %d partitions in 90 s\n%s", statePartitions, p3)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.term(t, p3)
	if n := restores(p3); n != 0 || strings.Count(p3.stderr.String(), "from the state on disk's position") != statePartitions {
		t.Errorf("started again after SIGTERM: %d changelog records applied, want none, every partition from the disk's position\n%s", n, p3)
	}
}

// stateSecondJoins: one process, and a second joins mid-run: the
// partitions that move are restored by the second.
func stateSecondJoins(t *testing.T, r *stateRig) {
	p1 := r.start(t, "first")
	at := r.waitCommitted(t, "some inputs committed", func(n int64) bool { return n >= r.inputs/5 }, p1)
	if at >= r.inputs {
		t.Fatalf("all %d inputs were committed before the second process joined; slow the stream (stateThrottle)", at)
	}
	p2 := r.start(t, "second")
	r.waitMembers(t, 2, p1, p2)
	r.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == r.inputs }, p1, p2)
	restored := restores(p2)
	n1, n2 := r.term(t, p1), r.term(t, p2)
	t.Logf("the first process processed %d inputs, the second %d (restoring %d changelog records)", n1, n2, restored)
	if n2 <= 0 {
		t.Errorf("the second process processed %d inputs: it never took part", n2)
	}
	if n1+n2 != r.inputs {
		t.Errorf("the processes processed %d + %d = %d inputs, want %d", n1, n2, n1+n2, r.inputs)
	}
	if restored <= 0 {
		t.Errorf("the second process restored no changelog records of the partitions it took over\n%s", p2)
	}
}

// stateTwoOneKilled: two processes share the inputs; one is killed
// mid-run, and the other restores its partitions and finishes.
func stateTwoOneKilled(t *testing.T, r *stateRig) {
	p1 := r.start(t, "first")
	p2 := r.start(t, "second")
	r.waitMembers(t, 2, p1, p2)
	before := restores(p2)
	at := r.waitCommitted(t, "some inputs committed by both", func(n int64) bool { return n >= r.inputs/5 }, p1, p2)
	r.killMidRun(t, p1, at)
	r.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == r.inputs }, p2)
	restored := restores(p2) - before
	if processed := r.term(t, p2); processed <= 0 {
		t.Errorf("the surviving process processed %d inputs", processed)
	}
	if restored <= 0 {
		t.Errorf("the survivor restored no changelog records of the killed process's partitions\n%s", p2)
	}
	t.Logf("the survivor restored %d changelog records after the kill", restored)
}

// check reads the output, read_committed, and checks it.
func (r *stateRig) check(t *testing.T) {
	t.Helper()
	want := countInputs
	if r.windows {
		want = winKeys * winWindows
	}
	start := time.Now()
	recs := readCommitted(t, r.ctx, r.addrs, r.out, want)
	t.Logf("read %d output records, read_committed, in %v", len(recs), time.Since(start).Round(time.Millisecond))
	exact := r.guarantee == "exactly-once"
	if r.windows {
		checkAverages(t, recs, exact)
	} else {
		checkCounts(t, recs, exact)
	}
	if exact {
		all := readUncommitted(t, r.ctx, r.addrs, r.out, len(recs))
		t.Logf("exactly-once: read_uncommitted sees %d output records, %d of them from aborted transactions", all, all-len(recs))
	}
}

// errorLimit bounds the errors a check reports.
type errorLimit struct {
	t *testing.T
	n int
}

func (e *errorLimit) errorf(format string, args ...any) {
	e.t.Helper()
	if e.n++; e.n <= 10 {
		e.t.Errorf(format, args...)
	} else if e.n == 11 {
		e.t.Errorf("more errors left out")
	}
}

// checkCounts checks the counts' outputs "kK=COUNT kK-SEQ" (see the
// file's comment).
func checkCounts(t *testing.T, recs []*kgo.Record, exact bool) {
	t.Helper()
	e := &errorLimit{t: t}
	type out struct{ count, seq int }
	per := map[string][]out{}
	for _, r := range recs {
		var k, k2, count, seq int
		key := string(r.Key)
		if _, err := fmt.Sscanf(string(r.Value), "k%d=%d k%d-%d", &k, &count, &k2, &seq); err != nil || k != k2 || key != fmt.Sprintf("k%d", k) {
			e.errorf("output %d@%d: key %q value %q, want kK=COUNT kK-SEQ under key kK", r.Partition, r.Offset, key, r.Value)
			continue
		}
		per[key] = append(per[key], out{count, seq})
	}
	if len(per) != countKeys {
		e.errorf("outputs for %d keys, want %d", len(per), countKeys)
	}
	extra, overcounted := 0, 0
	for k := range countKeys {
		key := fmt.Sprintf("k%d", k)
		outs := per[key]
		if exact {
			for i, o := range outs {
				if o.count != i+1 || o.seq != i {
					e.errorf("key %s: output %d is count %d of SEQ %d, want count %d of SEQ %d; around it: %v", key, i, o.count, o.seq, i+1, i, outs[max(0, i-3):min(len(outs), i+4)])
					break
				}
			}
			if len(outs) != countPerKey {
				e.errorf("key %s: %d outputs, want %d", key, len(outs), countPerKey)
			}
			continue
		}
		seqs, counts := map[int]bool{}, map[int]bool{}
		last := 0
		for _, o := range outs {
			if o.count <= o.seq {
				e.errorf("key %s: SEQ %d counted %d: fewer inputs than came before it", key, o.seq, o.count)
			}
			seqs[o.seq], counts[o.count] = true, true
			last = max(last, o.count)
		}
		for seq := range countPerKey {
			if !seqs[seq] {
				e.errorf("key %s: no output for SEQ %d: the input was lost", key, seq)
			}
		}
		for c := 1; c <= last; c++ {
			if !counts[c] {
				e.errorf("key %s: no output of count %d, though the count reached %d", key, c, last)
			}
		}
		if last < countPerKey {
			e.errorf("key %s: final count %d, want %d at least", key, last, countPerKey)
		}
		extra += len(outs) - countPerKey
		overcounted += last - countPerKey
	}
	if !exact {
		t.Logf("at-least-once: %d outputs beyond the %d inputs; %d inputs counted twice in the final counts", extra, countInputs, overcounted)
	}
}

// checkAverages checks the windows' results "start=MS n=N sum=S avg=A"
// (see the file's comment).
func checkAverages(t *testing.T, recs []*kgo.Record, exact bool) {
	t.Helper()
	e := &errorLimit{t: t}
	per := map[string][]string{}
	for _, r := range recs {
		per[string(r.Key)] = append(per[string(r.Key)], string(r.Value))
	}
	if len(per) != winKeys {
		e.errorf("results for %d keys, want %d: %v", len(per), winKeys, per)
	}
	dups, inflated := 0, 0
	for k := range winKeys {
		key := fmt.Sprintf("k%d", k)
		got := per[key]
		want := make([]string, winWindows)
		for w := range winWindows {
			avg := winAverage(k, w)
			want[w] = fmt.Sprintf("start=%d n=%d sum=%d avg=%d", winBase+int64(w*winSizeMs), winPerWin, avg*winPerWin, avg)
		}
		if exact {
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				e.errorf("key %s: results\n%s\nwant\n%s", key, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			continue
		}
		seen := map[int]int{} // window → results
		for _, v := range got {
			var start, n, sum int64
			var avg float64
			if _, err := fmt.Sscanf(v, "start=%d n=%d sum=%d avg=%g", &start, &n, &sum, &avg); err != nil || (start-winBase)%winSizeMs != 0 {
				e.errorf("key %s: result %q, want start=MS n=N sum=S avg=A", key, v)
				continue
			}
			w := int((start - winBase) / winSizeMs)
			if w < 0 || w >= winWindows {
				e.errorf("key %s: result %q of no window the inputs closed", key, v)
				continue
			}
			if seen[w]++; seen[w] > 1 {
				dups++
			}
			switch {
			case n < winPerWin:
				e.errorf("key %s: result %q counts %d inputs, want %d at least: an input was lost", key, v, n, winPerWin)
			case n > winPerWin:
				inflated++
			case v != want[w]:
				e.errorf("key %s: result %q, want %q", key, v, want[w])
			}
		}
		for w := range winWindows {
			if seen[w] == 0 {
				e.errorf("key %s: no result for window %d (%s): lost", key, w, want[w])
			}
		}
	}
	if !exact {
		t.Logf("at-least-once: %d results for %d windows; %d repeated, %d counting an input twice", len(recs), winKeys*winWindows, dups, inflated)
	}
}
