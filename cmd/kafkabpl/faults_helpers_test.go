//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The fault suite's tools: the records' values and their checks, a paced
// kgo producer, kafkabpl group members, and waits on the group.

// faultCtx bounds a scenario.
func faultCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// faultValues are the values of the stream's 20,000 records, in the
// order they are sent: faultValue(0) to faultValue(19,999).
func faultValues() []string {
	vs := make([]string, 0, faultRecords)
	for i := range faultRecords {
		vs = append(vs, faultValue(i))
	}
	return vs
}

// faultValue is the value of the i-th record a fault producer sends:
// kK-SEQ with K = i mod 100 and SEQ = i div 100, so SEQ 0 of every key,
// then SEQ 1, and so on. The producers run until their scenario stops
// them, so there is no last value; faultMaxRecords bounds them.
func faultValue(i int) string {
	return fmt.Sprintf("k%d-%d", i%crashKeys, i/crashKeys)
}

// faultKey is the key of value kK-SEQ: kK.
func faultKey(value string) string {
	k, _, _ := strings.Cut(value, "-")
	return k
}

// keyedValue is a record's key and value as text, and its partition.
type keyedValue struct {
	key, value string
	partition  int32
}

// checkKeyed checks what who read: each value kK-SEQ under key kK; every
// value of acked there (lost counts those missing); per key, values in
// order of SEQ by first occurrence (a value that comes again is a
// duplicate, counted). Values not in acked may come too: a send that
// failed may have been written. It returns the lost and the duplicates.
func checkKeyed(t *testing.T, who string, got []keyedValue, acked map[string]bool) (lost, dups int) {
	t.Helper()
	seen := make(map[string]bool, len(got))
	last := map[string]int{}
	bad := 0
	for i, kv := range got {
		var k, seq int
		if _, err := fmt.Sscanf(kv.value, "k%d-%d", &k, &seq); err != nil || kv.key != fmt.Sprintf("k%d", k) {
			if bad++; bad <= 5 {
				t.Errorf("%s: record %d: key %q value %q, want key kK and value kK-SEQ", who, i, kv.key, kv.value)
			}
			continue
		}
		if seen[kv.value] {
			dups++
			continue
		}
		seen[kv.value] = true
		if prev, ok := last[kv.key]; ok && seq < prev {
			if bad++; bad <= 5 {
				t.Errorf("%s: record %d: %s first came after %s-%d: out of order", who, i, kv.value, kv.key, prev)
			}
		}
		last[kv.key] = seq
	}
	var missing []string
	for v := range acked {
		if !seen[v] {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("%s: %d acknowledged records lost, such as %v", who, len(missing), missing[:min(10, len(missing))])
	}
	return len(missing), dups
}

// readKeyed reads topic from its start until n distinct values came
// (readCommitted's way) and returns the records' keys and values.
func readKeyed(t *testing.T, ctx context.Context, addrs []string, topic string, n int) []keyedValue {
	t.Helper()
	var got []keyedValue
	for _, r := range readCommitted(t, ctx, addrs, topic, n) {
		got = append(got, keyedValue{string(r.Key), string(r.Value), r.Partition})
	}
	return got
}

// javaLines returns the lines of a Java peer's output that start with
// word, split in fields.
func javaLines(out, word string) [][]string {
	var lines [][]string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == word {
			lines = append(lines, f)
		}
	}
	return lines
}

// waitFor waits until cond holds, faultWait at most, failing the test if a
// peer exits or a node dies meanwhile.
func waitFor(t *testing.T, c *faultCluster, what string, cond func() bool, peers ...*peerProc) {
	t.Helper()
	start := time.Now()
	for !cond() {
		c.checkAlive(t)
		for _, p := range peers {
			if p.exited() {
				t.Fatalf("%s: a peer exited: %v\n%s", what, p.err, p)
			}
		}
		if time.Since(start) > faultWait {
			t.Fatalf("%s: not so after %v", what, faultWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pacedProducer writes faultValue(0), faultValue(1), ... to a topic with
// kgo, rate a second, acks all, idempotent, until stopped (or until
// faultMaxRecords); it records when each was acknowledged (ms since 1970).
type pacedProducer struct {
	mu     sync.Mutex
	acked  map[string]int64
	failed []error
	sent   atomic.Int64
	stopc  chan struct{}
	stop   func() // ends the sends; wait then waits for their acks
	done   chan struct{}
}

func startPacedProducer(t *testing.T, ctx context.Context, c *faultCluster, topic string, perSecond int) *pacedProducer {
	t.Helper()
	// Retries every 100 ms, and a refresh of metadata with each, so that
	// the producer finds a partition's new leader at once and the gaps
	// the consumers see are theirs, not the producer's.
	cl := newClient(t, c.addrs, kgo.RecordRetries(1<<30), kgo.RecordDeliveryTimeout(2*time.Minute),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }), kgo.MetadataMinAge(100*time.Millisecond))
	pp := &pacedProducer{acked: make(map[string]int64, faultRecords), stopc: make(chan struct{}), done: make(chan struct{})}
	pp.stop = sync.OnceFunc(func() { close(pp.stopc) })
	go func() {
		defer close(pp.done)
		const batch = 10
		tick := time.Second * batch / time.Duration(perSecond)
		next := time.Now()
		var wg sync.WaitGroup
		for i := 0; i < faultMaxRecords && ctx.Err() == nil; i++ {
			v := faultValue(i)
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(faultKey(v)), Value: []byte(v)}, func(r *kgo.Record, err error) {
				defer wg.Done()
				pp.mu.Lock()
				defer pp.mu.Unlock()
				if err != nil {
					pp.failed = append(pp.failed, err)
					return
				}
				pp.acked[v] = time.Now().UnixMilli()
			})
			pp.sent.Add(1)
			if (i+1)%batch == 0 {
				next = next.Add(tick)
				select {
				case <-pp.stopc:
					wg.Wait()
					return
				case <-time.After(time.Until(next)):
				}
			}
		}
		wg.Wait()
	}()
	return pp
}

// ackCount is how many records were acknowledged so far.
func (pp *pacedProducer) ackCount() int {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return len(pp.acked)
}

// wait stops the producer, waits for the acks of what it sent, and
// returns the records it got acknowledged.
func (pp *pacedProducer) wait(t *testing.T, ctx context.Context) map[string]bool {
	t.Helper()
	pp.stop()
	select {
	case <-pp.done:
	case <-ctx.Done():
		t.Fatalf("the producer did not end: %d records sent", pp.sent.Load())
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if len(pp.failed) > 0 {
		t.Errorf("the producer failed %d records: %v", len(pp.failed), errors.Join(pp.failed[:min(3, len(pp.failed))]...))
	}
	if n := int(pp.sent.Load()); n == faultMaxRecords {
		t.Errorf("the producer sent all %d records it may before its scenario stopped it", n)
	}
	acked := make(map[string]bool, len(pp.acked))
	for v := range pp.acked {
		acked[v] = true
	}
	return acked
}

// ackedAt is when value was acknowledged, ms since 1970; 0 if it was not.
func (pp *pacedProducer) ackedAt(value string) int64 {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.acked[value]
}

// consumed is what a member read: the records in the order they came, and
// when each came (ms since 1970).
type consumed struct {
	mu   sync.Mutex
	recs []keyedValue
	at   []int64
	seen map[string]bool
}

func (cs *consumed) add(kv keyedValue, at int64) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.seen == nil {
		cs.seen = map[string]bool{}
	}
	cs.recs = append(cs.recs, kv)
	cs.at = append(cs.at, at)
	cs.seen[kv.value] = true
}

func (cs *consumed) distinct() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.seen)
}

// bplMember is a kafkabpl consumer polling in a goroutine of its own and
// committing after each poll (with auto-commit off, or a share
// consumer), until stopped.
type bplMember struct {
	name    string
	id      string
	stopped atomic.Bool
	done    chan struct{}
	errs    []error // unexpected errors
}

func startBPLMember(t *testing.T, ctx context.Context, lib *kafkabpl.Library, name string, config map[string]any, into *consumed) *bplMember {
	t.Helper()
	return startBPLMemberOf(t, ctx, lib, kafkabpl.Consumer, name, config, into)
}

// startBPLMemberOf is startBPLMember for a consumer of kind, Consumer or
// ShareConsumer.
func startBPLMemberOf(t *testing.T, ctx context.Context, lib *kafkabpl.Library, kind kafkabpl.Kind, name string, config map[string]any, into *consumed) *bplMember {
	t.Helper()
	m := &bplMember{name: name, done: make(chan struct{})}
	m.id = ok[string](t)(lib.Create(ctx, kind, config))
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			p, err := lib.Poll(ctx, m.id, 200*time.Millisecond)
			if m.stopped.Load() {
				return
			}
			if err != nil {
				m.errs = append(m.errs, err)
				time.Sleep(100 * time.Millisecond)
				continue
			}
			now := time.Now().UnixMilli()
			for _, tr := range p.Topics {
				for i := range tr.Records {
					r := &tr.Records[i]
					into.add(keyedValue{string(r.KeyBytes()), string(r.ValueBytes()), r.Partition()}, now)
				}
			}
			if p.Len() > 0 && (config["enable-auto-commit"] == false || kind == kafkabpl.ShareConsumer) {
				if err := lib.Commit(ctx, m.id); err != nil && !errors.Is(err, kafkabpl.ErrNotCommitted) && !m.stopped.Load() {
					m.errs = append(m.errs, err)
				}
			}
		}
	}()
	return m
}

// stop destroys the member and returns how long Destroy took.
func (m *bplMember) stop(t *testing.T, ctx context.Context, lib *kafkabpl.Library) time.Duration {
	t.Helper()
	m.stopped.Store(true)
	start := time.Now()
	if ok, err := lib.Destroy(ctx, m.id); !ok || err != nil {
		t.Errorf("destroy %s: %v %v", m.name, ok, err)
	}
	took := time.Since(start)
	select {
	case <-m.done:
	case <-time.After(faultWait):
		t.Fatalf("%s's poll loop did not end after its destroy", m.name)
	}
	if len(m.errs) > 0 {
		t.Logf("%s's poll or commit errors: %v", m.name, errors.Join(m.errs[:min(5, len(m.errs))]...))
	}
	return took
}

// groupState describes group: its state and how many members it has, and
// how many of those have partitions.
func groupState(ctx context.Context, adm *kadm.Client, group string) (state string, members, assigned int) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	groups, err := adm.DescribeGroups(rctx, group)
	g, ok := groups[group]
	if err != nil || !ok || g.Err != nil {
		return "unknown", 0, 0
	}
	for _, m := range g.Members {
		if c, ok := m.Assigned.AsConsumer(); ok && len(c.Topics) > 0 && len(c.Topics[0].Partitions) > 0 {
			assigned++
		}
	}
	return g.State, len(g.Members), assigned
}

// waitSettled waits (faultWait at most) until group is Stable with n members,
// each with partitions, and returns how long that took since from.
func waitSettled(t *testing.T, ctx context.Context, c *faultCluster, group string, n int, from time.Time) time.Duration {
	t.Helper()
	var state string
	var members, assigned int
	for {
		state, members, assigned = groupState(ctx, c.adm, group)
		if state == "Stable" && members == n && assigned == n {
			return time.Since(from)
		}
		if time.Since(from) > faultWait || ctx.Err() != nil {
			t.Fatalf("group %s not settled with %d members after %v: %s, %d members, %d with partitions",
				group, n, time.Since(from).Round(time.Millisecond), state, members, assigned)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// faultClientLog, when KAFKABPL_FAULT_LOG is set, sets config's
// "log-level" to debug and writes lib's log to a file named by it and the
// scenario (KAFKABPL_FAULT_LOG=/tmp/kgo gives /tmp/kgo-broker_killed_under_consumers.log),
// each line stamped with the time: franz-go's own account of a failover,
// to read beside the scenario's figures.
func faultClientLog(t *testing.T, lib *kafkabpl.Library, config map[string]any) {
	prefix := os.Getenv("KAFKABPL_FAULT_LOG")
	if prefix == "" {
		return
	}
	name := t.Name()
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	path := prefix + "-" + name + ".log"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	config["log-level"] = "debug"
	lib.SetLogOutput(&stampedWriter{w: f})
	t.Logf("the kafkabpl client's debug log goes to %s", path)
}

// stampedWriter prefixes each write (one log line) with the wall time.
type stampedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *stampedWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := fmt.Fprintf(s.w, "%s %s", time.Now().Format("15:04:05.000"), p); err != nil {
		return 0, err
	}
	return len(p), nil
}
