//go:build unix

package main

// TestFaults is the fault suite: the library against a real Apache Kafka
// 4.1.1 cluster of three KRaft nodes (the jars of testdata/kafka, as
// TestRealKafka's broker; Java's client from testdata/interop/java), whose
// nodes are killed with SIGKILL and restarted on their log directories
// while clients work. Each node is a broker and a controller
// (process.roles=broker,controller) in a static quorum of the three, on
// free ports of 127.0.0.1, a java process of its own with -Xmx512m.
// Topics have replication factor 3 and min.insync.replicas 2, unclean
// leader election is off, and the internal topics are replicated 3 times
// too (6 partitions each, for a quick start). Everything else is Kafka's
// stock default, in particular broker.session.timeout.ms 9 s: a killed
// node's partitions move only once the controller fences it, so every
// kill stalls the partitions it led for about 9 s, whatever the client.
//
// Each scenario asserts that no acknowledged record is lost and that each
// key's records come in order (of first occurrence, where duplicates are
// allowed), and logs the duplicates and the stalls. Records are 20,000
// keyed ones: keys k0..k99, values kK-SEQ, SEQ 0..199 per key. The
// scenarios run one after the other (their kills would disturb each
// other), each within its own deadline.
//
//   - leader killed under producers: a kafkabpl producer (acks all,
//     idempotent, the defaults) and Java's KafkaProducer (acks=all,
//     idempotent) send at the same pace, 25 records every 150 ms, to
//     topics of their own, while a node that leads partitions of both is
//     killed and restarted, and then the active controller, which also
//     leads partitions of both (leaders are moved back to their preferred
//     replicas between kills). The stall is the longest a record waited
//     for its ack: a kafkabpl Send call's duration, each Java record's
//     send-to-ack time.
//   - group churn: kafkabpl consumers of one group (Library consumers
//     committing after each poll, and a `kafkabpl run` process that never
//     commits) while records flow at 400 a second: a member joins and, in
//     the rebalance that starts, another is destroyed; a second one is
//     destroyed; the process is killed with kill -9; a member joins.
//     Then the members drain the topic to lag 0. The settle time of each
//     change is how long until the group is Stable with just the members
//     it should have, each with partitions; after a destroy it must be
//     well under the 45 s session timeout, as a destroyed member leaves at
//     once, even during a rebalance. After the kill it is the process's
//     session timeout, 10 s, plus the rebalance.
//   - broker killed under consumers: a kafkabpl consumer and Java's
//     KafkaConsumer, in groups of their own whose coordinator is the same
//     node, read one topic that a kgo producer writes at 500 records a
//     second; that node, which also leads partitions of the topic, is
//     killed, and restarted once the controller fenced it. The stall is
//     the longest a record took from its ack at the producer to a
//     consumer.
//   - broker killed under a stream: an exactly-once kafkabpl stream
//     upper-cases the 20,000 records (a 1 ms sleep each, so that the kill
//     lands mid-run); the coordinator of its group is killed and
//     restarted. A read_committed reader finds every output exactly once
//     and in order per key; the stall is the longest time no input was
//     committed.
//
// Java's client has no stream (Kafka Streams is a separate library, not
// among the jars), so the stream's stall stands alone.
//
// Without java or the jars the test skips, saying how to get them; with CI
// set it fails.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	faultPartitions = 6
	faultRecords    = crashKeys * crashPerKey // 20,000
)

func TestFaults(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	needJava(t)
	bin := buildBinary(t)
	start := time.Now()
	c := startFaultCluster(t, java)
	t.Run("leader killed under producers", func(t *testing.T) { faultProducers(t, c, java) })
	t.Run("group churn", func(t *testing.T) { faultChurn(t, c, bin) })
	t.Run("broker killed under consumers", func(t *testing.T) { faultConsumers(t, c, java) })
	t.Run("broker killed under a stream", func(t *testing.T) { faultStream(t, c) })
	t.Logf("the fault suite took %v", time.Since(start).Round(time.Millisecond))
}

// faultCluster is three Kafka nodes, each a broker and a controller.
type faultCluster struct {
	java  string
	nodes []*faultNode
	addrs []string
	adm   *kadm.Client
	cl    *kgo.Client
}

// servers is the bootstrap list of all nodes.
func (c *faultCluster) servers() string { return strings.Join(c.addrs, ",") }

// faultNode is one node: its ports, files and, while it runs, its process.
type faultNode struct {
	id    int32
	port  int
	props string
	log   string
	jvm   []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd ended
}

// startFaultCluster formats three log directories and starts the nodes,
// waits until all three serve as brokers, and kills them when the test
// ends. When the test failed, each node log's warnings and errors are
// logged.
func startFaultCluster(t *testing.T, java string) *faultCluster {
	t.Helper()
	start := time.Now()
	lib, err := filepath.Abs(filepath.Join(kafkaDir, "lib"))
	if err != nil {
		t.Fatal(err)
	}
	c := &faultCluster{java: java}
	var voters []string
	cports := make([]int, 3)
	for i := range 3 {
		cports[i] = freePort(t)
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, cports[i]))
	}
	for i := range 3 {
		dir := t.TempDir()
		n := &faultNode{id: int32(i + 1), port: freePort(t), props: filepath.Join(dir, "server.properties"), log: filepath.Join(dir, "server.log")}
		c.addrs = append(c.addrs, fmt.Sprintf("127.0.0.1:%d", n.port))
		writeFile(t, n.props, fmt.Sprintf(`process.roles=broker,controller
node.id=%[1]d
controller.quorum.voters=%[4]s
listeners=PLAINTEXT://127.0.0.1:%[2]d,CONTROLLER://127.0.0.1:%[3]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[2]d
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=%[5]s
auto.create.topics.enable=false
num.partitions=%[6]d
default.replication.factor=3
min.insync.replicas=2
unclean.leader.election.enable=false
offsets.topic.replication.factor=3
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=6
`, n.id, n.port, cports[i], strings.Join(voters, ","), filepath.Join(dir, "data"), faultPartitions))
		log4j := writeLog4j(t, dir, n.log)
		n.jvm = []string{"-Xms256m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true",
			"-XX:ErrorFile=" + filepath.Join(dir, "hs_err_%p.log"),
			"-Dlog4j2.configurationFile=" + log4j, "-cp", filepath.Join(lib, "*")}
		c.nodes = append(c.nodes, n)
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			n.kill()
			if t.Failed() {
				t.Logf("node %d's warnings and errors:\n%s", n.id, logTail(n.log, 40))
			}
		}
	})

	// A static quorum: each directory formatted alone, at once.
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() {
			out, err := exec.CommandContext(ctx, java, append(n.jvm, "kafka.tools.StorageTool", "format", "-t", realClusterID, "-c", n.props)...).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("node %d: kafka-storage format: %v\n%s", n.id, err, out)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		if err := n.start(java); err != nil {
			t.Fatal(err)
		}
	}
	c.cl = newClient(t, c.addrs, kgo.RetryTimeout(5*time.Second))
	c.adm = kadm.NewClient(c.cl)
	c.waitBrokers(t, ctx, 3)
	t.Logf("3 Kafka nodes on %s ready %v after start", c.servers(), time.Since(start).Round(time.Millisecond))
	return c
}

// start starts the node's process.
func (n *faultNode) start(java string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	cmd := exec.Command(java, append(slices.Clone(n.jvm), "kafka.Kafka", n.props)...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("node %d: %v", n.id, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	n.cmd, n.done = cmd, done
	return nil
}

// kill kills the node's process with SIGKILL, if it runs, and waits for
// it to end.
func (n *faultNode) kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
	n.cmd = nil
}

// exited says whether the node's process ended by itself.
func (n *faultNode) exited() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

func (c *faultCluster) node(id int32) *faultNode { return c.nodes[id-1] }

// checkAlive fails the test if a node's process ended by itself.
func (c *faultCluster) checkAlive(t *testing.T) {
	t.Helper()
	for _, n := range c.nodes {
		if n.exited() {
			t.Fatalf("node %d exited by itself:\n%s", n.id, logTail(n.log, 60))
		}
	}
}

// waitBrokers waits until metadata lists n brokers.
func (c *faultCluster) waitBrokers(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		c.checkAlive(t)
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, c.cl)
		cancel()
		if err == nil && len(resp.Brokers) == n {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("the cluster did not list %d brokers within %v: %v", n, testTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// partitions returns every partition of every topic, internal ones too.
func (c *faultCluster) partitions(ctx context.Context) (kadm.TopicDetails, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tds, err := c.adm.ListTopicsWithInternal(rctx)
	if err == nil {
		err = tds.Error()
	}
	return tds, err
}

// leads says which partitions of topic node id leads.
func (c *faultCluster) leads(t *testing.T, ctx context.Context, id int32, topic string) []int32 {
	t.Helper()
	tds, err := c.partitions(ctx)
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	var ps []int32
	for _, p := range tds[topic].Partitions.Sorted() {
		if p.Leader == id {
			ps = append(ps, p.Partition)
		}
	}
	return ps
}

// activeController returns the leader of the controller quorum.
func (c *faultCluster) activeController(t *testing.T, ctx context.Context) int32 {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(rctx, c.cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("describe quorum: %v %+v", err, resp)
	}
	return resp.Topics[0].Partitions[0].LeaderID
}

// coordinator returns the node that coordinates group.
func (c *faultCluster) coordinator(t *testing.T, ctx context.Context, group string) int32 {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r := c.adm.FindGroupCoordinators(rctx, group)[group]
		cancel()
		if r.Err == nil {
			return r.NodeID
		}
		if time.Now().After(deadline) {
			t.Fatalf("find coordinator of %s: %v", group, r.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill kills node id and waits until the controller fenced it: metadata
// no longer lists it and it leads no partition. It returns when that was.
func (c *faultCluster) kill(t *testing.T, ctx context.Context, id int32) time.Time {
	t.Helper()
	start := time.Now()
	c.node(id).kill()
	t.Logf("node %d killed with SIGKILL", id)
	deadline := start.Add(testTimeout)
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, c.cl)
		cancel()
		if err == nil && !slices.ContainsFunc(resp.Brokers, func(b kmsg.MetadataResponseBroker) bool { return b.NodeID == id }) {
			leads := false
			for _, topic := range resp.Topics {
				for _, p := range topic.Partitions {
					leads = leads || p.Leader == id
				}
			}
			if !leads {
				t.Logf("node %d fenced, its partitions moved, %v after the kill", id, time.Since(start).Round(time.Millisecond))
				return time.Now()
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("node %d still listed or leading %v after its kill (%v)", id, time.Since(start), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restart starts node id again on its log directory and waits until the
// cluster is whole: all three brokers listed, every partition (internal
// ones too) with its three replicas in sync; then it moves leaders back
// to their preferred replicas and waits for that too.
func (c *faultCluster) restart(t *testing.T, ctx context.Context, id int32) {
	t.Helper()
	start := time.Now()
	if err := c.node(id).start(c.java); err != nil {
		t.Fatal(err)
	}
	c.waitBrokers(t, ctx, 3)
	c.waitWhole(t, ctx)
	t.Logf("node %d restarted, all replicas in sync and leaders preferred, %v after its start", id, time.Since(start).Round(time.Millisecond))
}

// waitWhole waits (90 s at most) until every partition has its three
// replicas in sync, then elects the preferred leaders and waits until
// every partition is led by its first replica.
func (c *faultCluster) waitWhole(t *testing.T, ctx context.Context) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	elected := false
	var last string
	for {
		c.checkAlive(t)
		tds, err := c.partitions(ctx)
		if err == nil {
			last = ""
			for _, td := range tds.Sorted() {
				for _, p := range td.Partitions.Sorted() {
					switch {
					case len(p.ISR) != 3:
						last = fmt.Sprintf("%s/%d has isr %v", td.Topic, p.Partition, p.ISR)
					case elected && p.Leader != p.Replicas[0]:
						last = fmt.Sprintf("%s/%d is led by %d, not its preferred %d", td.Topic, p.Partition, p.Leader, p.Replicas[0])
					}
				}
			}
			if last == "" && elected {
				return
			}
			if last == "" {
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err = c.adm.ElectLeaders(rctx, kadm.ElectPreferredReplica, nil)
				cancel()
				elected = err == nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("the cluster is not whole after 90 s: %s (%v)", last, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createTopics creates topics with faultPartitions partitions, 3 replicas
// each, partition p's preferred leader node p%3+1 (so that every node
// leads two partitions of every topic), and waits until every replica is
// in sync and every leader preferred.
func (c *faultCluster) createTopics(t *testing.T, ctx context.Context, topics ...string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	for _, topic := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic = topic
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		for p := range int32(faultPartitions) {
			ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			ra.Partition = p
			ra.Replicas = []int32{p%3 + 1, (p+1)%3 + 1, (p+2)%3 + 1}
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, c.cl)
	if err == nil {
		for _, rt := range resp.Topics {
			if e := kerr.ErrorForCode(rt.ErrorCode); e != nil {
				err = errors.Join(err, fmt.Errorf("%s: %w", rt.Topic, e))
			}
		}
	}
	if err != nil {
		t.Fatalf("create topics %v: %v", topics, err)
	}
	c.waitWhole(t, ctx)
}

// faultCtx bounds a scenario.
func faultCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// faultValues are the values of the 20,000 records, in the order they
// are sent: SEQ 0 of every key, then SEQ 1, and so on.
func faultValues() []string {
	vs := make([]string, 0, faultRecords)
	for seq := range crashPerKey {
		for k := range crashKeys {
			vs = append(vs, fmt.Sprintf("k%d-%d", k, seq))
		}
	}
	return vs
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

// waitFor waits until cond holds, 90 s at most, failing the test if a
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
		if time.Since(start) > 90*time.Second {
			t.Fatalf("%s: not so after 90 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// faultProducers: a kafkabpl producer and Java's send side by side; a
// leader is killed and restarted, then the active controller.
func faultProducers(t *testing.T, c *faultCluster, java string) {
	const bplTopic, javaTopic = "produce-bpl", "produce-java"
	// The 20,000 records take 120 s at this pace, so that the producers
	// outlast both kills and restarts (about 40 s each on a 2-core
	// machine, the first after some 15 s of flow): at 100 ms a tick
	// (80 s), slow restarts once let the kafkabpl producer end first.
	const batch, tick = 25, 150 * time.Millisecond
	start := time.Now()
	ctx := faultCtx(t, 240*time.Second)
	c.createTopics(t, ctx, bplTopic, javaTopic)

	jp := startPeer(t, ctx, java, javaArgs("fault-produce", c.servers(), javaTopic,
		strconv.Itoa(crashKeys), strconv.Itoa(crashPerKey), strconv.Itoa(batch), strconv.Itoa(int(tick.Milliseconds())))...)

	lib := newRealLib(t)
	id := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": c.servers(), "acks": "all"}))
	values := faultValues()
	acked := make(map[string]bool, len(values))
	var sent atomic.Int64
	var maxSend time.Duration
	var failures []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := time.Now()
		for i := 0; i < len(values); i += batch {
			msgs := make([]kafkabpl.Message, 0, batch)
			for _, v := range values[i:min(i+batch, len(values))] {
				msgs = append(msgs, kafkabpl.Message{Key: faultKey(v), Value: v})
			}
			began := time.Now()
			_, err := lib.Send(ctx, id, []string{bplTopic}, msgs)
			maxSend = max(maxSend, time.Since(began))
			failed := map[int]bool{}
			if err != nil {
				failures = append(failures, err.Error())
				var se *kafkabpl.SendError
				if !errors.As(err, &se) {
					return
				}
				for _, f := range se.Failed {
					failed[f.Message] = true
				}
			}
			for j := range msgs {
				if !failed[j] {
					acked[values[i+j]] = true
				}
			}
			sent.Add(int64(len(msgs)))
			next = next.Add(tick)
			time.Sleep(time.Until(next))
		}
	}()

	// Both flow, then the kills.
	waitFor(t, c, "both producers acknowledged", func() bool {
		return sent.Load() >= 1000 && len(javaLines(jp.stdout.String(), "acked")) > 0
	}, jp)
	controller := c.activeController(t, ctx)
	victim := controller%3 + 1 // another node
	for round, what := range []string{"a leader", "the active controller"} {
		if round == 1 {
			victim = c.activeController(t, ctx)
		}
		if len(c.leads(t, ctx, victim, bplTopic)) == 0 || len(c.leads(t, ctx, victim, javaTopic)) == 0 {
			t.Fatalf("node %d (%s) leads no partition of %s or %s", victim, what, bplTopic, javaTopic)
		}
		before := sent.Load()
		t.Logf("kill %d: node %d, %s, leading partitions %v of %s and %v of %s, after %d kafkabpl records", round+1, victim, what,
			c.leads(t, ctx, victim, bplTopic), bplTopic, c.leads(t, ctx, victim, javaTopic), javaTopic, before)
		c.kill(t, ctx, victim)
		c.restart(t, ctx, victim)
		if sent.Load() == int64(len(values)) {
			t.Fatalf("the kafkabpl producer ended before the cluster was whole again; slow it")
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("the kafkabpl producer did not end: %d records sent", sent.Load())
	}
	if err := jp.wait(ctx); err != nil {
		t.Fatalf("Java producer: %v\n%s", err, jp)
	}
	doneLines := javaLines(jp.stdout.String(), "done")
	if len(doneLines) != 1 || len(doneLines[0]) != 4 {
		t.Fatalf("Java producer printed no done line\n%s", jp)
	}
	javaFailed, _ := strconv.Atoi(doneLines[0][2])
	javaMax, _ := strconv.Atoi(doneLines[0][3])
	javaAcked := make(map[string]bool, len(values))
	failedJava := map[string]bool{}
	for _, f := range javaLines(jp.stdout.String(), "failed") {
		failedJava[f[2]] = true
	}
	for _, v := range values {
		if !failedJava[v] {
			javaAcked[v] = true
		}
	}

	lostBPL, dupsBPL := checkKeyed(t, "kafkabpl producer's topic", readKeyed(t, ctx, c.addrs, bplTopic, len(acked)), acked)
	lostJava, dupsJava := checkKeyed(t, "Java producer's topic", readKeyed(t, ctx, c.addrs, javaTopic, len(javaAcked)), javaAcked)
	t.Logf("kafkabpl producer: %d acknowledged, %d failed sends %q; lost %d, duplicates %d; stall (longest Send, 25 records) %v",
		len(acked), len(failures), failures, lostBPL, dupsBPL, maxSend.Round(time.Millisecond))
	t.Logf("Java producer:     %d acknowledged, %d failed; lost %d, duplicates %d; stall (longest send-to-ack) %v",
		len(javaAcked), javaFailed, lostJava, dupsJava, time.Duration(javaMax)*time.Millisecond)
	t.Logf("stall: kafkabpl %v, Java %v; took %v", maxSend.Round(time.Millisecond), time.Duration(javaMax)*time.Millisecond, time.Since(start).Round(time.Millisecond))
}

// pacedProducer writes the 20,000 records to topic with kgo, rate a
// second, acks all, idempotent; it records when each was acknowledged
// (ms since 1970).
type pacedProducer struct {
	mu     sync.Mutex
	acked  map[string]int64
	failed []error
	sent   atomic.Int64
	done   chan struct{}
}

func startPacedProducer(t *testing.T, ctx context.Context, c *faultCluster, topic string, perSecond int) *pacedProducer {
	t.Helper()
	cl := newClient(t, c.addrs, kgo.RecordRetries(1<<30), kgo.RecordDeliveryTimeout(2*time.Minute))
	pp := &pacedProducer{acked: make(map[string]int64, faultRecords), done: make(chan struct{})}
	go func() {
		defer close(pp.done)
		const batch = 10
		tick := time.Second * batch / time.Duration(perSecond)
		next := time.Now()
		var wg sync.WaitGroup
		for i, v := range faultValues() {
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
				time.Sleep(time.Until(next))
			}
		}
		wg.Wait()
	}()
	return pp
}

// wait waits for the producer to end and returns the records it got
// acknowledged.
func (pp *pacedProducer) wait(t *testing.T, ctx context.Context) map[string]bool {
	t.Helper()
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
// committing after each poll, until stopped.
type bplMember struct {
	name    string
	id      string
	stopped atomic.Bool
	done    chan struct{}
	errs    []error // unexpected errors
}

func startBPLMember(t *testing.T, ctx context.Context, lib *kafkabpl.Library, name string, config map[string]any, into *consumed) *bplMember {
	t.Helper()
	m := &bplMember{name: name, done: make(chan struct{})}
	m.id = ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, config))
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
			if p.Len() > 0 && config["enable-auto-commit"] == false {
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
	case <-time.After(testTimeout):
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

// waitSettled waits (90 s at most) until group is Stable with n members,
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
		if time.Since(from) > 90*time.Second || ctx.Err() != nil {
			t.Fatalf("group %s not settled with %d members after %v: %s, %d members, %d with partitions",
				group, n, time.Since(from).Round(time.Millisecond), state, members, assigned)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// churnScript is the consumer that faultChurn kills with kill -9: a
// member of the group that polls for ever and never commits, so that
// what it read goes to the other members again. Its session timeout is
// 10 s, for the group to notice its death soon.
const churnScript = `(set c (kafka-create "consumer" (list "servers" => kafka-servers "group" => %q "topics" => %q
  "auto-offset-reset" => "earliest" "enable-auto-commit" => false
  "session-timeout" => 10000 "heartbeat-interval" => 1000)))
(while true (kafka-poll c 500))
`

// faultChurn: members come and go while records flow, then a drain.
func faultChurn(t *testing.T, c *faultCluster, bin string) {
	const topic, group = "churn", "churn"
	start := time.Now()
	ctx := faultCtx(t, 200*time.Second)
	c.createTopics(t, ctx, topic)
	lib := newRealLib(t)
	config := map[string]any{"servers": c.servers(), "group": group, "topics": topic,
		"auto-offset-reset": "earliest", "enable-auto-commit": false, "max-poll-records": 500}
	var got consumed
	script := filepath.Join(t.TempDir(), "churn.bpl")
	writeFile(t, script, fmt.Sprintf(churnScript, group, topic))

	a := startBPLMember(t, ctx, lib, "A", config, &got)
	b := startBPLMember(t, ctx, lib, "B", config, &got)
	proc := startPeer(t, ctx, bin, "run", "--servers", c.servers(), script)
	from := time.Now()
	t.Logf("members A, B and a process (pid %d) started; settled %v later", proc.cmd.Process.Pid,
		waitSettled(t, ctx, c, group, 3, from).Round(time.Millisecond))
	pp := startPacedProducer(t, ctx, c, topic, 400)
	waitFor(t, c, "records flow", func() bool { return pp.sent.Load() >= 2000 && got.distinct() >= 1000 }, proc)

	var settles []string
	var worst time.Duration
	// C joins; in the rebalance that starts, A is destroyed.
	cm := startBPLMember(t, ctx, lib, "C", config, &got)
	var state string
	waitFor(t, c, "the group rebalances for C", func() bool {
		state, _, _ = groupState(ctx, c.adm, group)
		return state == "PreparingRebalance" || state == "CompletingRebalance"
	}, proc)
	from = time.Now()
	took := a.stop(t, ctx, lib)
	settle := waitSettled(t, ctx, c, group, 3, from)
	worst = max(worst, settle)
	settles = append(settles, fmt.Sprintf("A destroyed during a rebalance (%s): %v (destroy took %v)", state, settle.Round(time.Millisecond), took.Round(time.Millisecond)))
	t.Log(settles[len(settles)-1])
	waitFor(t, c, "records flow", func() bool { return pp.sent.Load() >= 4000 }, proc)

	// B destroyed in a stable group.
	from = time.Now()
	took = b.stop(t, ctx, lib)
	settle = waitSettled(t, ctx, c, group, 2, from)
	worst = max(worst, settle)
	settles = append(settles, fmt.Sprintf("B destroyed: %v (destroy took %v)", settle.Round(time.Millisecond), took.Round(time.Millisecond)))
	t.Log(settles[len(settles)-1])
	waitFor(t, c, "records flow", func() bool { return pp.sent.Load() >= 6000 }, proc)

	// The process killed with kill -9: the group waits out its session.
	from = time.Now()
	if err := proc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-proc.done
	killSettle := waitSettled(t, ctx, c, group, 1, from)
	settles = append(settles, fmt.Sprintf("process killed with kill -9: %v (its session timeout 10 s)", killSettle.Round(time.Millisecond)))
	t.Log(settles[len(settles)-1])

	// D joins.
	from = time.Now()
	d := startBPLMember(t, ctx, lib, "D", config, &got)
	settle = waitSettled(t, ctx, c, group, 2, from)
	settles = append(settles, fmt.Sprintf("D joined: %v", settle.Round(time.Millisecond)))
	t.Log(settles[len(settles)-1])
	if pp.sent.Load() == faultRecords {
		t.Errorf("the records stopped flowing before the churn ended")
	}

	// Drain to lag 0.
	acked := pp.wait(t, ctx)
	drain := time.Now()
	waitFor(t, c, "all records consumed and committed", func() bool {
		if got.distinct() < len(acked) {
			return false
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		lags, err := c.adm.Lag(rctx, group)
		lag := lags[group]
		return err == nil && lag.Error() == nil && lag.Lag.Total() == 0
	})
	t.Logf("drained to lag 0 %v after the last record was acknowledged", time.Since(drain).Round(time.Millisecond))
	cm.stop(t, ctx, lib)
	d.stop(t, ctx, lib)

	got.mu.Lock()
	lost, dups := checkKeyed(t, "the group", got.recs, acked)
	got.mu.Unlock()
	t.Logf("group churn: %d acknowledged, lost %d, duplicates %d (the killed process never committed); settle times: %s; took %v",
		len(acked), lost, dups, strings.Join(settles, "; "), time.Since(start).Round(time.Millisecond))
	if worst > 15*time.Second {
		t.Errorf("the group took %v to settle after a destroy: a destroyed member must leave at once, not wait out the 45 s session timeout", worst.Round(time.Millisecond))
	}
	if killSettle > 30*time.Second {
		t.Errorf("the group took %v to settle after kill -9 of a member with a 10 s session timeout", killSettle.Round(time.Millisecond))
	}
}

// faultConsumers: a kafkabpl consumer and Java's read one topic; the
// coordinator of both groups, a leader of the topic too, is killed.
func faultConsumers(t *testing.T, c *faultCluster, java string) {
	const topic, bplGroup = "consume", "consume-bpl"
	start := time.Now()
	ctx := faultCtx(t, 200*time.Second)
	c.createTopics(t, ctx, topic)
	// Groups whose coordinator is the same node (which leads two
	// partitions of every topic).
	victim := c.coordinator(t, ctx, bplGroup)
	javaGroup := ""
	for i := range 100 {
		if g := fmt.Sprintf("consume-java-%d", i); c.coordinator(t, ctx, g) == victim {
			javaGroup = g
			break
		}
	}
	if javaGroup == "" {
		t.Fatalf("no group name for Java with coordinator %d", victim)
	}

	lib := newRealLib(t)
	var got consumed
	m := startBPLMember(t, ctx, lib, "kafkabpl consumer", map[string]any{"servers": c.servers(), "group": bplGroup, "topics": topic,
		"auto-offset-reset": "earliest"}, &got)
	jc := startPeer(t, ctx, java, javaArgs("fault-consume", c.servers(), topic, javaGroup, strconv.Itoa(faultRecords))...)
	waitFor(t, c, "both consumers have partitions", func() bool {
		state, _, assigned := groupState(ctx, c.adm, bplGroup)
		return state == "Stable" && assigned == 1 && len(javaLines(jc.stdout.String(), "assigned")) > 0
	}, jc)
	pp := startPacedProducer(t, ctx, c, topic, 500)
	waitFor(t, c, "records flow", func() bool { return got.distinct() >= 2500 }, jc)
	t.Logf("node %d coordinates %s and %s and leads partitions %v of %s", victim, bplGroup, javaGroup, c.leads(t, ctx, victim, topic), topic)
	killed := time.Now()
	c.kill(t, ctx, victim)
	c.restart(t, ctx, victim)
	if pp.sent.Load() == faultRecords {
		t.Errorf("the producer ended before the cluster was whole again")
	}
	acked := pp.wait(t, ctx)
	waitFor(t, c, "the kafkabpl consumer read all", func() bool { return got.distinct() >= len(acked) })
	m.stop(t, ctx, lib)
	if err := jc.wait(ctx); err != nil {
		t.Fatalf("Java consumer: %v\n%s", err, jc)
	}

	// The stall: the longest a record took from its ack to the consumer;
	// and per partition, the longest and when that record came (after the
	// kill).
	stall := func(recs []keyedValue, at []int64) (d time.Duration, where string) {
		worst := map[int32]time.Duration{}
		when := map[int32]time.Duration{}
		for i, kv := range recs {
			if a := pp.ackedAt(kv.value); a > 0 {
				lat := time.Duration(at[i]-a) * time.Millisecond
				d = max(d, lat)
				if lat > worst[kv.partition] {
					worst[kv.partition] = lat
					when[kv.partition] = time.UnixMilli(at[i]).Sub(killed)
				}
			}
		}
		var parts []string
		for p := range int32(faultPartitions) {
			parts = append(parts, fmt.Sprintf("p%d %v at %+.1fs", p, worst[p], when[p].Seconds()))
		}
		return d, strings.Join(parts, ", ")
	}
	got.mu.Lock()
	lostBPL, dupsBPL := checkKeyed(t, "kafkabpl consumer", got.recs, acked)
	stallBPL, whereBPL := stall(got.recs, got.at)
	got.mu.Unlock()
	var javaRecs []keyedValue
	var javaAt []int64
	for _, f := range javaLines(jc.stdout.String(), "got") {
		if len(f) != 5 {
			t.Fatalf("Java consumer printed %q", f)
		}
		p, _ := strconv.Atoi(f[2])
		javaRecs = append(javaRecs, keyedValue{f[1], f[3], int32(p)})
		at, _ := strconv.ParseInt(f[4], 10, 64)
		javaAt = append(javaAt, at)
	}
	lostJava, dupsJava := checkKeyed(t, "Java consumer", javaRecs, acked)
	stallJava, whereJava := stall(javaRecs, javaAt)
	t.Logf("kafkabpl consumer: lost %d, duplicates %d, stall (longest ack-to-consumer) %v; per partition, and when after the kill: %s", lostBPL, dupsBPL, stallBPL, whereBPL)
	t.Logf("Java consumer:     lost %d, duplicates %d, stall (longest ack-to-consumer) %v; per partition, and when after the kill: %s", lostJava, dupsJava, stallJava, whereJava)
	t.Logf("stall: kafkabpl %v, Java %v; %d acknowledged; took %v", stallBPL, stallJava, len(acked), time.Since(start).Round(time.Millisecond))
}

// faultStream: an exactly-once stream; its group's coordinator is killed.
func faultStream(t *testing.T, c *faultCluster) {
	const in, out, group = "stream-in", "stream-out", "stream-upcase"
	start := time.Now()
	ctx := faultCtx(t, 200*time.Second)
	c.createTopics(t, ctx, in, out)
	var rs []*kgo.Record
	for _, v := range faultValues() {
		rs = append(rs, &kgo.Record{Topic: in, Key: []byte(faultKey(v)), Value: []byte(v)})
	}
	if err := newClient(t, c.addrs).ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("seed: %v", err)
	}
	victim := c.coordinator(t, ctx, group)

	lib := newRealLib(t)
	lib.SetLogOutput(logWriter{t})
	upcase := func(_ context.Context, r *kafkabpl.Record) ([]kafkabpl.StreamOutput, error) {
		time.Sleep(time.Millisecond)
		return []kafkabpl.StreamOutput{{Message: kafkabpl.Message{Key: r.Key(), Value: strings.ToUpper(string(r.ValueBytes()))}}}, nil
	}
	id := ok[string](t)(lib.Stream(ctx, map[string]any{"servers": c.servers(), "group": group, "max-poll-records": 100},
		kafkabpl.StreamSpec{From: []string{in}, To: out, Transform: upcase, Guarantee: kafkabpl.ExactlyOnce}))

	// Watch the committed inputs: the stall is the longest time they did
	// not grow.
	var (
		mu        sync.Mutex
		st        *kafkabpl.StreamStatus
		stall     time.Duration
		stallFrom int64
	)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		last, lastAt := int64(-1), time.Now()
		for ctx.Err() == nil {
			s, err := lib.StreamStatus(ctx, id)
			if err != nil {
				return
			}
			mu.Lock()
			st = s
			if s.Processed != last {
				last, lastAt = s.Processed, time.Now()
			} else if d := time.Since(lastAt); d > stall && s.Processed < faultRecords {
				stall, stallFrom = d, last
			}
			mu.Unlock()
			if s.State != kafkabpl.StreamRunning || (s.Processed == faultRecords && s.Lag == 0) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	status := func() kafkabpl.StreamStatus {
		mu.Lock()
		defer mu.Unlock()
		if st == nil {
			return kafkabpl.StreamStatus{State: kafkabpl.StreamRunning}
		}
		return *st
	}
	waitFor(t, c, "a fifth of the inputs committed", func() bool {
		s := status()
		if s.State != kafkabpl.StreamRunning {
			t.Fatalf("stream %+v", s)
		}
		return s.Processed >= faultRecords/5
	})
	s := status()
	if s.Processed == faultRecords {
		t.Fatalf("all inputs were processed before the kill; slow the transform")
	}
	t.Logf("node %d coordinates %s and leads partitions %v of %s and %v of %s; %d inputs committed", victim, group,
		c.leads(t, ctx, victim, in), in, c.leads(t, ctx, victim, out), out, s.Processed)
	c.kill(t, ctx, victim)
	c.restart(t, ctx, victim)
	select {
	case <-watchDone:
	case <-time.After(90 * time.Second):
		t.Fatalf("the stream did not process all inputs within 90 s of the restart: %+v", status())
	}
	s = status()
	if s.State != kafkabpl.StreamRunning || s.Processed != faultRecords {
		t.Fatalf("stream: %+v, want running with %d inputs processed", s, faultRecords)
	}
	if ok, err := lib.Destroy(ctx, id); !ok || err != nil {
		t.Errorf("destroy: %v %v", ok, err)
	}
	recs := readCommitted(t, ctx, c.addrs, out, faultRecords)
	dups := checkPerKey(t, recs, true)
	all := readUncommitted(t, ctx, c.addrs, out, len(recs))
	mu.Lock()
	defer mu.Unlock()
	t.Logf("stream: %d outputs read_committed for %d inputs (lost 0, duplicates %d, checked exactly once); read_uncommitted sees %d (%d from aborted transactions); %d transactions, %d aborted; stall (longest time no input committed) %v at %d inputs; took %v",
		len(recs), faultRecords, dups, all, all-len(recs), s.Transactions, s.Aborted, stall.Round(time.Millisecond), stallFrom, time.Since(start).Round(time.Millisecond))
}
