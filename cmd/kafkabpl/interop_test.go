//go:build unix

package main

// Interop tests: real, independent Kafka clients against "kafkabpl broker",
// exchanging messages with BPL scripts run by "kafkabpl run". The peers are
// Debian's kcat (librdkafka) and kafka-python (python3-kafka, run with
// /usr/bin/python3), and Apache Kafka's Java client (TestJavaInterop, in
// java_interop_test.go). Without them the tests skip, saying what to
// install; with CI set they fail instead.
//
// Each subtest of TestInterop starts its own broker process (3 brokers,
// 4 partitions per topic) from the binary built once per run, and the
// topics it uses are created at start (--topic), so that all clients see 4
// partitions from their first request. (Topics created on first use work
// too, for kafka-python as well, which asks for metadata with version 1:
// the "kafka-python creates a topic" subtest shows it.) The scripts are in
// testdata/interop: consume.bpl reads 40 messages from topic to-bpl,
// produce.bpl sends 40 to from-bpl, group.bpl is a member of group
// "shared" reading topic jobs, and peer.py is the kafka-python side of each
// (java/Peer.java the Java side; typed-produce.bpl and typed-consume.bpl
// exchange numbers with it on the topics of typedMessages).
//
//   - kcat to BPL: messages kcat produced with librdkafka's Java-compatible
//     murmur2 partitioner reach a BPL consumer (poll-format records, reset
//     earliest) each once, with their values, on the partition kcat chose.
//   - BPL to kcat: messages a BPL script sent with names as keys reach kcat
//     each once, and each key is on the partition kcat itself puts it on.
//   - kafka-python to BPL and BPL to kafka-python: the same two proofs with
//     kafka-python's KafkaProducer (default partitioner: murmur2) and
//     KafkaConsumer.
//   - group shared with kafka-python: a BPL consumer and a kafka-python
//     KafkaConsumer in one group agree on an assignment strategy (both offer
//     range, then roundrobin) and split the 4 partitions; 200 keyed
//     messages are each consumed exactly once overall, by the member that
//     owns the partition, and both members get some.
//
// The 40 messages (interopMessages) have keys of 6 to 9 bytes, some not
// ASCII, so that murmur2 hashes every tail length and UTF-8; each side's
// placement is also checked against kgo's Java-compatible murmur2, so all
// clients agree with Java's.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kgo"
)

// interopPartitions is the partition count of every topic in these tests.
const interopPartitions = 4

// pythonPath is Debian's python, which has python3-kafka; the python3
// first on PATH may be another one.
const pythonPath = "/usr/bin/python3"

func TestInterop(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	t.Run("kcat to BPL", func(t *testing.T) {
		t.Parallel()
		kcat := needKcat(t)
		ctx, servers := interopBroker(t, bin)
		msgs := interopMessages()
		kcatProduce(t, ctx, kcat, servers, "to-bpl", msgs)
		placed := kcatConsume(t, ctx, kcat, servers, "to-bpl")
		checkPlacement(t, "kcat", placed, msgs)
		got := gotLines(t, runPeer(t, ctx, bin, "run", "--servers", servers, "testdata/interop/consume.bpl"))
		checkDelivered(t, "BPL consumer", got, placed)
	})
	t.Run("BPL to kcat", func(t *testing.T) {
		t.Parallel()
		kcat := needKcat(t)
		ctx, servers := interopBroker(t, bin)
		msgs := interopMessages()
		runBPLProducer(t, ctx, bin, servers)
		got := kcatConsume(t, ctx, kcat, servers, "from-bpl")
		kcatProduce(t, ctx, kcat, servers, "ref", msgs)
		ref := kcatConsume(t, ctx, kcat, servers, "ref")
		checkPlacement(t, "kcat", ref, msgs)
		checkDelivered(t, "kcat consumer (where kcat puts each key)", got, ref)
	})
	t.Run("kafka-python to BPL", func(t *testing.T) {
		t.Parallel()
		python := needPython(t)
		ctx, servers := interopBroker(t, bin)
		msgs := interopMessages()
		placed := pythonProduce(t, ctx, python, servers, "to-bpl", msgs)
		checkPlacement(t, "kafka-python", placed, msgs)
		got := gotLines(t, runPeer(t, ctx, bin, "run", "--servers", servers, "testdata/interop/consume.bpl"))
		checkDelivered(t, "BPL consumer", got, placed)
	})
	t.Run("kafka-python creates a topic", func(t *testing.T) {
		// Metadata v1 has no auto-creation field; Kafka, and the embedded
		// broker, read it as allowing creation.
		t.Parallel()
		python := needPython(t)
		ctx, servers := interopBroker(t, bin)
		msgs := interopMessages()
		placed := pythonProduce(t, ctx, python, servers, "made-by-python", msgs)
		checkPlacement(t, "kafka-python", placed, msgs)
	})
	t.Run("BPL to kafka-python", func(t *testing.T) {
		t.Parallel()
		python := needPython(t)
		ctx, servers := interopBroker(t, bin)
		msgs := interopMessages()
		runBPLProducer(t, ctx, bin, servers)
		got := gotLines(t, runPeer(t, ctx, python, pythonArgs("consume", servers, "from-bpl", strconv.Itoa(len(msgs)))...))
		ref := pythonProduce(t, ctx, python, servers, "ref", msgs)
		checkPlacement(t, "kafka-python", ref, msgs)
		checkDelivered(t, "kafka-python consumer (where kafka-python puts each key)", got, ref)
	})
	t.Run("group shared with kafka-python", func(t *testing.T) {
		t.Parallel()
		python := needPython(t)
		testGroupShared(t, bin, groupPeer{
			name: "kafka-python", clientID: "kafka-python-interop", cmd: python,
			args: func(servers string) []string { return pythonArgs("group", servers, "jobs", "shared") },
		})
	})
}

// groupPeer is the other member of group "shared" in testGroupShared: a
// peer's group mode, printing got and end lines as group.bpl does.
type groupPeer struct {
	name     string // for messages
	clientID string // the client.id it joins with
	cmd      string
	args     func(servers string) []string
	// offers, when not nil, are the protocols (assignors) the peer must
	// say it offers, in order, on a line "protocols NAME...".
	offers []string
}

// testGroupShared: a BPL consumer and a peer's consumer in group "shared"
// on topic jobs, on a broker process of its own, under the classic
// protocol (runGroupShared).
func testGroupShared(t *testing.T, bin string, peer groupPeer) {
	ctx, servers := interopBroker(t, bin)
	runGroupShared(t, bin, groupRun{ctx: ctx, servers: servers, topic: "jobs", group: "shared", protocol: "classic"}, peer)
}

// groupRun is where runGroupShared runs: a group of the protocol
// "classic" or "consumer" (KIP-848's) on a topic of 4 partitions, made
// already.
type groupRun struct {
	ctx                             context.Context
	servers, topic, group, protocol string
}

// runGroupShared: a BPL consumer (group.bpl) and a peer's consumer in
// one group, both joining under run's protocol. Once the group is Stable
// with both owning partitions, the test produces 200 keyed messages;
// once both together printed 200, it waits a second (a duplicate would
// show), then sends an end marker to every partition: each member stops
// once it saw a marker and then nothing for 2 s, committing and leaving
// the group.
func runGroupShared(t *testing.T, bin string, run groupRun, peer groupPeer) {
	const n = 200
	ctx, cancel := context.WithTimeout(run.ctx, 90*time.Second)
	defer cancel()
	addrs := strings.Split(run.servers, ",")
	bpl := startPeer(t, ctx, bin, "run", "--servers", run.servers, groupScript(t, run))
	other := startPeer(t, ctx, peer.cmd, peer.args(run.servers)...)
	members := map[string]*peerProc{"kafkabpl-interop": bpl, peer.clientID: other}

	// 1. Wait until the group is Stable, both members owning partitions,
	// as the library's describe-group shows a group of either protocol.
	lib := kafkabpl.New()
	defer lib.Close(context.Background())
	var owned map[string][]int32 // by client id
	var last string
	for owned == nil {
		for id, p := range members {
			if p.exited() {
				t.Fatalf("%s exited before the group was stable:\n%s", id, p)
			}
		}
		g, err := lib.DescribeGroup(ctx, run.servers, run.group)
		if ctx.Err() != nil {
			t.Fatalf("group %s not stable with 2 members owning partitions in time; last seen: %s", run.group, last)
		}
		if err == nil {
			m := make(map[string][]int32)
			for _, mem := range g.Members {
				for _, tp := range mem.Assignment {
					m[mem.ClientID] = append(m[mem.ClientID], tp.Partitions...)
				}
			}
			last = fmt.Sprintf("state %s, type %s, assignment %v", g.State, g.Type, m)
			if g.State == "Stable" && g.Type == run.protocol && len(g.Members) == 2 && len(m) == 2 && len(m["kafkabpl-interop"]) > 0 && len(m[peer.clientID]) > 0 {
				owned = m
				break
			}
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	adm := newAdmin(t, addrs)
	if run.protocol == "classic" {
		groups, err := adm.DescribeGroups(ctx, run.group)
		if err != nil || groups[run.group].Err != nil {
			t.Fatalf("describe groups: %v %v", err, groups[run.group].Err)
		}
		// kafkabpl offers range, then roundrobin; kafka-python the same;
		// Java range, then cooperative-sticky (checked below). Either way
		// range is the first choice of both members (and with Java the
		// only protocol both offer), so the group must choose it.
		protocol := groups[run.group].Protocol
		t.Logf("group %s: protocol %q, assignment %v", run.group, protocol, owned)
		if protocol != "range" {
			t.Errorf("group protocol %q, want range (the first choice of both members)", protocol)
		}
	} else {
		// A KIP-848 group takes members of the classic protocol too: no
		// member may have joined under it, as the broker says (member
		// type 0; -1 from a broker that does not say).
		groups, err := adm.DescribeConsumerGroups(ctx, run.group)
		if err != nil || groups[run.group].Err != nil {
			t.Fatalf("describe consumer groups: %v %v", err, groups[run.group].Err)
		}
		types := map[string]int8{}
		for _, m := range groups[run.group].Members {
			types[m.ClientID] = m.MemberType
			if m.MemberType == 0 {
				t.Errorf("%s joined group %s under the classic protocol", m.ClientID, run.group)
			}
		}
		t.Logf("group %s (KIP-848): assignor %q, member types %v (1: consumer, -1: not said), assignment %v", run.group, groups[run.group].AssignorName, types, owned)
	}
	if peer.offers != nil {
		var offered []string
		for line := range strings.Lines(other.stdout.String()) {
			if f := strings.Fields(line); len(f) > 0 && f[0] == "protocols" {
				offered = f[1:]
			}
		}
		if !slices.Equal(offered, peer.offers) {
			t.Errorf("%s offers protocols %q, want %q", peer.name, offered, peer.offers)
		}
	}
	all := slices.Concat(owned["kafkabpl-interop"], owned[peer.clientID])
	slices.Sort(all)
	if !slices.Equal(all, []int32{0, 1, 2, 3}) {
		t.Fatalf("partitions owned %v, want 0 to 3 each once", owned)
	}

	// 2. Produce, and wait until both together printed n messages.
	// kgo's default partitioner hashes keys with murmur2. Its default
	// compression, snappy, is unreadable to kafka-python without
	// python3-snappy: send uncompressed, as kafkabpl does by default.
	prod := newClient(t, addrs, kgo.ProducerBatchCompression(kgo.NoCompression()))
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: run.topic, Key: fmt.Appendf(nil, "job-%d", i), Value: fmt.Appendf(nil, "work %d", i)})
	}
	results := prod.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	want := make([]peerMsg, 0, n)
	for _, r := range results {
		want = append(want, peerMsg{string(r.Record.Key), r.Record.Partition, string(r.Record.Value)})
	}
	for len(gotLines(t, bpl.stdout.String()))+len(gotLines(t, other.stdout.String())) < n {
		if ctx.Err() != nil || bpl.exited() || other.exited() {
			t.Fatalf("consumed %d + %d of %d messages in time\nBPL: %s\n%s: %s",
				len(gotLines(t, bpl.stdout.String())), len(gotLines(t, other.stdout.String())), n, bpl, peer.name, other)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)

	// 3. The end markers, one per partition; both must stop by themselves.
	markers := newClient(t, addrs, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for p := range int32(interopPartitions) {
		if err := markers.ProduceSync(ctx, &kgo.Record{Topic: run.topic, Partition: p, Key: []byte("end"), Value: []byte("end")}).FirstErr(); err != nil {
			t.Fatalf("end marker: %v", err)
		}
	}
	for id, p := range members {
		if err := p.wait(ctx); err != nil {
			t.Fatalf("%s: %v\n%s", id, err, p)
		}
	}

	// 4. Each message once overall, from the member owning its partition.
	var union []peerMsg
	var ends []int32
	for id, p := range members {
		got := gotLines(t, p.stdout.String())
		if len(got) == 0 {
			t.Errorf("%s consumed nothing: the work was not shared", id)
		}
		for _, m := range got {
			if !slices.Contains(owned[id], m.partition) {
				t.Errorf("%s consumed %s from partition %d, which it does not own (%v)", id, m.key, m.partition, owned[id])
			}
		}
		mine := endLines(t, p.stdout.String())
		t.Logf("%s consumed %d messages; end markers of partitions %v", id, len(got), mine)
		union = append(union, got...)
		ends = append(ends, mine...)
	}
	checkDelivered(t, "the two members together", union, want)
	slices.Sort(ends)
	if !slices.Equal(ends, []int32{0, 1, 2, 3}) {
		t.Errorf("end markers seen of partitions %v, want each of 0 to 3 once", ends)
	}
}

// groupScript is group.bpl, or for a run of another topic, group or
// protocol a copy of it that says so.
func groupScript(t *testing.T, run groupRun) string {
	const script = "testdata/interop/group.bpl"
	if run.topic == "jobs" && run.group == "shared" && run.protocol == "classic" {
		return script
	}
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(src), `"jobs"`, strconv.Quote(run.topic))
	text = strings.ReplaceAll(text, `"group" => "shared"`, fmt.Sprintf(`"group" => %q "group-protocol" => %q`, run.group, run.protocol))
	if strings.Count(text, strconv.Quote(run.topic)) != 2 || !strings.Contains(text, `"group-protocol"`) {
		t.Fatalf("%s no longer names its topic twice and its group once:\n%s", script, src)
	}
	path := filepath.Join(t.TempDir(), "group.bpl")
	writeFile(t, path, text)
	return path
}

// missingTool fails the test when CI is set, else skips it; fix says how
// to get what is missing.
func missingTool(t testing.TB, what string, err error, fix string) {
	t.Helper()
	msg := fmt.Sprintf("%s: %v (%s)", what, err, fix)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func needKcat(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		missingTool(t, "kcat", err, "install it: apt-get install kcat")
	}
	return path
}

// needPython checks that Debian's python3 can import kafka-python.
func needPython(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, pythonPath, "-I", "-c", "import kafka; print(kafka.__version__)").CombinedOutput()
	if err != nil {
		if len(out) > 0 {
			err = fmt.Errorf("%v:\n%s", err, bytes.TrimSpace(out))
		}
		missingTool(t, pythonPath+" with kafka-python", err, "install it: apt-get install python3-kafka")
	}
	t.Logf("kafka-python %s", bytes.TrimSpace(out))
	return pythonPath
}

// pythonArgs runs peer.py isolated (-I: no user site, no PYTHON* variables),
// so that Debian's kafka-python is the one imported.
func pythonArgs(args ...string) []string {
	return append([]string{"-I", "testdata/interop/peer.py"}, args...)
}

// interopBroker starts a broker process for one subtest, with the
// scripts' topics and more made at start, and returns a context bounding
// the subtest and the servers.
func interopBroker(t *testing.T, bin string, more ...string) (context.Context, string) {
	t.Helper()
	topics := append([]string{"to-bpl", "from-bpl", "ref", "jobs"}, more...)
	p := startBrokerProc(t, bin, "--port", "0", "--partitions", strconv.Itoa(interopPartitions),
		"--topic", strings.Join(topics, ","))
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	t.Cleanup(cancel)
	return ctx, strings.Join(p.addrs, ",")
}

// peerMsg is a message as a client reports it; partition -1 when unknown.
type peerMsg struct {
	key       string
	partition int32
	value     string
}

// interopMessages are the messages of produce.bpl: keys key-I plus a
// suffix, values value I plus the suffix.
func interopMessages() []peerMsg {
	var msgs []peerMsg
	for _, suffix := range []string{"a", "bb", "ccc", "éé"} {
		for i := range 10 {
			msgs = append(msgs, peerMsg{fmt.Sprintf("key-%d%s", i, suffix), -1, fmt.Sprintf("value %d%s", i, suffix)})
		}
	}
	return msgs
}

// keyValueLines gives msgs as kcat -K:, peer.py produce and Peer.java
// produce read them.
func keyValueLines(msgs []peerMsg) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s:%s\n", m.key, m.value)
	}
	return b.String()
}

// runPeer runs a command to its end within ctx, feeding it stdin when
// given, and returns its stdout; a failure ends the test.
func runPeer(t *testing.T, ctx context.Context, name string, args ...string) string {
	t.Helper()
	return runPeerInput(t, ctx, "", name, args...)
}

func runPeerInput(t *testing.T, ctx context.Context, stdin, name string, args ...string) string {
	t.Helper()
	cmd := peerCommand(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v after %v\nstdout:\n%s\nstderr:\n%s", name, args, err, time.Since(start).Round(time.Millisecond), &stdout, &stderr)
	}
	return stdout.String()
}

// peerCommand returns the command of a peer that ctx ends. It is sent
// SIGQUIT first, and killed 5 s later, so that a peer that hangs says
// where: the JVM prints its threads' stacks, the Python peers their
// tracebacks (faulthandler).
func peerCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// peerProc is a command running in the background.
type peerProc struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser // for startPipedPeer's only
	stdout, stderr *syncBuffer
	done           chan struct{} // closed once Wait returned
	err            error
}

// startPeer starts a command whose standard input is empty.
func startPeer(t testing.TB, ctx context.Context, name string, args ...string) *peerProc {
	t.Helper()
	return startPeerCmd(t, ctx, false, name, args...)
}

// startPipedPeer starts a command with a pipe to its standard input, for
// the peers that stop, or learn how much to read, by what comes there.
func startPipedPeer(t *testing.T, ctx context.Context, name string, args ...string) *peerProc {
	t.Helper()
	return startPeerCmd(t, ctx, true, name, args...)
}

func startPeerCmd(t testing.TB, ctx context.Context, piped bool, name string, args ...string) *peerProc {
	t.Helper()
	p := &peerProc{stdout: new(syncBuffer), stderr: new(syncBuffer), done: make(chan struct{})}
	p.cmd = peerCommand(ctx, name, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if piped {
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.exited() {
			p.cmd.Process.Kill()
		}
		<-p.done
	})
	return p
}

func (p *peerProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for p to end by itself within ctx, and returns its error.
func (p *peerProc) wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return errors.New("still running at the deadline")
	}
}

func (p *peerProc) String() string {
	return fmt.Sprintf("%s\nstdout:\n%s\nstderr:\n%s", p.cmd, p.stdout, p.stderr)
}

// runBPLProducer runs produce.bpl, which sends the 40 interopMessages to
// from-bpl.
func runBPLProducer(t *testing.T, ctx context.Context, bin, servers string) {
	t.Helper()
	out := runPeer(t, ctx, bin, "run", "--servers", servers, "testdata/interop/produce.bpl")
	if !slices.Contains(strings.Split(out, "\n"), fmt.Sprintf("sent %d", len(interopMessages()))) {
		t.Fatalf("produce.bpl printed:\n%s\nwant a line: sent %d", out, len(interopMessages()))
	}
}

// kcatProduce sends msgs to topic with librdkafka's Java-compatible
// partitioner.
func kcatProduce(t *testing.T, ctx context.Context, kcat, servers, topic string, msgs []peerMsg) {
	t.Helper()
	runPeerInput(t, ctx, keyValueLines(msgs), kcat, "-P", "-b", servers, "-t", topic, "-K:",
		"-X", "partitioner=murmur2_random", "-X", "message.timeout.ms=30000")
}

// kcatConsume reads topic from its start to its end.
func kcatConsume(t *testing.T, ctx context.Context, kcat, servers, topic string) []peerMsg {
	t.Helper()
	out := runPeer(t, ctx, kcat, "-C", "-b", servers, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "got %k %p %s\n")
	return gotLines(t, out)
}

// pythonProduce sends msgs to topic with KafkaProducer and returns them
// with the partitions it reported.
func pythonProduce(t *testing.T, ctx context.Context, python, servers, topic string, msgs []peerMsg) []peerMsg {
	t.Helper()
	out := runPeerInput(t, ctx, keyValueLines(msgs), python, pythonArgs("produce", servers, topic)...)
	return parseLines(t, out, "sent")
}

func gotLines(t *testing.T, out string) []peerMsg { return parseLines(t, out, "got") }

// parseLines reads the lines "PREFIX KEY PARTITION VALUE" of out; other
// lines (a script's top-level results) are left out.
func parseLines(t *testing.T, out, prefix string) []peerMsg {
	t.Helper()
	var msgs []peerMsg
	for line := range strings.Lines(out) {
		f := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4)
		if f[0] != prefix {
			continue
		}
		var p int64
		var err error
		if len(f) == 4 {
			p, err = strconv.ParseInt(f[2], 10, 32)
		}
		if len(f) != 4 || err != nil {
			t.Errorf("malformed line %q, want %s KEY PARTITION VALUE", line, prefix)
			continue
		}
		msgs = append(msgs, peerMsg{f[1], int32(p), f[3]})
	}
	return msgs
}

// endLines reads the partitions of the lines "end PARTITION" of out.
func endLines(t *testing.T, out string) []int32 {
	t.Helper()
	var ps []int32
	for line := range strings.Lines(out) {
		s, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "end ")
		if !ok {
			continue
		}
		p, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			t.Errorf("malformed line %q, want end PARTITION", line)
		}
		ps = append(ps, int32(p))
	}
	return ps
}

// javaPartition is where Java's client puts key among n partitions
// (kgo's default partitioner hashes keys with the same murmur2).
func javaPartition(key string, n int) int32 {
	return int32(kgo.StickyKeyPartitioner(nil).ForTopic("").Partition(&kgo.Record{Key: []byte(key)}, n))
}

// checkPlacement checks that a peer placed exactly msgs, each key where
// Java's client would, and over every partition.
func checkPlacement(t *testing.T, peer string, placed, msgs []peerMsg) {
	t.Helper()
	want := make([]peerMsg, len(msgs))
	for i, m := range msgs {
		want[i] = peerMsg{m.key, javaPartition(m.key, interopPartitions), m.value}
	}
	checkDelivered(t, peer+"'s placement (want Java's murmur2 partition)", placed, want)
	used := map[int32]bool{}
	for _, m := range placed {
		used[m.partition] = true
	}
	if len(used) != interopPartitions {
		t.Errorf("%s used partitions %v of %d: the placement check means little", peer, used, interopPartitions)
	}
}

// checkDelivered checks that got holds each message of want exactly once,
// with its value, on its partition; and nothing else.
func checkDelivered(t *testing.T, who string, got, want []peerMsg) {
	t.Helper()
	wantBy := make(map[string]peerMsg, len(want))
	for _, m := range want {
		wantBy[m.key] = m
	}
	var problems []string
	count := make(map[string]int)
	for _, m := range got {
		count[m.key]++
		w, ok := wantBy[m.key]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("unexpected key %q (value %q)", m.key, m.value))
		case count[m.key] == 2:
			problems = append(problems, fmt.Sprintf("key %q more than once", m.key))
		case count[m.key] > 2:
		case m.value != w.value:
			problems = append(problems, fmt.Sprintf("key %q: value %q, want %q", m.key, m.value, w.value))
		case m.partition != w.partition:
			problems = append(problems, fmt.Sprintf("key %q: partition %d, want %d", m.key, m.partition, w.partition))
		}
	}
	for _, m := range want {
		if count[m.key] == 0 {
			problems = append(problems, fmt.Sprintf("key %q missing", m.key))
		}
	}
	if len(problems) > 0 {
		const most = 15
		if len(problems) > most {
			problems = append(problems[:most], fmt.Sprintf("and %d more", len(problems)-most))
		}
		t.Errorf("%s: %d messages, want %d:\n%s", who, len(got), len(want), strings.Join(problems, "\n"))
	}
}
