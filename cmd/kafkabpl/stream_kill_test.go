//go:build unix

package main

// TestStreamKills is the crash test of issue 40's second case: a stateful
// stream's group after repeated kills. A `kafkabpl run` process, the
// survivor, counts inputs per key (TestStreamStateCrash's counts stream,
// exactly-once) against a `kafkabpl broker` process of three brokers,
// while eight more processes of the same group are killed with SIGKILL one
// after the other, alternately
//
//   - while processing: once the process holds input partitions and the
//     group's committed offsets of one of them advanced, and
//   - while joining: 1 to 3 s after its start, which is at once after the
//     previous kill, so that the coordinator holds its JoinGroup, waiting
//     for the member just killed to rejoin or to time out.
//
// The next process starts as soon as the previous one is killed: the
// group has no time to settle in between, as in the issue, where eight
// kills in a row left a group stalled in PreparingRebalance for 300 s
// (the rebalance timeout, the stream's max-poll-interval), holding on to
// killed members and to the survivor's own earlier member. After the last
// kill the survivor must hold every partition alone within killBound
// (session timeout plus transaction timeout plus 30 s), and every wait for
// a process to get partitions has that bound too, from the kill before it.
// The input (TestStreamStateCrash's counts inputs, 40 keys of 150 each)
// is fed at a pace (killFeedEvery), so that each process finds inputs to
// process; the rest comes at once after the last kill. The survivor then
// finishes, and a read_committed reader must find every key's counts 1 to
// 150 exactly once and in order (checkCounts).
//
// Each process has its client id, "survivor" or "victim-N", which the
// group's description lists for its members. A goroutine describes the
// group every 100 ms; from that the test logs, for each kill, how long
// until the killed process's member left the group.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	killCount     = 8
	killSessionMs = 6000 // Kafka's minimum
	killTxnMs     = 6000
	// killBound: a killed member leaves within the session timeout, its
	// open transaction is aborted within the transaction timeout (a real
	// broker looks for those every 10 s: in the margin), and the
	// rebalance takes what the margin leaves. Not a tight bound: a group
	// that stalls waits for the rebalance timeout, 300 s.
	killBound = (killSessionMs+killTxnMs)*time.Millisecond + 30*time.Second

	// The input comes killFeedChunk records every killFeedEvery (100 a
	// second, 60 s for all) until the kills are over.
	killFeedChunk = countKeys / 2
	killFeedEvery = 200 * time.Millisecond

	survivor = "survivor"
)

// killConfig is stateConfig with a client id, and with the session and
// transaction timeouts of the constants above.
const killConfig = `(list "servers" => kafka-servers "group" => %q "client-id" => %q
    "session-timeout" => %d "heartbeat-interval" => 1000 "max-poll-records" => 100
    "transaction-timeout" => %d "log-level" => "info")`

func TestStreamKills(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	b := startBrokerProc(t, bin, "--port", "0", "--brokers", "3", "--no-auto-create")
	streamKills(t, bin, b.addrs, "")
}

// killRig is the counts scenario (stateRig), fed at a pace, with the
// group's descriptions and the kills.
type killRig struct {
	*stateRig
	release chan struct{} // closed after the last kill: feed the rest
	fed     atomic.Int64  // inputs produced

	mu    sync.Mutex
	snaps []groupSnap // the group's descriptions, in time order
	kills []killed
}

// groupSnap is a description of the group.
type groupSnap struct {
	at      time.Time
	state   string
	members []snapMember
}

type snapMember struct {
	client string
	parts  []int32 // input partitions assigned
}

// killed is a kill.
type killed struct {
	client, how string
	at          time.Time
}

func (s groupSnap) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s with %d members", s.state, len(s.members))
	for _, m := range s.members {
		fmt.Fprintf(&b, "; %s: partitions %v", m.client, m.parts)
	}
	return b.String()
}

// member is the member of client, if listed.
func (s groupSnap) member(client string) (snapMember, bool) {
	for _, m := range s.members {
		if m.client == client {
			return m, true
		}
	}
	return snapMember{}, false
}

// alone: the survivor alone, stable, holding every partition.
func (s groupSnap) alone() bool {
	return s.state == "Stable" && len(s.members) == 1 && s.members[0].client == survivor && len(s.members[0].parts) == statePartitions
}

// streamKills runs the scenario on the brokers at addrs, with topic and
// group names that start with prefix.
func streamKills(t *testing.T, bin string, addrs []string, prefix string) {
	start := time.Now()
	k := newKillRig(t, bin, addrs, prefix)
	s := k.startAs(t, survivor)
	k.waitGroup(t, "the survivor alone with every partition", start, s, groupSnap.alone)
	last := time.Now()
	for i := range killCount {
		client := fmt.Sprintf("victim-%d", i+1)
		p := k.startAs(t, client)
		started := time.Now()
		if i%2 == 0 {
			k.waitProcessing(t, client, last, s, p)
			k.killMidRun(t, p, k.committed())
			k.record(client, "processing")
		} else {
			delay := time.Second + rand.N(2*time.Second)
			k.waitFor(t, delay, s, p)
			snap := k.latest()
			k.kill(t, p, k.committed())
			k.record(client, "joining")
			_, listed := snap.member(client)
			t.Logf("%s was killed %v after its start, joining: listed in the group %v, which was %s",
				client, time.Since(started).Round(time.Millisecond), listed, snap)
		}
		last = time.Now()
	}
	final := k.waitGroup(t, "after the last kill, the survivor alone with every partition", last, s, groupSnap.alone)
	k.report(t)
	t.Logf("after the last kill, the survivor held every partition alone after %v (bound %v)", final.at.Sub(last).Round(time.Millisecond), killBound)
	close(k.release)
	k.waitCommitted(t, "all inputs committed", func(n int64) bool { return n == k.inputs }, s)
	restored := restores(s)
	if processed := k.term(t, s); processed <= 0 {
		t.Errorf("the survivor processed %d inputs", processed)
	}
	t.Logf("the survivor restored %d changelog records", restored)
	k.check(t)
	t.Logf("took %v", time.Since(start).Round(time.Millisecond))
}

// newKillRig creates the input and output topics, starts feeding the
// input and describing the group.
func newKillRig(t *testing.T, bin string, addrs []string, prefix string) *killRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	t.Cleanup(cancel)
	k := &killRig{release: make(chan struct{}), stateRig: &stateRig{crashRig: &crashRig{bin: bin, guarantee: "exactly-once",
		addrs: addrs, servers: addrs[0], adm: newAdmin(t, addrs), ctx: ctx,
		in: prefix + "in", out: prefix + "out", group: prefix + "killed"}}}
	for _, topic := range []string{k.in, k.out} {
		if _, err := k.adm.CreateTopic(ctx, statePartitions, 1, nil, topic); err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	var rs []*kgo.Record
	for seq := range countPerKey {
		for key := range countKeys {
			rs = append(rs, &kgo.Record{Topic: k.in, Key: fmt.Appendf(nil, "k%d", key), Value: fmt.Appendf(nil, "k%d-%d", key, seq)})
		}
	}
	k.inputs = int64(len(rs))
	k.feed(t, rs)
	k.watch(t)
	return k
}

// feed produces rs, killFeedChunk records every killFeedEvery until
// release is closed, then the rest, in a goroutine that ends with the
// test.
func (k *killRig) feed(t *testing.T, rs []*kgo.Record) {
	cl := newClient(t, k.addrs)
	ctx, cancel := context.WithCancel(k.ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(killFeedEvery)
		defer tick.Stop()
		for sent := 0; sent < len(rs); {
			n := killFeedChunk
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-k.release:
				n = len(rs)
			}
			chunk := rs[sent:min(len(rs), sent+n)]
			if err := cl.ProduceSync(ctx, chunk...).FirstErr(); err != nil {
				if ctx.Err() == nil {
					t.Errorf("feed the input: %v", err)
				}
				return
			}
			sent += len(chunk)
			k.fed.Store(int64(sent))
		}
	}()
}

// watch describes the group every 100 ms, in a goroutine that ends with
// the test.
func (k *killRig) watch(t *testing.T) {
	ctx, cancel := context.WithCancel(k.ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
			groups, err := k.adm.DescribeGroups(dctx, k.group)
			dcancel()
			if g, ok := groups[k.group]; err == nil && ok && g.Err == nil {
				s := groupSnap{at: time.Now(), state: g.State}
				for _, m := range g.Members {
					sm := snapMember{client: m.ClientID}
					if c, ok := m.Assigned.AsConsumer(); ok {
						for _, tp := range c.Topics {
							if tp.Topic == k.in {
								sm.parts = append(sm.parts, tp.Partitions...)
							}
						}
					}
					slices.Sort(sm.parts)
					s.members = append(s.members, sm)
				}
				slices.SortFunc(s.members, func(a, b snapMember) int { return strings.Compare(a.client, b.client) })
				k.mu.Lock()
				k.snaps = append(k.snaps, s)
				k.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

// latest is the group's latest description.
func (k *killRig) latest() groupSnap {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.snaps) == 0 {
		return groupSnap{state: "not described yet"}
	}
	return k.snaps[len(k.snaps)-1]
}

// record notes that client was killed, now.
func (k *killRig) record(client, how string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kills = append(k.kills, killed{client: client, how: how, at: time.Now()})
}

// startAs starts a stream process with client id client.
func (k *killRig) startAs(t *testing.T, client string) *peerProc {
	t.Helper()
	script := filepath.Join(t.TempDir(), client+".bpl")
	writeFile(t, script, fmt.Sprintf(`(kafka-stream `+killConfig+countStream,
		k.group, client, killSessionMs, killTxnMs, k.in, k.out, k.guarantee, stateThrottle))
	p := startPeer(t, context.Background(), k.bin, "run", "--servers", k.servers, script)
	t.Logf("%s process started (pid %d)", client, p.cmd.Process.Pid)
	return p
}

// waitGroup waits until the group's description satisfies done, for
// killBound after since at most, failing if the survivor s exits
// meanwhile.
func (k *killRig) waitGroup(t *testing.T, what string, since time.Time, s *peerProc, done func(groupSnap) bool) groupSnap {
	t.Helper()
	for {
		if snap := k.latest(); done(snap) {
			t.Logf("%s: %s, %v after the last kill or start", what, snap, snap.at.Sub(since).Round(time.Millisecond))
			return snap
		}
		k.stalled(t, what, since, s)
		time.Sleep(20 * time.Millisecond)
	}
}

// waitProcessing waits until client's process p holds input partitions in
// a stable group and the group's committed offset of one of them
// advanced: p committed a transaction. It waits killBound after since at
// most.
func (k *killRig) waitProcessing(t *testing.T, client string, since time.Time, s, p *peerProc) {
	t.Helper()
	what := client + " processing"
	var parts []int32
	var base map[int32]int64
	for {
		if k.fed.Load() == k.inputs {
			t.Fatalf("%s: the input ran out before it: feed slower (killFeedEvery)", what)
		}
		snap := k.latest()
		m, ok := snap.member(client)
		switch {
		case snap.state != "Stable" || !ok || len(m.parts) == 0:
			parts = nil
		case !slices.Equal(parts, m.parts):
			parts, base = m.parts, k.committedAt()
		default:
			now := k.committedAt()
			for _, part := range parts {
				if base != nil && now != nil && now[part] > base[part] {
					t.Logf("%s: holds partitions %v, committed partition %d to %d, %v after the last kill or start", what, parts, part, now[part], time.Since(since).Round(time.Millisecond))
					return
				}
			}
			if base == nil {
				base = now
			}
		}
		k.stalled(t, what, since, s, p)
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor waits d, failing if the survivor s or p exits meanwhile.
func (k *killRig) waitFor(t *testing.T, d time.Duration, s, p *peerProc) {
	t.Helper()
	select {
	case <-s.done:
	case <-p.done:
	case <-time.After(d):
		return
	}
	k.stalled(t, "waiting", time.Now(), s, p)
}

// stalled fails t when the survivor s or one of procs exited, or, with
// the group's latest description and the survivor's log, when
// since+killBound passed.
func (k *killRig) stalled(t *testing.T, what string, since time.Time, s *peerProc, procs ...*peerProc) {
	t.Helper()
	for _, p := range append([]*peerProc{s}, procs...) {
		if p.exited() {
			t.Fatalf("%s: a stream process exited: %v\n%s", what, p.err, p)
		}
	}
	if waited := time.Since(since); waited > killBound {
		k.report(t)
		t.Fatalf("%s: not so %v after the last kill or start, beyond the bound %v (session timeout %d ms, transaction timeout %d ms, and 30 s): the group stalled; it is %s\nthe survivor's log of its group, its end:\n%s",
			what, waited.Round(time.Millisecond), killBound, killSessionMs, killTxnMs, k.latest(), groupLines(s.stderr.String(), 30))
	}
}

// report logs, for each kill, how long until the killed process's member
// left the group (the group is not given time to settle between kills:
// the next process joins at once).
func (k *killRig) report(t *testing.T) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, kl := range k.kills {
		left, listed := "never", false
		for _, s := range k.snaps {
			_, in := s.member(kl.client)
			if !s.at.After(kl.at) {
				listed = listed || in
			} else if !in {
				left = "after " + s.at.Sub(kl.at).Round(time.Millisecond).String()
				break
			}
		}
		if !listed {
			left = "(it was never listed)"
		}
		t.Logf("kill %d, %s while %s: its member left the group %s", i+1, kl.client, kl.how, left)
	}
}

// groupLines is the last n lines of a stream process's log about its
// group: its joins, syncs, heartbeats and errors (its transactions left
// out).
func groupLines(log string, n int) string {
	var lines []string
	for line := range strings.Lines(log) {
		l := strings.ToLower(line)
		if strings.Contains(l, "join") || strings.Contains(l, "sync") || strings.Contains(l, "heartbeat") ||
			strings.Contains(l, "rebalanc") || strings.Contains(l, "error") || strings.Contains(l, "warn") {
			lines = append(lines, strings.TrimRight(line, "\n"))
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// committedAt is the group's committed offsets of the input partitions,
// -1 for those it has none of; nil when the broker did not say.
func (k *killRig) committedAt() map[int32]int64 {
	ctx, cancel := context.WithTimeout(k.ctx, 5*time.Second)
	defer cancel()
	offsets, err := k.adm.FetchOffsets(ctx, k.group)
	if err != nil {
		return nil
	}
	at := map[int32]int64{}
	for p := range int32(statePartitions) {
		at[p] = -1
	}
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.Topic == k.in {
			at[o.Partition] = o.At
		}
	})
	return at
}
