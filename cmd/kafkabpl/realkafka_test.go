//go:build unix

package main

// TestRealKafka proves the library and the command against a real Apache
// Kafka broker, where every other test uses kfake: one Kafka 4.4.0 broker
// (the jars that testdata/kafka/pom.xml fetches into its lib/, git-ignored;
// kafkaFetch is the command) in KRaft combined mode (broker and
// controller, node.id 1), on free ports of 127.0.0.1, with its data and
// its log in the test's temporary directory. Its settings are Kafka's
// stock defaults but for those one broker needs (replication factors of
// the internal topics 1, the share coordinator's state topic's too), the
// least lock duration a share group may set (1 s, for the share tests'
// short locks; Kafka's is 15 s), and the two that kfake's tests assume
// and stock Kafka has anyway (auto.create.topics.enable, num.partitions
// 1); in
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
//   - share groups: see realkafka_share_test.go.
//   - group shared with Java, KIP-848: a BPL consumer and Java's
//     KafkaConsumer (kafka-clients 4.4) in one group under KIP-848's
//     protocol split a 4-partition topic, each of 200 messages consumed
//     once overall, by its partition's owner (runGroupShared, as
//     TestJavaInterop's); the broker says both joined under KIP-848's
//     protocol. Without java or the jars it skips, and fails under CI.
//   - commit while revoked, KIP-848: grouptest.CommitWhileRevoked, a
//     commit in flight as the group revokes a partition succeeds and
//     reports nothing lost, and nothing is delivered again (issue 47).
//   - errors: a send to a topic name the client refuses, to one Kafka
//     refuses (the internal __consumer_offsets) and to one that collides
//     with an existing topic ("a.b" and "a_b"); create-topics with
//     replication factor 3 on one broker; a group consumer with
//     auto-offset-reset none and no committed offset: its polls fail until
//     a seek, after which it reads.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/grouptest"
)

func TestRealKafka(t *testing.T) {
	t.Parallel()
	java := needKafka(t)
	bin := buildBinary(t)
	k := startKafka(t, java)

	t.Run("fresh cluster", func(t *testing.T) { testRealFresh(t, k.servers) })
	t.Run("examples", func(t *testing.T) { testRealExamples(t, bin, k.servers) })
	concurrently(t, map[string]func(*testing.T){
		"subscribe is deterministic":         func(t *testing.T) { testRealSubscribe(t, k.servers) },
		"commit then restart":                func(t *testing.T) { testRealCommit(t, k.servers) },
		"group shares a topic":               func(t *testing.T) { testRealGroup(t, k.servers, "classic") },
		"group shares a topic, KIP-848":      func(t *testing.T) { testRealGroup(t, k.servers, "consumer") },
		"third member, both group protocols": func(t *testing.T) { testRealThirdMember(t, k.servers) },
		"admin":                              func(t *testing.T) { testRealAdmin(t, k) },
		"operators' admin":                   func(t *testing.T) { testRealOps(t, k.servers) },
		"admin read-after-write":             func(t *testing.T) { testRealReadAfterWrite(t, k.servers) },
		"re-created topic":                   func(t *testing.T) { testRealRecreated(t, k.servers) },
		"errors":                             func(t *testing.T) { testRealErrors(t, k.servers) },
		"share groups":                       func(t *testing.T) { testRealShare(t, k.servers, bin) },
		"group shared with Java, KIP-848":    func(t *testing.T) { testRealJavaGroup(t, k.servers, bin) },
		"commit while revoked, KIP-848": func(t *testing.T) {
			grouptest.CommitWhileRevoked(t, k.servers, "rk-revoked-jobs", "rk-revoked")
		},
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
	// The Avro example's schema registry: the embedded one, beside the
	// real broker (its own cluster goes unused).
	reg, err := embedded.Start(embedded.Port(0), embedded.SchemaRegistry(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
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
			cmd.Env = append(os.Environ(), "SCHEMA_REGISTRY_URL="+reg.RegistryURL())
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

// newProducer creates a producer.
func newProducer(t *testing.T, lib *kafkabpl.Library, ctx context.Context, servers string) string {
	t.Helper()
	return ok[string](t)(lib.Create(ctx, kafkabpl.Producer, servers))
}

func sorted(ss []string) []string {
	ss = slices.Clone(ss)
	slices.Sort(ss)
	return ss
}
