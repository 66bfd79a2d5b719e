//go:build unix

package main

// TestRealKafka proves the library and the command against a real Apache
// Kafka broker, where every other test uses kfake: one Kafka 4.1.1 broker
// (the jars that testdata/kafka/pom.xml fetches into its lib/, git-ignored;
// kafkaFetch is the command) in KRaft combined mode (broker and
// controller, node.id 1), on free ports of 127.0.0.1, with its data and
// its log in the test's temporary directory. Its settings are Kafka's
// stock defaults but for those one broker needs (replication factors of
// the internal topics 1) and the two that kfake's tests assume and stock
// Kafka has anyway (auto.create.topics.enable, num.partitions 1); in
// particular group.initial.rebalance.delay.ms is Kafka's 3000, as users
// have it, so every new group's first join takes 3 s. The broker starts
// once for the whole test (about 5 s with the format); subtests share it,
// each with topic and group names of its own, and run at the same time
// (concurrently: they mostly wait on the broker). Without java or the jars
// the test skips, saying how to get them; with CI set it fails.
//
// Unlike kfake, a Kafka broker applies what its controller decided a
// moment after the controller answered, so the library's create, grow and
// delete calls wait until the metadata shows their change (admin
// read-after-write and re-created topic check that they do).
//
//   - fresh cluster: before anything uses a group, list-groups answers
//     none and describe-group of a group that does not exist answers
//     GROUP_ID_NOT_FOUND, as they do later.
//   - examples: every examples/*.bpl run by the built command with
//     --servers prints examples/*.out, masked as TestExamples masks it and
//     for what a real broker legitimately reports otherwise (realNormalize:
//     broker ids, member ids). admin.bpl runs first and
//     alone, as it lists all topics and groups; quickstart.bpl, which names
//     localhost:9092, runs as a copy naming the broker instead.
//   - subscribe is deterministic: 24 rounds (6 at a time) of a consumer
//     with the default latest reset and a fresh group, subscribed by
//     Subscribe or by a first PollTopics, then one message sent, which
//     must be polled within 20 s, alone; none may be missed. A third of
//     the rounds use a topic that exists and holds an older message (which
//     must not come), a third a topic that does not exist yet (the
//     consumer's subscribe asks for it to be created), and a third a topic
//     that does not exist yet for a consumer that may not create topics:
//     the producer's first send creates it.
//   - commit then restart: 10 messages, a group consumer polls once
//     (max-poll-records 4) and commits (explicitly, or at destroy with
//     auto-commit); a new consumer of the group gets exactly the rest, in
//     order. Without a commit (auto-commit off) it gets all 10 again.
//   - group shares a topic: two consumers of one group split a 4-partition
//     topic; 400 keyed messages are each delivered once overall, each
//     partition read by one member only, and both get some.
//   - admin: create-topics (created, already existed), list-topics,
//     describe-topics (exact: leader 1, replicas and isr (1)), describing
//     a missing topic (an error, and it is not created), describe-cluster
//     (exact), create-partitions (grow, same count, shrink, missing
//     topic), list-groups and describe-group with the lag going to 0 and
//     the group Empty once its consumer left, delete-topics. It waits for
//     the broker to show a create or delete before looking.
//   - admin read-after-write: 60 rounds of create-topics then at once
//     describe-topics or list-topics, create-partitions then at once
//     describe-topics, delete-topics then at once list-topics: each must
//     show what was just done, as on kfake.
//   - re-created topic: TestAdminRecreatedTopic on the real broker: a topic
//     deleted and created again with another partition count; the producer
//     and two consumers that knew the old one read and write the new one.
//     Once with consumers that may not create topics (the topic created
//     again must be the one asked for), once with the default (a consumer
//     may create it again first, with 1 partition, as the package docs
//     warn; create-topics then answers false).
//   - errors: a send to a topic name the client refuses, to one Kafka
//     refuses (the internal __consumer_offsets) and to one that collides
//     with an existing topic ("a.b" and "a_b"); create-topics with
//     replication factor 3 on one broker; a group consumer with
//     auto-offset-reset none and no committed offset: its polls fail until
//     a seek, after which it reads.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafkaDir holds pom.xml and, once fetched, lib/: the broker's jars.
const kafkaDir = "testdata/kafka"

// kafkaFetch fetches the broker's jars into kafkaDir/lib; run from the
// repository root.
const kafkaFetch = "mvn -q -B -f cmd/kafkabpl/testdata/kafka/pom.xml dependency:copy-dependencies"

// realClusterID is the broker's cluster id: a Kafka Uuid (16 bytes in
// URL-safe base64), the bytes of "kafkabpl-testing".
var realClusterID = base64.RawURLEncoding.EncodeToString([]byte("kafkabpl-testing"))

func TestRealKafka(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	bin := buildBinary(t)
	k := startKafka(t, java)

	t.Run("fresh cluster", func(t *testing.T) { testRealFresh(t, k.servers) })
	t.Run("examples", func(t *testing.T) { testRealExamples(t, bin, k.servers) })
	concurrently(t, map[string]func(*testing.T){
		"subscribe is deterministic": func(t *testing.T) { testRealSubscribe(t, k.servers) },
		"commit then restart":        func(t *testing.T) { testRealCommit(t, k.servers) },
		"group shares a topic":       func(t *testing.T) { testRealGroup(t, k.servers) },
		"admin":                      func(t *testing.T) { testRealAdmin(t, k) },
		"admin read-after-write":     func(t *testing.T) { testRealReadAfterWrite(t, k.servers) },
		"re-created topic":           func(t *testing.T) { testRealRecreated(t, k.servers) },
		"errors":                     func(t *testing.T) { testRealErrors(t, k.servers) },
	})
}

// concurrently runs subtests at the same time and returns when all
// ended. They spend their time waiting for the broker (each new group's
// first join takes 3 s), so they run together even where -parallel, which
// t.Parallel obeys, is as small as the number of cores.
func concurrently(t *testing.T, tests map[string]func(*testing.T)) {
	var wg sync.WaitGroup
	for _, name := range slices.Sorted(maps.Keys(tests)) {
		wg.Go(func() { t.Run(name, tests[name]) })
	}
	wg.Wait()
}

// needKafka checks for java on PATH and the broker's jars in
// kafkaDir/lib; it returns java's path.
func needKafka(t *testing.T) string {
	t.Helper()
	return needJars(t, kafkaDir, "kafka_2.13", "the Kafka broker's jars", kafkaFetch)
}

// realKafka is a running Kafka broker.
type realKafka struct {
	servers string // 127.0.0.1:PORT
	port    int
	log     string // the broker's log file
}

// freePort returns a port of 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startKafka formats a KRaft log directory and starts a broker that is
// also its own controller, waits until it answers metadata requests with
// itself as the one broker (60 s at most), and kills it when the test
// ends. When the test failed, the broker log's warnings and errors are
// logged.
func startKafka(t *testing.T, java string) *realKafka {
	t.Helper()
	dir := t.TempDir()
	lib, err := filepath.Abs(filepath.Join(kafkaDir, "lib"))
	if err != nil {
		t.Fatal(err)
	}
	port, cport := freePort(t), freePort(t)
	k := &realKafka{servers: fmt.Sprintf("127.0.0.1:%d", port), port: port, log: filepath.Join(dir, "server.log")}
	props := filepath.Join(dir, "server.properties")
	writeFile(t, props, fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:%[2]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=%[3]s
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
auto.create.topics.enable=true
num.partitions=1
`, port, cport, filepath.Join(dir, "data")))
	log4j := writeLog4j(t, dir, k.log)
	jvm := []string{"-Xms256m", "-Xmx1g", "-XX:+UseG1GC", "-Djava.awt.headless=true", "-XX:ErrorFile=" + filepath.Join(dir, "hs_err_%p.log"),
		"-Dlog4j2.configurationFile=" + log4j, "-cp", filepath.Join(lib, "*")}

	// Kafka 4's quickstart: a dynamic quorum of this one controller.
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	format := exec.CommandContext(ctx, java, append(jvm, "kafka.tools.StorageTool", "format", "-t", realClusterID, "-c", props, "--standalone")...)
	format.Dir = dir
	if out, err := format.CombinedOutput(); err != nil {
		t.Fatalf("kafka-storage format: %v\n%s", err, out)
	}

	start := time.Now()
	broker := startPeer(t, context.Background(), java, append(jvm, "kafka.Kafka", props)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the broker's warnings and errors:\n%s", logTail(k.log, 60))
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.servers), kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		if broker.exited() {
			t.Fatalf("the Kafka broker exited: %s\n%s", broker, logTail(k.log, 60))
		}
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, cl)
		rcancel()
		if err == nil && len(resp.Brokers) == 1 && resp.Brokers[0].NodeID == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the Kafka broker did not answer within %v: %v\n%s\n%s", testTimeout, err, broker, logTail(k.log, 60))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("Kafka broker on %s ready %v after start", k.servers, time.Since(start).Round(time.Millisecond))
	return k
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logTail returns the last n lines of the broker's log that are warnings
// or errors.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var lines []string
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, "] WARN ") || strings.Contains(line, "] ERROR ") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], "")
}

// realNormalize masks, beyond normalize, what a real broker reports
// differently from kfake and legitimately so; it applies to the examples'
// output and to their expected output alike:
//   - broker ids in describe-topics: kfake numbers its brokers from 0,
//     the real broker is node 1;
//   - member ids: kfake's are the client id and 32 hex digits, Kafka's the
//     client id and a UUID.
//
// (A member's host reads the same from both: the library drops kfake's
// port and Kafka's leading slash.)
func realNormalize(s string) string {
	for _, r := range []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`"leader" => [0-9]+ "replicas" => \([0-9]+\) "isr" => \([0-9]+\)`), `"leader" => <broker> "replicas" => (<broker>) "isr" => (<broker>)`},
		{regexp.MustCompile(`kafkabpl-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), `kafkabpl-<id>`},
	} {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

// testRealExamples runs each example with the built command, as
// TestExamples does with an embedded cluster.
func testRealExamples(t *testing.T, bin, servers string) {
	scripts, err := filepath.Glob("../../examples/*.bpl")
	if err != nil || len(scripts) < 5 {
		t.Fatalf("examples: %v %v", scripts, err)
	}
	run := func(script string) func(*testing.T) {
		return func(t *testing.T) {
			name := strings.TrimSuffix(filepath.Base(script), ".bpl")
			src, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			path := script
			if strings.Contains(string(src), "localhost:9092") {
				path = filepath.Join(t.TempDir(), name+".bpl")
				writeFile(t, path, strings.ReplaceAll(string(src), "localhost:9092", servers))
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", "--servers", servers, path)
			cmd.WaitDelay = 5 * time.Second
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil || streamLog.ReplaceAllString(stderr.String(), "") != "" {
				t.Fatalf("kafkabpl run %s: %v after %v\nstderr:\n%s\nstdout:\n%s", name, err, time.Since(start).Round(time.Millisecond), &stderr, &stdout)
			}
			t.Logf("%s ran in %v", name, time.Since(start).Round(time.Millisecond))
			want, err := os.ReadFile(strings.TrimSuffix(script, ".bpl") + ".out")
			if err != nil {
				t.Fatal(err)
			}
			if got := realNormalize(normalize(stdout.String())); got != realNormalize(string(want)) {
				t.Errorf("output of %s on Kafka (masked):\n%s\nwant (%s.out, masked):\n%s", script, got, name, realNormalize(string(want)))
			}
		}
	}
	// admin.bpl lists every topic and group of the cluster: first, alone.
	others := map[string]func(*testing.T){}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".bpl")
		if name == "admin" {
			t.Run(name, run(script))
		} else {
			others[name] = run(script)
		}
	}
	concurrently(t, others)
}

// newRealLib returns a Library closed at the end of the test.
func newRealLib(t *testing.T) *kafkabpl.Library {
	t.Helper()
	lib := kafkabpl.New()
	t.Cleanup(func() {
		start := time.Now()
		if err := lib.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Logf("Library.Close took %v", took.Round(time.Millisecond))
		}
	})
	return lib
}

// realCtx bounds a subtest's calls.
func realCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// ok fails the test on err and returns v.
func ok[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// polledMsg is a polled record, as text.
type polledMsg struct {
	topic     string
	partition int32
	key       string // "" for no key
	value     string
}

func (m polledMsg) String() string {
	return fmt.Sprintf("%s/%d %s=%s", m.topic, m.partition, m.key, m.value)
}

// pollFor polls consumer c until it returned at least n records in all,
// or within ends; it returns what came, with an error saying how many of
// n came when they did not all come in time. Safe to call from any
// goroutine.
func pollFor(ctx context.Context, lib *kafkabpl.Library, c string, n int, within time.Duration) ([]polledMsg, error) {
	var got []polledMsg
	deadline := time.Now().Add(within)
	for len(got) < n {
		left := time.Until(deadline)
		if left <= 0 {
			return got, fmt.Errorf("polled %d of %d messages in %v: %v", len(got), n, within, got)
		}
		res, err := lib.Poll(ctx, c, min(left, time.Second))
		if err != nil {
			return got, err
		}
		got = append(got, polledMsgs(res)...)
	}
	return got, nil
}

// pollThrough is pollFor going on past errors: it polls until n records
// came or within ends, and returns the records and the distinct errors,
// each with the number of polls that returned it.
func pollThrough(ctx context.Context, lib *kafkabpl.Library, c string, n int, within time.Duration) ([]polledMsg, []string) {
	var got []polledMsg
	var errs []string
	count := map[string]int{}
	deadline := time.Now().Add(within)
	for len(got) < n && time.Now().Before(deadline) {
		res, err := lib.Poll(ctx, c, min(time.Until(deadline), time.Second))
		if err != nil {
			if count[err.Error()]++; count[err.Error()] == 1 {
				errs = append(errs, err.Error())
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		got = append(got, polledMsgs(res)...)
	}
	for i, e := range errs {
		errs[i] = fmt.Sprintf("%d× %s", count[e], e)
	}
	return got, errs
}

func polledMsgs(res *kafkabpl.Polled) []polledMsg {
	var out []polledMsg
	for _, tr := range res.Topics {
		for _, r := range tr.Records {
			m := polledMsg{topic: tr.Topic, partition: r.Partition()}
			if k, ok := r.Key().(string); ok {
				m.key = k
			}
			m.value = fmt.Sprint(r.Value())
			out = append(out, m)
		}
	}
	return out
}

func values(msgs []polledMsg) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.value
	}
	return out
}

func textMessages(vs ...string) []kafkabpl.Message {
	msgs := make([]kafkabpl.Message, len(vs))
	for i, v := range vs {
		msgs[i] = kafkabpl.Message{Value: v}
	}
	return msgs
}

// testRealSubscribe: subscribe, send one message, poll it; with the
// default latest reset and a fresh group each round.
func testRealSubscribe(t *testing.T, servers string) {
	const rounds, parallel = 24, 6
	lib := newRealLib(t)
	ctx := realCtx(t)
	p := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	variants := []string{"existing", "new", "made-by-producer"}

	round := func(i int) error {
		variant := variants[i%3]
		topic := fmt.Sprintf("rk-sub-%d-%s", i, variant)
		want := fmt.Sprintf("m%d", i)
		cfg := map[string]any{"servers": servers}
		switch variant {
		case "existing": // holds an older message, which latest skips
			if _, err := lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{}); err != nil {
				return err
			}
			if _, err := lib.Send(ctx, p, []string{topic}, textMessages("old")); err != nil {
				return err
			}
		case "made-by-producer":
			cfg["allow-auto-create-topics"] = false
		}
		c, err := lib.Create(ctx, kafkabpl.Consumer, cfg)
		if err != nil {
			return err
		}
		defer lib.Destroy(ctx, c)
		how := "Subscribe"
		if i%2 == 0 {
			if _, err := lib.Subscribe(ctx, c, []string{topic}); err != nil {
				return err
			}
		} else {
			how = "PollTopics"
			res, err := lib.PollTopics(ctx, c, []string{topic}, 0)
			if err != nil {
				return err
			}
			if res.Len() != 0 || len(res.Topics) != 1 || res.Topics[0].Topic != topic {
				return fmt.Errorf("first PollTopics returned %v", polledMsgs(res))
			}
		}
		if variant == "made-by-producer" {
			names, err := lib.ListTopics(ctx, a)
			if err != nil {
				return err
			}
			if slices.Contains(names, topic) {
				return fmt.Errorf("a consumer that may not create topics created %s when subscribing", topic)
			}
		}
		start := time.Now()
		if _, err := lib.Send(ctx, p, []string{topic}, textMessages(want)); err != nil {
			return err
		}
		got, err := pollFor(ctx, lib, c, 1, 20*time.Second)
		if err != nil {
			return fmt.Errorf("%s, %s topic: %w", how, variant, err)
		}
		after := time.Since(start)
		more, err := lib.Poll(ctx, c, 200*time.Millisecond)
		if err != nil {
			return err
		}
		got = append(got, polledMsgs(more)...)
		if !slices.Equal(values(got), []string{want}) {
			return fmt.Errorf("%s, %s topic: polled %v, want %s alone", how, variant, got, want)
		}
		t.Logf("round %d (%s, %s topic): the message came %v after the send", i, how, variant, after.Round(time.Millisecond))
		return nil
	}

	var misses atomic.Int32
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range jobs {
				if err := round(i); err != nil {
					misses.Add(1)
					t.Errorf("round %d: %v", i, err)
				}
			}
		})
	}
	for i := range rounds {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if n := misses.Load(); n > 0 {
		t.Errorf("%d of %d rounds missed their message", n, rounds)
	}
}

// testRealCommit mirrors TestCommitThenRestart and TestNoCommitRedelivers.
func testRealCommit(t *testing.T, servers string) {
	tests := map[string]func(*testing.T){}
	for _, mode := range []string{"commit", "auto-commit", "no commit"} {
		tests[mode] = func(t *testing.T) {
			lib := newRealLib(t)
			ctx := realCtx(t)
			topic := "rk-commit-" + strings.ReplaceAll(mode, " ", "-")
			all := strings.Fields("0 1 2 3 4 5 6 7 8 9")
			p := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
			sendStart := time.Now()
			if n := ok[int](t)(lib.Send(ctx, p, []string{topic}, textMessages(all...))); n != 10 {
				t.Fatalf("sent %d of 10", n)
			}
			t.Logf("the first send, which created the topic, took %v", time.Since(sendStart).Round(time.Millisecond))
			cfg := map[string]any{"servers": servers, "group": topic, "topics": topic, "auto-offset-reset": "earliest",
				"enable-auto-commit": mode == "auto-commit", "max-poll-records": 4}
			start := time.Now()
			c := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
			first := ok[[]polledMsg](t)(pollFor(ctx, lib, c, 1, 20*time.Second))
			k := len(first)
			if k > 4 || !slices.Equal(values(first), all[:k]) {
				t.Fatalf("first poll %v, want the first messages, 4 at most", first)
			}
			if mode == "commit" {
				if err := lib.Commit(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			ok[bool](t)(lib.Destroy(ctx, c))
			t.Logf("first consumer polled %d and left after %v", k, time.Since(start).Round(time.Millisecond))

			rest := all[k:]
			if mode == "no commit" {
				rest = all
			}
			c = ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
			got := ok[[]polledMsg](t)(pollFor(ctx, lib, c, len(rest), 20*time.Second))
			more := ok[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 300*time.Millisecond))
			got = append(got, polledMsgs(more)...)
			t.Logf("the second consumer had them all after %v", time.Since(start).Round(time.Millisecond))
			if !slices.Equal(values(got), rest) {
				t.Errorf("after %d polled and a restart: %v, want %v", k, values(got), rest)
			}
		}
	}
	concurrently(t, tests)
}

// testRealGroup mirrors TestGroupSharesWork, and checks each message came
// from its partition's owner.
func testRealGroup(t *testing.T, servers string) {
	const topic, group, n = "rk-work", "rk-workers", 400
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 4}))
	cfg := map[string]any{"servers": servers, "group": group, "topics": topic, "auto-offset-reset": "earliest"}
	c1 := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))
	c2 := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, cfg))

	// Send once both own partitions, so that the first does not drain the
	// topic alone before the second joins.
	var owned map[string][]int32 // by member id
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for owned == nil {
		for _, c := range []string{c1, c2} {
			if res := ok[*kafkabpl.Polled](t)(lib.Poll(ctx, c, 50*time.Millisecond)); res.Len() > 0 {
				t.Fatalf("polled %v from an empty topic", polledMsgs(res))
			}
		}
		g, err := lib.DescribeGroup(ctx, a, group)
		if err == nil {
			last = kafkabpl.Format(g.List())
			if g.State == "Stable" && len(g.Members) == 2 {
				m := map[string][]int32{}
				for _, mem := range g.Members {
					for _, tp := range mem.Assignment {
						m[mem.MemberID] = append(m[mem.MemberID], tp.Partitions...)
					}
				}
				if len(m) == 2 {
					owned = m
				}
			}
		} else {
			last = err.Error()
		}
		if owned == nil && time.Now().After(deadline) {
			t.Fatalf("group %s not stable with 2 members owning partitions in 30 s; last: %s", group, last)
		}
	}
	t.Logf("assignment %v", owned)

	msgs := make([]kafkabpl.Message, n)
	for i := range msgs {
		msgs[i] = kafkabpl.Message{Key: fmt.Sprintf("k%d", i), Value: fmt.Sprint(i)}
	}
	ok[int](t)(lib.Send(ctx, newProducer(t, lib, ctx, servers), []string{topic}, msgs))

	var mu sync.Mutex
	seen := map[string]string{}          // value -> consumer
	parts := map[string]map[int32]bool{} // consumer -> partitions it got records of
	var wg sync.WaitGroup
	for _, c := range []string{c1, c2} {
		wg.Go(func() {
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				mu.Lock()
				done := len(seen) == n
				mu.Unlock()
				if done {
					return
				}
				res, err := lib.Poll(ctx, c, 200*time.Millisecond)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, m := range polledMsgs(res) {
					if prev, dup := seen[m.value]; dup {
						t.Errorf("message %s delivered twice (to %s and %s)", m.value, prev, c)
					}
					seen[m.value] = c
					if parts[c] == nil {
						parts[c] = map[int32]bool{}
					}
					parts[c][m.partition] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("delivered %d of %d", len(seen), n)
	}
	per := map[string]int{}
	for _, c := range seen {
		per[c]++
	}
	if per[c1] == 0 || per[c2] == 0 {
		t.Errorf("work not shared: %v", per)
	}
	// Each consumer read partitions of one member only, and no partition
	// was read by both.
	all := map[int32]string{}
	for c, ps := range parts {
		for p := range ps {
			if other, dup := all[p]; dup {
				t.Errorf("partition %d read by %s and %s", p, other, c)
			}
			all[p] = c
		}
	}
	if len(all) != 4 {
		t.Errorf("records came from %d partitions, want 4", len(all))
	}
}

// newProducer creates a producer.
func newProducer(t *testing.T, lib *kafkabpl.Library, ctx context.Context, servers string) string {
	t.Helper()
	return ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
}

// testRealAdmin runs the admin functions, as TestAdminGoAPI, TestAdminTopics
// and TestAdminGroupLag do on kfake.
func testRealAdmin(t *testing.T, k *realKafka) {
	servers := k.servers
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))

	created := ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"rk-adm-x", "rk-adm-y"}, kafkabpl.TopicOptions{Partitions: 2, Configs: map[string]string{"retention.ms": "86400000"}}))
	if diff := cmp.Diff(map[string]bool{"rk-adm-x": true, "rk-adm-y": true}, created); diff != "" {
		t.Errorf("CreateTopics (-want +got):\n%s", diff)
	}
	// A config is a target too.
	created = ok[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{"rk-adm-x", "rk-adm-z"}, kafkabpl.TopicOptions{}))
	if diff := cmp.Diff(map[string]bool{"rk-adm-x": false, "rk-adm-z": true}, created); diff != "" {
		t.Errorf("CreateTopics again (-want +got):\n%s", diff)
	}
	// Kafka's metadata follows a create a moment later (the read-after-write
	// subtest shows it): wait for it here.
	names := eventually(t, func() ([]string, error) { return lib.ListTopics(ctx, a) }, func(names []string) bool {
		return slices.Contains(names, "rk-adm-x") && slices.Contains(names, "rk-adm-y") && slices.Contains(names, "rk-adm-z")
	})
	if !slices.IsSorted(names) || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "__") }) {
		t.Errorf("ListTopics = %q: want sorted, no internal topic", names)
	}
	infos := eventually(t, func() ([]kafkabpl.TopicInfo, error) { return lib.DescribeTopics(ctx, a, "rk-adm-x") },
		func(infos []kafkabpl.TopicInfo) bool { return len(infos) == 1 && len(infos[0].Partitions) == 2 })
	want := []kafkabpl.TopicInfo{{Topic: "rk-adm-x", Partitions: []kafkabpl.PartitionInfo{
		{Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
		{Partition: 1, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
	}}}
	if diff := cmp.Diff(want, infos); diff != "" {
		t.Errorf("DescribeTopics (-want +got):\n%s", diff)
	}
	// A missing topic is an error naming it; describing it does not
	// create it, though the broker creates topics on first use.
	infos, err := lib.DescribeTopics(ctx, a, "rk-adm-x", "rk-adm-ghost")
	if !errors.Is(err, kerr.UnknownTopicOrPartition) || !strings.Contains(err.Error(), `topic "rk-adm-ghost"`) || len(infos) != 1 || infos[0].Topic != "rk-adm-x" {
		t.Errorf("DescribeTopics with a missing topic: %v, %v", infos, err)
	}
	if slices.Contains(ok[[]string](t)(lib.ListTopics(ctx, a)), "rk-adm-ghost") {
		t.Error("describing a missing topic created it")
	}

	info := ok[*kafkabpl.ClusterInfo](t)(lib.DescribeCluster(ctx, a))
	wantInfo := &kafkabpl.ClusterInfo{ClusterID: realClusterID, Controller: 1, Brokers: []kafkabpl.BrokerInfo{{ID: 1, Host: "127.0.0.1", Port: int32(k.port)}}}
	if diff := cmp.Diff(wantInfo, info); diff != "" {
		t.Errorf("DescribeCluster (-want +got):\n%s", diff)
	}

	// create-partitions: grow, the same count (Kafka itself refuses it),
	// shrink, a missing topic.
	if !ok[bool](t)(lib.CreatePartitions(ctx, a, "rk-adm-y", 4)) {
		t.Error("CreatePartitions rk-adm-y to 4 = false")
	}
	eventually(t, func() ([]kafkabpl.TopicInfo, error) { return lib.DescribeTopics(ctx, a, "rk-adm-y") },
		func(infos []kafkabpl.TopicInfo) bool { return len(infos) == 1 && len(infos[0].Partitions) == 4 })
	if ok[bool](t)(lib.CreatePartitions(ctx, servers, "rk-adm-y", 4)) {
		t.Error("CreatePartitions rk-adm-y to 4 again = true")
	}
	if _, err := lib.CreatePartitions(ctx, a, "rk-adm-y", 2); !errors.Is(err, kerr.InvalidPartitions) || !strings.Contains(err.Error(), `topic "rk-adm-y" has 4 partitions, more than 2`) {
		t.Errorf("shrinking: %v", err)
	}
	if _, err := lib.CreatePartitions(ctx, a, "rk-adm-ghost", 2); !errors.Is(err, kerr.UnknownTopicOrPartition) || !strings.Contains(err.Error(), `topic "rk-adm-ghost"`) {
		t.Errorf("growing a missing topic: %v", err)
	}

	testRealLag(t, lib, ctx, a, servers)

	deleted := ok[map[string]bool](t)(lib.DeleteTopics(ctx, a, []string{"rk-adm-y", "rk-adm-z", "rk-adm-y", "rk-adm-never"}))
	if diff := cmp.Diff(map[string]bool{"rk-adm-y": true, "rk-adm-z": true, "rk-adm-never": false}, deleted); diff != "" {
		t.Errorf("DeleteTopics (-want +got):\n%s", diff)
	}
	eventually(t, func() ([]string, error) { return lib.ListTopics(ctx, servers) }, func(names []string) bool {
		return !slices.Contains(names, "rk-adm-y") && !slices.Contains(names, "rk-adm-z") && slices.Contains(names, "rk-adm-x")
	})
}

// eventually calls get until its result satisfies done, for 10 s at most,
// and returns that result; it fails the test with the last one otherwise.
func eventually[T any](t *testing.T, get func() (T, error), done func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := get()
		if err == nil && done(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("not so within 10 s: %+v, %v", v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testRealReadAfterWrite: once create-topics or create-partitions
// returned, list-topics and describe-topics show what they made, as on
// kfake (and as admin.bpl expects), and once delete-topics returned,
// list-topics no longer lists the topic. Kafka's broker learns of a change
// from its controller a moment after the controller answered: a call that
// asks at once may see the old metadata. 60 rounds, each asking at once.
func testRealReadAfterWrite(t *testing.T, servers string) {
	const rounds = 60
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	var staleTopic, stalePartitions, staleDeleted []string
	for i := range rounds {
		topic := fmt.Sprintf("rk-raw-%d", i)
		ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 2}))
		var infos []kafkabpl.TopicInfo
		var err error
		if i%2 == 0 {
			infos, err = lib.DescribeTopics(ctx, a, topic)
		} else if names, lerr := lib.ListTopics(ctx, a); lerr != nil || !slices.Contains(names, topic) {
			err = fmt.Errorf("list-topics: not listed (%v)", lerr)
		} else {
			infos, err = lib.DescribeTopics(ctx, a, topic)
		}
		if err != nil || len(infos) != 1 || len(infos[0].Partitions) != 2 {
			staleTopic = append(staleTopic, fmt.Sprintf("%s: %+v, %v", topic, infos, err))
			eventually(t, func() ([]kafkabpl.TopicInfo, error) { return lib.DescribeTopics(ctx, a, topic) },
				func(infos []kafkabpl.TopicInfo) bool { return len(infos) == 1 && len(infos[0].Partitions) == 2 })
		}
		if grown, err := lib.CreatePartitions(ctx, a, topic, 4); !grown || err != nil {
			stalePartitions = append(stalePartitions, fmt.Sprintf("%s: create-partitions to 4 right after create-topics: %v, %v", topic, grown, err))
		}
		infos, err = lib.DescribeTopics(ctx, a, topic)
		if err != nil || len(infos) != 1 || len(infos[0].Partitions) != 4 {
			stalePartitions = append(stalePartitions, fmt.Sprintf("%s: %+v after growing to 4 (%v)", topic, infos, err))
		}
		ok[map[string]bool](t)(lib.DeleteTopics(ctx, a, []string{topic}))
		if names, err := lib.ListTopics(ctx, a); err != nil || slices.Contains(names, topic) {
			staleDeleted = append(staleDeleted, fmt.Sprintf("%s: still listed (%v)", topic, err))
		}
	}
	if len(staleTopic) > 0 {
		t.Errorf("describe-topics (even rounds) or list-topics (odd rounds) right after create-topics did not show the topic in %d of %d rounds:\n%s", len(staleTopic), rounds, strings.Join(staleTopic, "\n"))
	}
	if len(stalePartitions) > 0 {
		t.Errorf("right after create-partitions, the new partitions were missing in %d of %d rounds:\n%s", len(stalePartitions), rounds, strings.Join(stalePartitions, "\n"))
	}
	if len(staleDeleted) > 0 {
		t.Errorf("list-topics right after delete-topics still listed the topic in %d of %d rounds:\n%s", len(staleDeleted), rounds, strings.Join(staleDeleted, "\n"))
	}
}

// testRealFresh asks a cluster that no group has used yet about groups:
// it has none. Kafka creates its group coordinator's topic
// (__consumer_offsets) on the first request that needs a coordinator, and
// answers COORDINATOR_NOT_AVAILABLE while it does; Java's admin client
// retries that until its timeout. Runs before anything else uses a group.
func testRealFresh(t *testing.T, servers string) {
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	if gs, err := lib.ListGroups(ctx, a); err != nil || len(gs) != 0 {
		t.Errorf("list-groups on a fresh cluster: %v, %v; want none", gs, err)
	}
	start := time.Now()
	if _, err := lib.DescribeGroup(ctx, a, "rk-g-fresh"); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describe-group on a fresh cluster: %v (after %v); want GROUP_ID_NOT_FOUND, as once the cluster has a coordinator", err, time.Since(start).Round(time.Millisecond))
	}
}

// testRealLag mirrors TestAdminGroupLag: a group's lag goes to 0 as its
// consumer catches up and commits; the group is Empty once it left.
func testRealLag(t *testing.T, lib *kafkabpl.Library, ctx context.Context, a, servers string) {
	const topic, group = "rk-lagged", "rk-g-lag"
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 2}))
	if _, err := lib.DescribeGroup(ctx, a, group); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describe-group before the group exists: %v", err)
	}
	prod := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	var msgs []kafkabpl.Message // 6 to partition 0, 4 to partition 1
	for i := range 10 {
		part := int32(0)
		if i >= 6 {
			part = 1
		}
		msgs = append(msgs, kafkabpl.Message{Value: fmt.Sprint(i), Partition: &part})
	}
	ok[int](t)(lib.Send(ctx, prod, []string{topic}, msgs))
	cons := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{
		"servers": servers, "group": group, "topics": topic, "auto-offset-reset": "earliest",
		"enable-auto-commit": false, "max-poll-records": 3,
	}))

	// describe checks the lag's consistency and returns the group.
	describe := func() *kafkabpl.GroupInfo {
		t.Helper()
		g := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, a, group))
		var total int64
		for _, tl := range g.Lag {
			for _, pl := range tl.Partitions {
				if pl.Err != nil {
					t.Fatalf("partition %d: %v", pl.Partition, pl.Err)
				}
				if pl.Committed >= 0 && pl.Committed+pl.Lag != pl.End || pl.Committed < 0 && pl.Lag != pl.End {
					t.Errorf("partition %d: committed %d, end %d, lag %d", pl.Partition, pl.Committed, pl.End, pl.Lag)
				}
				total += pl.Lag
			}
		}
		if total != g.TotalLag {
			t.Errorf("total-lag %d, the partitions' lags sum to %d", g.TotalLag, total)
		}
		return g
	}

	polled := len(ok[[]polledMsg](t)(pollFor(ctx, lib, cons, 1, 20*time.Second)))
	if polled > 3 {
		t.Fatalf("polled %d with max-poll-records 3", polled)
	}
	if g := describe(); g.TotalLag != 10 {
		t.Errorf("polled, not committed: total lag %d, want 10", g.TotalLag)
	}
	noErr(t, lib.Commit(ctx, cons))
	g := describe()
	if g.TotalLag != int64(10-polled) {
		t.Errorf("after polling %d and committing: total lag %d, want %d", polled, g.TotalLag, 10-polled)
	}
	if g.State != "Stable" || len(g.Members) != 1 {
		t.Fatalf("group %s", kafkabpl.Format(g.List()))
	}
	m := g.Members[0]
	if m.ClientID != "kafkabpl" || !strings.HasPrefix(m.MemberID, "kafkabpl-") || m.Host == "" ||
		!cmp.Equal(m.Assignment, []kafkabpl.TopicPartitions{{Topic: topic, Partitions: []int32{0, 1}}}) {
		t.Errorf("member %+v", m)
	}
	t.Logf("member id %q, host %q", m.MemberID, m.Host)

	for polled < 10 {
		polled += len(ok[[]polledMsg](t)(pollFor(ctx, lib, cons, 1, 20*time.Second)))
	}
	noErr(t, lib.Commit(ctx, cons))
	member := fmt.Sprintf(`("member-id" => %q "client-id" => "kafkabpl" "host" => %q "assignment" => (%q => (0 1)))`, m.MemberID, m.Host, topic)
	lag := `"lag" => ("rk-lagged" => (("partition" => 0 "committed" => 6 "end" => 6 "lag" => 0) ("partition" => 1 "committed" => 4 "end" => 4 "lag" => 0))) "total-lag" => 0`
	if got, want := kafkabpl.Format(describe().List()), `("group" => "rk-g-lag" "state" => "Stable" "members" => (`+member+`) `+lag+`)`; got != want {
		t.Errorf("describe-group caught up:\n got  %s\n want %s", got, want)
	}
	listed := ok[[]kafkabpl.GroupListing](t)(lib.ListGroups(ctx, servers))
	if !slices.Contains(listed, kafkabpl.GroupListing{Group: group, State: "Stable"}) {
		t.Errorf("ListGroups = %v, want %s Stable among them", listed, group)
	}

	ok[bool](t)(lib.Destroy(ctx, cons))
	if got, want := kafkabpl.Format(describe().List()), `("group" => "rk-g-lag" "state" => "Empty" "members" => () `+lag+`)`; got != want {
		t.Errorf("describe-group after the consumer left:\n got  %s\n want %s", got, want)
	}
	listed = ok[[]kafkabpl.GroupListing](t)(lib.ListGroups(ctx, a))
	if !slices.Contains(listed, kafkabpl.GroupListing{Group: group, State: "Empty"}) {
		t.Errorf("ListGroups = %v, want %s Empty among them", listed, group)
	}
}

// testRealRecreated mirrors TestAdminRecreatedTopic, whose cluster does not
// create topics on first use, with consumers that do not ask for it
// either: the topic created again has the partition count asked for. With
// consumers that may create topics (the default), as stock Kafka does on
// first use, a consumer still subscribed may create the topic again first,
// with the broker's defaults (1 partition): then create-topics answers
// false, as the package docs warn. Either way the producer and the
// consumers that knew the old topic work with the new one.
func testRealRecreated(t *testing.T, servers string) {
	concurrently(t, map[string]func(*testing.T){
		"consumers may not create topics": func(t *testing.T) { testRealRecreatedTopic(t, servers, "rk-re-strict", false) },
		"consumers may create topics":     func(t *testing.T) { testRealRecreatedTopic(t, servers, "rk-re", true) },
	})
}

func testRealRecreatedTopic(t *testing.T, servers, topic string, autoCreate bool) {
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 3}))
	prod := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
	group := "rk-g-" + topic
	c := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": group, "topics": topic,
		"auto-offset-reset": "earliest", "allow-auto-create-topics": autoCreate}))
	p0, p1 := int32(0), int32(1)
	ok[int](t)(lib.Send(ctx, prod, []string{topic}, []kafkabpl.Message{{Value: "early0", Partition: &p0}, {Value: "early1", Partition: &p1}}))
	// Another consumer, with the default latest and its own group,
	// subscribed once partitions 0 and 1 hold a message: it starts after
	// them. The topic created again must not start there.
	c2 := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "allow-auto-create-topics": autoCreate}))
	ok[*kafkabpl.Polled](t)(lib.PollTopics(ctx, c2, []string{topic}, 0))

	ok[int](t)(lib.Send(ctx, prod, []string{topic}, []kafkabpl.Message{{Key: "k1", Value: "old1"}, {Key: "k2", Value: "old2"}}))
	if got := ok[[]polledMsg](t)(pollFor(ctx, lib, c, 4, 20*time.Second)); len(got) != 4 {
		t.Fatalf("consumer 1 before the delete: %v, want 4 messages", got)
	}
	if got := values(ok[[]polledMsg](t)(pollFor(ctx, lib, c2, 2, 20*time.Second))); !cmp.Equal(sorted(got), []string{"old1", "old2"}) {
		t.Fatalf("consumer 2 before the delete: %v", got)
	}
	noErr(t, lib.Commit(ctx, c))

	// Deleted through a config target: the Library's clients are told all
	// the same.
	if got := ok[map[string]bool](t)(lib.DeleteTopics(ctx, servers, []string{topic})); !got[topic] {
		t.Fatalf("delete: %v", got)
	}
	partitions := 2
	if got := ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 2})); !got[topic] {
		infos, err := lib.DescribeTopics(ctx, a, topic)
		if !autoCreate {
			t.Fatalf("re-create: %v: the topic existed again (%+v, %v), though no consumer may create it", got, infos, err)
		}
		t.Logf("re-create: %v: a consumer had created the topic again first (%+v, %v)", got, infos, err)
		partitions = 1
	}
	if n, err := lib.Send(ctx, prod, []string{topic}, []kafkabpl.Message{{Key: "k1", Value: "new1", Partition: &p0}, {Key: "k2", Value: "new2", Partition: &p0}, {Value: "new3", Partition: &p0}}); n != 3 || err != nil {
		t.Fatalf("send to the new topic = %d, %v", n, err)
	}
	for i, id := range []string{c, c2} {
		got, errs := pollThrough(ctx, lib, id, 3, 15*time.Second)
		if len(errs) > 0 || !cmp.Equal(sorted(values(got)), []string{"new1", "new2", "new3"}) {
			t.Errorf("consumer %d after re-creation: polled %v in 15 s, want the three new messages; the polls' errors (repeats counted):\n%s", i+1, got, strings.Join(errs, "\n"))
		}
	}
	noErr(t, lib.Commit(ctx, c))
	g := ok[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(ctx, a, group))
	if g.TotalLag != 0 || len(g.Lag) != 1 || len(g.Lag[0].Partitions) != partitions {
		t.Errorf("group after re-creation: %s, want lag 0 on %d partitions", kafkabpl.Format(g.List()), partitions)
	}
	if sub := ok[[]string](t)(lib.Subscribe(ctx, c, []string{topic})); !slices.Equal(sub, []string{topic}) {
		t.Errorf("subscription %q", sub)
	}
}

func sorted(ss []string) []string {
	ss = slices.Clone(ss)
	slices.Sort(ss)
	return ss
}

// testRealErrors checks that what Kafka refuses fails clearly, in time.
func testRealErrors(t *testing.T, servers string) {
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	// A send-timeout of 3 s: a topic the broker does not create looks, to
	// a producer that may ask for it, like one it is still creating, so
	// that send waits send-timeout (30 s by default, as Java's 60 s).
	prod := ok[string](t)(lib.Create(ctx, kafkabpl.Producer, map[string]any{"servers": servers, "send-timeout": 3000}))

	// send checks a send that must fail within 10 s, having delivered
	// nothing, with an error of kind and reason.
	send := func(what, topic, kind string, reason error) {
		t.Helper()
		start := time.Now()
		n, err := lib.Send(ctx, prod, []string{topic}, textMessages("x"))
		took := time.Since(start)
		t.Logf("%s: %v after %v", what, err, took.Round(time.Millisecond))
		if err == nil || n != 0 || kafkabpl.ErrorType(err) != kind || !errors.Is(err, reason) {
			t.Errorf("%s: delivered %d, %v (%s), want a %s error wrapping %v", what, n, err, kafkabpl.ErrorType(err), kind, reason)
		}
		if took > 10*time.Second {
			t.Errorf("%s: failed after %v", what, took)
		}
	}
	// The client refuses what no Kafka takes.
	send("a name with a space", "rk bad", "InvalidArgument", kafkabpl.ErrInvalidArgument)
	// Kafka refuses writes to its internal topics (kfake takes them).
	send("the internal __consumer_offsets", "__consumer_offsets", "KafkaError", kerr.InvalidTopicException)
	// A name that collides with an existing one ('.' and '_' are the same
	// in metric names): Kafka refuses to create it; the producer hears
	// only that the topic does not exist, as while it is being created,
	// so it waits send-timeout and says the topic never appeared (kfake
	// creates it).
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"rk.err.dot"}, kafkabpl.TopicOptions{}))
	send("a name colliding with rk.err.dot", "rk_err_dot", "Timeout", kerr.UnknownTopicOrPartition)
	if _, err := lib.CreateTopics(ctx, a, []string{"rk_err_dot"}, kafkabpl.TopicOptions{}); !errors.Is(err, kerr.InvalidTopicException) || !strings.Contains(err.Error(), `topic "rk_err_dot"`) {
		t.Errorf("create-topics rk_err_dot colliding with rk.err.dot: %v", err)
	} else {
		t.Logf("create-topics of a colliding name: %v", err)
	}

	// Replication factor 3 on 1 broker: each topic fails, named, with the
	// broker's reason; none is created.
	_, err := lib.CreateTopics(ctx, a, []string{"rk-rf3-a", "rk-rf3-b"}, kafkabpl.TopicOptions{ReplicationFactor: 3})
	t.Logf("replication factor 3: %v", err)
	if !errors.Is(err, kerr.InvalidReplicationFactor) || kafkabpl.ErrorType(err) != "KafkaError" {
		t.Errorf("replication factor 3 on 1 broker: %v (%s)", err, kafkabpl.ErrorType(err))
	}
	for _, want := range []string{`kafka-create-topics: 2 of 2 topics failed; topic "rk-rf3-a"`, `topic "rk-rf3-b"`, "INVALID_REPLICATION_FACTOR", "only 1 broker(s) are registered"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("replication factor 3: %v: want it to say %q", err, want)
		}
	}
	if names := ok[[]string](t)(lib.ListTopics(ctx, a)); slices.Contains(names, "rk-rf3-a") || slices.Contains(names, "rk-rf3-b") {
		t.Errorf("a topic that failed was created: %q", names)
	}

	// auto-offset-reset none, a group with no committed offset: a poll
	// fails, naming the topic and partition, once the group has assigned
	// the partition (3 s: Kafka's initial rebalance delay).
	const topic = "rk-none"
	ok[int](t)(lib.Send(ctx, prod, []string{topic}, textMessages("before")))
	c := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": "rk-g-none", "topics": topic, "auto-offset-reset": "none"}))
	start := time.Now()
	var pollErr error
	empty := 0
	for time.Since(start) < 20*time.Second {
		res, err := lib.Poll(ctx, c, time.Second)
		if err != nil {
			pollErr = err
			break
		}
		if res.Len() > 0 {
			t.Fatalf("auto-offset-reset none polled %v", polledMsgs(res))
		}
		empty++
	}
	t.Logf("auto-offset-reset none: %d empty polls of 1 s, then after %v: %v (%s)", empty, time.Since(start).Round(time.Millisecond), pollErr, kafkabpl.ErrorType(pollErr))
	if pollErr == nil || kafkabpl.ErrorType(pollErr) != "KafkaError" || !strings.Contains(pollErr.Error(), `kafka-poll: topic "rk-none" partition 0`) || !strings.Contains(pollErr.Error(), "no prior committed offset") {
		t.Errorf("auto-offset-reset none with nothing committed: %v after %v, want a KafkaError naming the partition", pollErr, time.Since(start))
	}
	// The partition has no position until a seek gives it one, and no
	// message sent meanwhile can come: each poll until then must say so,
	// as each poll of Java's KafkaConsumer throws
	// NoOffsetForPartitionException, rather than return nothing.
	ok[int](t)(lib.Send(ctx, prod, []string{topic}, textMessages("after")))
	var next []string
	silent := 0
	for range 3 {
		res, err := lib.Poll(ctx, c, time.Second)
		switch {
		case err != nil:
			next = append(next, err.Error())
		default:
			silent++
			next = append(next, fmt.Sprintf("%d records, no error", res.Len()))
		}
	}
	t.Logf("auto-offset-reset none: the next 3 polls of 1 s: %q", next)
	if silent > 0 {
		t.Errorf("auto-offset-reset none: after the first error, %d of the next 3 polls returned nothing and no error, though the partition still has no position: %q", silent, next)
	}
	// A seek to the beginning gives the partition a position: both
	// messages come.
	if err := lib.Seek(ctx, c, topic, kafkabpl.SeekBeginning()); err != nil {
		t.Fatal(err)
	}
	got, err := pollFor(ctx, lib, c, 2, 10*time.Second)
	if err != nil || !slices.Equal(values(got), []string{"before", "after"}) {
		t.Errorf("auto-offset-reset none: after the error, a seek to the beginning: %v, %v; want before and after", got, err)
	}
}

// writeLog4j writes, in dir, a log4j2 configuration that sends a Kafka
// node's log to the file logFile, and returns its path.
func writeLog4j(t *testing.T, dir, logFile string) string {
	t.Helper()
	log4j := filepath.Join(dir, "log4j2.properties")
	writeFile(t, log4j, fmt.Sprintf(`appender.file.type=File
appender.file.name=file
appender.file.fileName=%s
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%%d] %%p %%m (%%c)%%n
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=file
`, logFile))
	return log4j
}
