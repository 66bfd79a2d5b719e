//go:build unix

package main

// The crash tests of streams: `kafkabpl run` with a stream over 20,000
// keyed inputs (keys k0..k99, values "kK-SEQ" with SEQ 0..199 per key, on
// 4 partitions), which upper-cases each value and keeps its key, is killed
// with SIGKILL mid-run and started again, in the same group. A
// read_committed consumer of the output then finds, under exactly-once,
// every input exactly once and in order per key; under at-least-once,
// every input, in order of first occurrence per key, and the duplicates
// are counted and logged. Each scenario runs its own `kafkabpl broker`
// process (kfake, one broker), so that the stream processes reach a
// broker outside the test binary and the scenarios run side by side.
//
//   - restart: one process, killed mid-run, then a new one.
//   - two in group, one killed: two processes share the input partitions;
//     one is killed mid-run, the other takes its partitions over.
//   - second joins: one process, and a second joins the group mid-run; no
//     kill, but a rebalance while transactions are open.
//
// Survivors are stopped with SIGTERM: they exit 0 and say on stderr that
// their stream stopped, with its counts.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	crashKeys       = 100
	crashPerKey     = 200
	crashInputs     = crashKeys * crashPerKey
	crashPartitions = 4
)

// crashScript is the script each stream process runs: its guarantee, and
// the throttle, a sleep of 1 ms every crashThrottle inputs, so that the
// kill lands mid-run whatever the machine's speed (the test waits for
// progress, not for time). The session timeout is Kafka's minimum, 6 s,
// so that the group notices a killed member soon.
const crashScript = `(kafka-stream (list "servers" => kafka-servers "group" => %q
    "session-timeout" => 6000 "heartbeat-interval" => 1000 "max-poll-records" => 100)
  "from" => %q "to" => %q "guarantee" => %q
  "transform" => (function (in)
    (when (= 0 (mod (get in "offset") %d)) (sleep 1))
    (upcase (get in "value"))))
`

// crashThrottle: one process takes 20000/crashThrottle ms at least.
const crashThrottle = 2

// stopLine is what a stream process prints on stderr when its stream
// stopped cleanly.
var stopLine = regexp.MustCompile(`kafka-stream: stream s[0-9a-f]{32} stopped: processed ([0-9]+), produced ([0-9]+)`)

// TestStreamCrash runs the scenarios, each under both guarantees, all at
// once (concurrently, not t.Parallel, which -parallel would limit to the
// number of cores): they mostly wait, on the throttle, on the group's
// session timeout and, under exactly-once, on the transaction timeout
// that aborts what the killed process left open (see checkOutput).
func TestStreamCrash(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	scenarios := map[string]func(t *testing.T, r *crashRig){
		"restart":                  crashRestart,
		"two in group, one killed": crashTwoOneKilled,
		"second joins":             crashSecondJoins,
	}
	tests := map[string]func(*testing.T){}
	for _, guarantee := range []string{"exactly-once", "at-least-once"} {
		for name, run := range scenarios {
			tests[guarantee+"/"+name] = func(t *testing.T) {
				start := time.Now()
				r := newCrashRig(t, bin, guarantee)
				run(t, r)
				r.checkOutput(t)
				t.Logf("took %v", time.Since(start).Round(time.Millisecond))
			}
		}
	}
	concurrently(t, tests)
}

// crashRestart: one process, killed mid-run, then a new one.
func crashRestart(t *testing.T, r *crashRig) {
	p1 := r.start(t, "first")
	at := r.waitCommitted(t, "some inputs committed", func(n int64) bool { return n >= crashInputs/5 }, p1)
	r.kill(t, p1, at)
	p2 := r.start(t, "second")
	r.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == crashInputs }, p2)
	processed := r.term(t, p2)
	if processed <= 0 || processed > crashInputs-at {
		t.Errorf("the second process processed %d inputs, want 1 to %d (%d were committed before the kill)", processed, crashInputs-at, at)
	}
}

// crashTwoOneKilled: two processes share the inputs; one is killed
// mid-run, the other takes over its partitions.
func crashTwoOneKilled(t *testing.T, r *crashRig) {
	p1 := r.start(t, "first")
	p2 := r.start(t, "second")
	r.waitMembers(t, 2, p1, p2)
	at := r.waitCommitted(t, "some inputs committed by both", func(n int64) bool { return n >= crashInputs/5 }, p1, p2)
	r.kill(t, p1, at)
	r.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == crashInputs }, p2)
	if processed := r.term(t, p2); processed <= 0 {
		t.Errorf("the surviving process processed %d inputs", processed)
	}
}

// crashSecondJoins: one process, and a second joins mid-run.
func crashSecondJoins(t *testing.T, r *crashRig) {
	p1 := r.start(t, "first")
	at := r.waitCommitted(t, "some inputs committed", func(n int64) bool { return n >= crashInputs/5 }, p1)
	if at == crashInputs {
		t.Fatalf("all %d inputs were committed before the second process joined; slow the transform (crashThrottle)", at)
	}
	p2 := r.start(t, "second")
	r.waitMembers(t, 2, p1, p2)
	r.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == crashInputs }, p1, p2)
	n1, n2 := r.term(t, p1), r.term(t, p2)
	t.Logf("the first process processed %d inputs, the second %d", n1, n2)
	if n2 <= 0 {
		t.Errorf("the second process processed %d inputs: it never took part", n2)
	}
	// Status counts are committed work only: under exactly-once they add
	// up to the inputs exactly.
	if r.guarantee == "exactly-once" && n1+n2 != crashInputs {
		t.Errorf("the processes processed %d + %d = %d inputs, want %d", n1, n2, n1+n2, crashInputs)
	}
	if r.guarantee == "at-least-once" && n1+n2 < crashInputs {
		t.Errorf("the processes processed %d + %d = %d inputs, want %d at least", n1, n2, n1+n2, crashInputs)
	}
}

// crashRig is one scenario's broker, seeded input topic and script.
type crashRig struct {
	bin, guarantee, script string
	in, out, group         string // topic and group names
	servers                string
	addrs                  []string
	adm                    *kadm.Client
	ctx                    context.Context
	runArgs                []string // more flags of kafkabpl run, before the script
}

// newCrashRig starts a broker process of its own for a scenario, and
// seeds it as seedCrashRig does.
func newCrashRig(t *testing.T, bin, guarantee string) *crashRig {
	t.Helper()
	b := startBrokerProc(t, bin, "--port", "0", "--brokers", "1", "--no-auto-create")
	return seedCrashRig(t, bin, guarantee, b.addrs, "")
}

// seedCrashRig creates on the brokers at addrs the input and output
// topics (crashPartitions each), named with prefix, seeds the input and
// writes the script.
func seedCrashRig(t *testing.T, bin, guarantee string, addrs []string, prefix string) *crashRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	t.Cleanup(cancel)
	r := &crashRig{bin: bin, guarantee: guarantee, addrs: addrs, servers: addrs[0], ctx: ctx, adm: newAdmin(t, addrs),
		in: prefix + "in", out: prefix + "out", group: prefix + "upcase"}
	for _, topic := range []string{r.in, r.out} {
		if _, err := r.adm.CreateTopic(ctx, crashPartitions, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	rs := make([]*kgo.Record, 0, crashInputs)
	for seq := range crashPerKey {
		for k := range crashKeys {
			rs = append(rs, &kgo.Record{Topic: r.in, Key: fmt.Appendf(nil, "k%d", k), Value: fmt.Appendf(nil, "k%d-%d", k, seq)})
		}
	}
	if err := newClient(t, addrs).ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("seed: %v", err)
	}
	r.script = filepath.Join(t.TempDir(), "upcase.bpl")
	writeFile(t, r.script, fmt.Sprintf(crashScript, r.group, r.in, r.out, guarantee, crashThrottle))
	return r
}

// start starts a stream process.
func (r *crashRig) start(t *testing.T, name string) *peerProc {
	t.Helper()
	args := append(append([]string{"run", "--servers", r.servers}, r.runArgs...), r.script)
	p := startPeer(t, context.Background(), r.bin, args...)
	t.Logf("%s process started (pid %d)", name, p.cmd.Process.Pid)
	return p
}

// committed is how many inputs the group has committed; -1 when the
// broker did not say.
func (r *crashRig) committed() int64 {
	ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
	defer cancel()
	offsets, err := r.adm.FetchOffsets(ctx, r.group)
	if err != nil {
		return -1
	}
	var n int64
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.Topic == r.in && o.At > 0 {
			n += o.At
		}
	})
	return n
}

// waitCommitted waits (90 s at most) until the group's committed inputs
// satisfy done, failing if one of procs exits meanwhile, and returns them.
func (r *crashRig) waitCommitted(t *testing.T, what string, done func(int64) bool, procs ...*peerProc) int64 {
	t.Helper()
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	for {
		n := r.committed()
		if done(n) {
			t.Logf("%s: %d after %v", what, n, time.Since(start).Round(time.Millisecond))
			return n
		}
		for _, p := range procs {
			if p.exited() {
				t.Fatalf("%s: a stream process exited: %v; %d inputs committed\n%s", what, p.err, n, p)
			}
		}
		if time.Now().After(deadline) {
			var out strings.Builder
			for _, p := range procs {
				fmt.Fprintf(&out, "\n%s", p)
			}
			t.Fatalf("%s: not so after %v: %d inputs committed%s", what, time.Since(start).Round(time.Millisecond), n, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitMembers waits (60 s at most) until the group is stable with n
// members that each have input partitions.
func (r *crashRig) waitMembers(t *testing.T, n int, procs ...*peerProc) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(testTimeout)
	var last string
	for {
		ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
		groups, err := r.adm.DescribeGroups(ctx, r.group)
		cancel()
		if g, ok := groups[r.group]; err == nil && ok && g.Err == nil {
			assigned := 0
			for _, m := range g.Members {
				if c, ok := m.Assigned.AsConsumer(); ok && len(c.Topics) > 0 && len(c.Topics[0].Partitions) > 0 {
					assigned++
				}
			}
			last = fmt.Sprintf("%s with %d members, %d of them assigned partitions", g.State, len(g.Members), assigned)
			if g.State == "Stable" && len(g.Members) == n && assigned == n {
				t.Logf("group %s after %v", last, time.Since(start).Round(time.Millisecond))
				return
			}
		}
		for _, p := range procs {
			if p.exited() {
				t.Fatalf("waiting for %d members: a stream process exited: %v\n%s", n, p.err, p)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group never had %d members with partitions: %s (%v)", n, last, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill kills p with SIGKILL, at committed inputs that must be fewer than
// all, so that the kill is mid-run. It waits 0 to 100 ms first, so that
// the kill lands anywhere in a batch (a batch of 100 inputs takes 50 ms
// at least), not always just after the commit the test saw.
func (r *crashRig) kill(t *testing.T, p *peerProc, committed int64) {
	t.Helper()
	if committed >= crashInputs {
		t.Fatalf("all %d inputs were committed before the kill; slow the transform (crashThrottle)", committed)
	}
	time.Sleep(rand.N(100 * time.Millisecond))
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the process did not die of SIGKILL in 10 s")
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the process ended with %v, not by SIGKILL\n%s", p.err, p)
	}
	t.Logf("killed pid %d with %d inputs committed", p.cmd.Process.Pid, committed)
}

// term stops p with SIGTERM: it must exit 0 and say its stream stopped;
// term returns how many inputs the stream processed (committed work).
func (r *crashRig) term(t *testing.T, p *peerProc) int64 {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	start := time.Now()
	select {
	case <-p.done:
	case <-time.After(testTimeout):
		t.Fatalf("the process did not exit within %v of SIGTERM\n%s", testTimeout, p)
	}
	if p.err != nil {
		t.Errorf("exit on SIGTERM: %v, want status 0\n%s", p.err, p)
	}
	m := stopLine.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Errorf("stderr does not say the stream stopped (%s)\n%s", stopLine, p)
		return -1
	}
	t.Logf("pid %d exited %v after SIGTERM: %s", p.cmd.Process.Pid, time.Since(start).Round(time.Millisecond), m[0])
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// checkOutput reads the output read_committed and checks it: every input
// reflected, in input order per key; under exactly-once once only, under
// at-least-once maybe more (the duplicates are logged).
func (r *crashRig) checkOutput(t *testing.T) {
	t.Helper()
	start := time.Now()
	recs := readCommitted(t, r.ctx, r.addrs, r.out, crashInputs)
	t.Logf("read %d output records, read_committed, in %v", len(recs), time.Since(start).Round(time.Millisecond))
	dups := checkPerKey(t, recs, r.guarantee == "exactly-once")
	if r.guarantee == "at-least-once" {
		t.Logf("at-least-once: %d duplicates among %d output records for %d inputs", dups, len(recs), crashInputs)
		return
	}
	// What read_uncommitted sees beyond them was written by transactions
	// that were aborted: by the kill, or by a rebalance.
	all := readUncommitted(t, r.ctx, r.addrs, r.out, len(recs))
	t.Logf("exactly-once: read_uncommitted sees %d output records, %d of them from aborted transactions", all, all-len(recs))
}

// readUncommitted counts topic's records, read_uncommitted: it reads until
// at least n came and then nothing more for 1 s; 60 s at most.
func readUncommitted(t *testing.T, ctx context.Context, addrs []string, topic string, n int) int {
	t.Helper()
	cl := newClient(t, addrs, kgo.ConsumeTopics(topic), kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	got := 0
	deadline := time.Now().Add(testTimeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		got += fs.NumRecords()
		if got >= n && fs.NumRecords() == 0 {
			return got
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("read %d records of %s read_uncommitted, want %d at least", got, topic, n)
		}
	}
}

// readCommitted reads topic from its start, read_committed, until records
// for n distinct values came and then nothing more for 1 s (so that a
// duplicate behind them would show); 90 s at most.
func readCommitted(t *testing.T, ctx context.Context, addrs []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := newClient(t, addrs, kgo.ConsumeTopics(topic), kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer cl.Close()
	var recs []*kgo.Record
	distinct := map[string]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch %s/%d: %v", topic, p, err)
			}
		})
		for _, r := range fs.Records() {
			recs = append(recs, r)
			distinct[string(r.Value)] = true
		}
		if len(distinct) >= n && fs.NumRecords() == 0 {
			return recs
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("read %d records (%d distinct values) of %s in 90 s, want %d distinct", len(recs), len(distinct), topic, n)
		}
	}
}

// checkPerKey checks the output records: each value is "KK-SEQ", the
// upper-cased input, under the input's key kK; each key's records are in
// one partition; and per key the SEQs are 0..crashPerKey-1 in order,
// exactly when exact, else in order of first occurrence with repeats
// allowed. It returns the number of repeats.
func checkPerKey(t *testing.T, recs []*kgo.Record, exact bool) (dups int) {
	t.Helper()
	seqs := map[string][]int{}
	partition := map[string]int32{}
	bad := 0
	for _, r := range recs {
		var k, seq int
		key := string(r.Key)
		if _, err := fmt.Sscanf(string(r.Value), "K%d-%d", &k, &seq); err != nil || key != fmt.Sprintf("k%d", k) {
			if bad++; bad <= 5 {
				t.Errorf("output %s/%d@%d: key %q value %q, want key kK and value KK-SEQ", r.Topic, r.Partition, r.Offset, key, r.Value)
			}
			continue
		}
		if p, ok := partition[key]; ok && p != r.Partition {
			t.Errorf("key %s in partitions %d and %d", key, p, r.Partition)
		}
		partition[key] = r.Partition
		seqs[key] = append(seqs[key], seq)
	}
	if len(seqs) != crashKeys {
		t.Errorf("output has %d keys, want %d", len(seqs), crashKeys)
	}
	reported := 0
	for k := range crashKeys {
		key := fmt.Sprintf("k%d", k)
		got := seqs[key]
		next := 0 // the next SEQ not seen yet
		wrong := false
		for i, seq := range got {
			switch {
			case seq == next:
				next++
				continue
			case seq < next && !exact:
				dups++
				continue
			}
			wrong = true
			if reported++; reported <= 10 {
				what := "out of order or after a loss"
				if seq < next {
					what = "a duplicate"
				}
				t.Errorf("key %s: output %d is SEQ %d, want %d: %s; SEQs around it: %v", key, i, seq, next, what, got[max(0, i-3):min(len(got), i+4)])
			}
			break
		}
		if next != crashPerKey && !wrong && reported < 10 {
			reported++
			t.Errorf("key %s: SEQs 0..%d came in order, then no more: %d lost (%d records for the key)", key, next-1, crashPerKey-next, len(got))
		}
	}
	return dups
}
