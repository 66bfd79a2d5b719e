//go:build unix

package main

// TestFaults is the fault suite: the library against a real Apache Kafka
// 4.4.0 cluster of three KRaft nodes (the jars of testdata/kafka, as
// TestRealKafka's broker; Java's client from testdata/interop/java), whose
// nodes are killed with SIGKILL and restarted on their log directories
// while clients work. Each node is a broker and a controller
// (process.roles=broker,controller) in a static quorum of the three, on
// free ports of 127.0.0.1, a java process of its own with -Xmx512m.
// Topics have replication factor 3 and min.insync.replicas 2, unclean
// leader election is off, and the internal topics are replicated 3 times
// too (6 partitions each, for a quick start; the share coordinator's state
// topic too). The transaction coordinators
// look for timed-out transactions every 500 ms, not 10 s, so that a
// transaction that outlasts its timeout is aborted soon after, as the
// scenario of a short transaction timeout needs. Everything else is Kafka's
// stock default, in particular broker.session.timeout.ms 9 s: a killed
// node's partitions move only once the controller fences it, so every
// kill stalls the partitions it led for about 9 s, whatever the client.
//
// Each scenario asserts that no acknowledged record is lost and that each
// key's records come in order (of first occurrence, where duplicates are
// allowed), and logs the duplicates and the stalls. Records are keyed:
// keys k0..k99, values kK-SEQ, SEQ counting up per key. Producers send
// until their scenario stops them, once the cluster is whole again and
// records flowed after the last restart, so that no scenario depends on
// how long a restart takes; the stream reads 20,000 records written
// before it starts. Each wait for a condition is bounded by faultWait (3
// minutes) and each scenario by a deadline of its own, generous enough
// for a loaded machine. Nothing asserts how fast anything went, but for
// bounds that tell a member that left from one waited out. The scenarios
// run one after the other (their kills would disturb each other).
//
//   - first send on a fresh cluster: a new kafkabpl producer and a new
//     Java KafkaProducer send one record each, at once, on the cluster
//     just started; both times are logged (the brokers hand out no
//     producer id until they have a block of them from the controller).
//   - leader killed under producers: a kafkabpl producer (acks all,
//     idempotent, the defaults) and Java's KafkaProducer (acks=all,
//     idempotent) send at the same pace, 8 records every 50 ms, to one
//     topic with the same keys (so that the brokers' part of a stall,
//     the same for both, does not decide the comparison), while a node
//     that leads partitions of it is killed and restarted, and then the
//     active controller, which leads partitions too (leaders are moved
//     back to their preferred replicas between kills). The stall is the
//     longest a record waited for its ack: a kafkabpl Send call's
//     duration, each Java record's send-to-ack time; it is also logged
//     per kill, with when the ack came after the fencing.
//   - group churn: kafkabpl consumers of one group (Library consumers
//     committing after each poll, and a `kafkabpl run` process that never
//     commits) while records flow at 400 a second: a member joins and, in
//     the rebalance that starts, another is destroyed; a second one is
//     destroyed; the process is killed with kill -9; a member joins.
//     Then the members drain the topic to lag 0. The settle time of each
//     change is how long until the group is Stable with just the members
//     it should have, each with partitions; after a destroy it must be
//     under 40 s, short of the 45 s session timeout, as a destroyed
//     member leaves at once, even during a rebalance. After the kill it
//     is the process's session timeout, 10 s, plus the rebalance, and
//     must be under 40 s too.
//   - broker killed under consumers: a kafkabpl consumer and Java's
//     KafkaConsumer, in groups of their own whose coordinator is the same
//     node, read one topic that a kgo producer writes at 500 records a
//     second; that node, which also leads partitions of the topic, is
//     killed, and restarted once the controller fenced it. The stall is
//     the longest a record took from its ack at the producer to a
//     consumer; the gaps are, per partition, the longest each consumer
//     went without a new record, beside the producer's longest without
//     an ack.
//   - broker killed under share consumers: two kafkabpl share consumers
//     of one share group (Java's client has one too, but no fault mode
//     here) read one topic that a kgo producer writes at 500 records a
//     second, committing (sending their acknowledgements) after each
//     poll; the node that coordinates the group, which also leads
//     partitions of the topic, is killed and restarted. Every
//     acknowledged record must be delivered; duplicates (records whose
//     acquisition the failover ended, delivered again) are logged, and
//     order is not checked: a share group gives no order, a record
//     released comes after those behind it (see faults_share_test.go).
//   - broker killed under a stream: an exactly-once kafkabpl stream
//     upper-cases 20,000 records (a 1 ms sleep each, so that the kill
//     lands mid-run); the coordinator of its group is killed and
//     restarted. A read_committed reader finds every output exactly once
//     and in order per key; the stall is the longest time no input was
//     committed.
//   - a stream's transaction aborted by the brokers: the same with a
//     transaction timeout of 2 s, shorter than a failover, and a node
//     killed that leads partitions of the output but does not coordinate
//     the stream's transactions. When the brokers abort the transaction
//     in flight and bump the producer's epoch, the stream must
//     re-initialize its producer and go on from its committed offsets,
//     still exactly once. They do not abort every time (the failover can
//     end first), so whether they did is logged; the root package's
//     TestStreamTransactionTimedOut makes it certain on kfake.
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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	faultPartitions = 6
	faultRecords    = crashKeys * crashPerKey // 20,000: the stream's inputs
	// faultMaxRecords bounds a producer that its scenario forgot to stop:
	// 200,000 records, 400 s at the fastest pace, 500 a second.
	faultMaxRecords = 10 * faultRecords
	// faultWait bounds each wait for a condition: a node fenced, the
	// cluster whole again, records flowing, a group settled. Three times
	// what they take on an idle 2-core machine at worst, so that a loaded
	// one passes too.
	faultWait = 3 * time.Minute
	// faultRequestWait bounds one request of those waits: a loaded
	// machine's JVMs may take seconds to answer one (2 s let a kill's
	// wait see nothing but timeouts for its 3 minutes).
	faultRequestWait = 10 * time.Second
)

func TestFaults(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	needJava(t)
	bin := buildBinary(t)
	start := time.Now()
	c := startFaultCluster(t, java)
	t.Run("first send on a fresh cluster", func(t *testing.T) { faultFirstSend(t, c, java) })
	t.Run("leader killed under producers", func(t *testing.T) { faultProducers(t, c, java) })
	t.Run("group churn", func(t *testing.T) { faultChurn(t, c, bin) })
	t.Run("broker killed under consumers", func(t *testing.T) { faultConsumers(t, c, java) })
	t.Run("broker killed under share consumers", func(t *testing.T) { faultShare(t, c) })
	t.Run("broker killed under a stream", func(t *testing.T) { faultStream(t, c, "stream-upcase", 0) })
	t.Run("a stream's transaction aborted by the brokers", func(t *testing.T) { faultStream(t, c, "stream-short-txn", 2000) })
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
transaction.abort.timed.out.transaction.cleanup.interval.ms=500
share.coordinator.state.topic.num.partitions=6
`, n.id, n.port, cports[i], strings.Join(voters, ","), filepath.Join(dir, "data"), faultPartitions))
		log4j := writeLog4j(t, dir, n.log)
		n.jvm = []string{"-Xms256m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true",
			"-XX:ErrorFile=" + filepath.Join(dir, "hs_err_%p.log"),
			"-Dlog4j2.configurationFile=" + log4j, "-cp", filepath.Join(lib, "*")}
		c.nodes = append(c.nodes, n)
	}
	t.Cleanup(func() {
		keep := os.Getenv("KAFKABPL_FAULT_LOG")
		for _, n := range c.nodes {
			n.kill()
			if t.Failed() {
				t.Logf("node %d's warnings and errors:\n%s", n.id, logTail(n.log, 40))
			}
			if keep != "" { // the nodes' own account, beside the clients' (faultClientLog)
				if b, err := os.ReadFile(n.log); err == nil {
					os.WriteFile(fmt.Sprintf("%s-node-%d.log", keep, n.id), b, 0o644)
				}
			}
		}
	})

	// A static quorum: each directory formatted alone, at once.
	ctx, cancel := context.WithTimeout(context.Background(), faultWait)
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

// running says whether the node's process was started and not killed.
func (n *faultNode) running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil
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
	deadline := time.Now().Add(faultWait)
	for {
		c.checkAlive(t)
		rctx, cancel := context.WithTimeout(ctx, faultRequestWait)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, c.cl)
		cancel()
		if err == nil && len(resp.Brokers) == n {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("the cluster did not list %d brokers within %v: %v", n, faultWait, err)
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
	return c.findCoordinator(t, ctx, "group", group, c.adm.FindGroupCoordinators)
}

// txnCoordinator is the node that coordinates transactional id txnID.
func (c *faultCluster) txnCoordinator(t *testing.T, ctx context.Context, txnID string) int32 {
	t.Helper()
	return c.findCoordinator(t, ctx, "transactional id", txnID, c.adm.FindTxnCoordinators)
}

func (c *faultCluster) findCoordinator(t *testing.T, ctx context.Context, what, key string,
	find func(context.Context, ...string) kadm.FindCoordinatorResponses) int32 {
	t.Helper()
	deadline := time.Now().Add(faultWait)
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r := find(rctx, key)[key]
		cancel()
		if r.Err == nil {
			return r.NodeID
		}
		if time.Now().After(deadline) {
			t.Fatalf("find coordinator of %s %s: %v", what, key, r.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill kills node id and waits until the controller fenced it: metadata
// no longer lists it and it leads no partition. It returns when that was.
// If the test ends with the node still down (it failed before restart),
// the node is started again and the cluster made whole, so that the
// next scenario has its three nodes: one left down made the next
// scenarios' topic creation time out.
func (c *faultCluster) kill(t *testing.T, ctx context.Context, id int32) time.Time {
	t.Helper()
	start := time.Now()
	c.node(id).kill()
	t.Logf("node %d killed with SIGKILL", id)
	t.Cleanup(func() {
		if c.node(id).running() {
			return
		}
		rctx, cancel := context.WithTimeout(context.Background(), 2*faultWait)
		defer cancel()
		c.restart(t, rctx, id)
	})
	deadline := start.Add(faultWait)
	var last string
	for {
		rctx, cancel := context.WithTimeout(ctx, faultRequestWait)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, c.cl)
		cancel()
		switch {
		case err != nil:
			last = fmt.Sprintf("metadata: %v", err)
		case slices.ContainsFunc(resp.Brokers, func(b kmsg.MetadataResponseBroker) bool { return b.NodeID == id }):
			last = "still listed"
		default:
			var led []string
			for _, topic := range resp.Topics {
				for _, p := range topic.Partitions {
					if p.Leader == id {
						led = append(led, fmt.Sprintf("%s/%d", *topic.Topic, p.Partition))
					}
				}
			}
			if len(led) == 0 {
				t.Logf("node %d fenced, its partitions moved, %v after the kill", id, time.Since(start).Round(time.Millisecond))
				return time.Now()
			}
			last = fmt.Sprintf("still leads %v", led)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("node %d still listed or leading %v after its kill: %s", id, time.Since(start), last)
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

// waitWhole waits (faultWait at most) until every partition has its three
// replicas in sync, then elects the preferred leaders and waits until
// every partition is led by its first replica.
func (c *faultCluster) waitWhole(t *testing.T, ctx context.Context) {
	t.Helper()
	deadline := time.Now().Add(faultWait)
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
			t.Fatalf("the cluster is not whole after %v: %s (%v)", faultWait, last, err)
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
	// A loaded machine's brokers may not answer in time (an i/o timeout):
	// the request is sent again, within faultWait, and a topic that an
	// earlier try created is there.
	deadline := time.Now().Add(faultWait)
	for try := 1; ; try++ {
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		resp, err := req.RequestWith(rctx, c.cl)
		cancel()
		if err == nil {
			for _, rt := range resp.Topics {
				e := kerr.ErrorForCode(rt.ErrorCode)
				if e != nil && !(try > 1 && errors.Is(e, kerr.TopicAlreadyExists)) {
					err = errors.Join(err, fmt.Errorf("%s: %w", rt.Topic, e))
				}
			}
		}
		if err == nil {
			break
		}
		var ke *kerr.Error
		if errors.As(err, &ke) && !ke.Retriable || time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("create topics %v (try %d): %v", topics, try, err)
		}
		t.Logf("create topics %v (try %d): %v; trying again", topics, try, err)
		time.Sleep(time.Second)
	}
	c.waitWhole(t, ctx)
}
