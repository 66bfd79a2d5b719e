//go:build unix

package main

// Java interop tests: Apache Kafka's own Java client (kafka-clients, the
// client of brain4it, where kafkabpl's users come from) against "kafkabpl
// broker", exchanging messages with BPL scripts run by "kafkabpl run". The
// Java side is testdata/interop/java/Peer.java, run by Java's single-file
// launcher (java 17 or later) with the jars that pom.xml there fetches into
// its lib/ (git-ignored; javaFetch is the command). Without java or the
// jars the tests skip, saying how to get them; with CI set they fail.
// Like TestInterop's, each subtest has its own broker process (3 brokers,
// 4 partitions per topic, the topics made at start).
//
//   - Java to BPL: 40 messages that KafkaProducer (StringSerializer,
//     default partitioner, acks=all) sent reach a BPL consumer each once,
//     with their values, on the partition Java chose, which is the one
//     kgo's murmur2 gives: Java's placement is the reference that every
//     placement check of these tests and TestInterop's stands for.
//   - BPL to Java: the messages a BPL script sent reach a Java
//     KafkaConsumer each once, each on the partition where Java's own
//     producer puts the same key.
//   - typed Java to BPL, typed BPL to Java: the numeric serializers are
//     byte for byte Java's. Integer keys with Double values, Long keys
//     with Long values, and Long keys with Float values (negative numbers,
//     the ends of each range, a long beyond a double's 2^53, fractional,
//     integral, tiny, huge doubles and floats, -0.0, a float's smallest
//     normal and subnormal, and 2^24+1, which no float holds), sent by
//     Java's IntegerSerializer, DoubleSerializer, LongSerializer and
//     FloatSerializer read back exactly in BPL (deserializers named by Java
//     class name), and sent by BPL (serializers named Integer, Double,
//     Long, Float) read back exactly by Java's deserializers. A Float reads
//     back in BPL as the double nearest its shortest decimal (0.1f as 0.1,
//     not 0.10000000149011612), which is the text Java prints for it. Each
//     message is on the partition of murmur2 over Java's encoding of its
//     key (4 or 8 bytes, big-endian) on both sides, so the keys' bytes
//     match too. These two subtests make their own broker (typedBroker),
//     with the typed topics made at start.
//   - group shared with Java: a BPL consumer and a Java KafkaConsumer in
//     one group. Java offers range then cooperative-sticky, kafkabpl range
//     then roundrobin; the group chooses range, the one protocol both
//     offer, and the two split the 4 partitions: 200 keyed messages are
//     each consumed exactly once overall, by the member that owns the
//     partition, and both members get some.
//   - group shared with Java, KIP-848: the same with both members under
//     KIP-848's protocol (Java's group.protocol=consumer, kafkabpl's
//     "group-protocol" "consumer"), where the broker assigns the
//     partitions; TestRealKafka runs it on Kafka 4.4 too.

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
)

// javaDir holds Peer.java, pom.xml and, once fetched, lib/.
const javaDir = "testdata/interop/java"

// javaFetch fetches the jars into javaDir/lib; run from the repository root.
const javaFetch = "mvn -q -B -f cmd/kafkabpl/testdata/interop/java/pom.xml dependency:copy-dependencies"

func TestJavaInterop(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	t.Run("Java to BPL", func(t *testing.T) {
		t.Parallel()
		java := needJava(t)
		ctx, servers := interopBroker(t, bin)
		msgs := interopMessages()
		placed := javaProduce(t, ctx, java, servers, "to-bpl", "String", "String", msgs)
		checkPlacement(t, "Java", placed, msgs)
		got := gotLines(t, runPeer(t, ctx, bin, "run", "--servers", servers, "testdata/interop/consume.bpl"))
		checkDelivered(t, "BPL consumer", got, placed)
	})
	t.Run("BPL to Java", func(t *testing.T) {
		t.Parallel()
		java := needJava(t)
		ctx, servers := interopBroker(t, bin)
		msgs := interopMessages()
		runBPLProducer(t, ctx, bin, servers)
		got := gotLines(t, runPeer(t, ctx, java, javaArgs("consume", servers, "from-bpl", strconv.Itoa(len(msgs)))...))
		ref := javaProduce(t, ctx, java, servers, "ref", "String", "String", msgs)
		checkPlacement(t, "Java", ref, msgs)
		checkDelivered(t, "Java consumer (where Java puts each key)", got, ref)
	})
	t.Run("typed Java to BPL", func(t *testing.T) {
		t.Parallel()
		java := needJava(t)
		ctx, servers := typedBroker(t, bin)
		for _, tm := range typedMessages() {
			placed := typedText(t, tm, javaProduce(t, ctx, java, servers, tm.topic, tm.keyType, tm.valueType, tm.sent))
			checkDelivered(t, fmt.Sprintf("Java's %s placement (want murmur2 of Java's key bytes)", tm.topic), placed, tm.msgs)
		}
		out := runPeer(t, ctx, bin, "run", "--servers", servers, "testdata/interop/typed-consume.bpl")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "error ") {
				t.Errorf("BPL consumer: %s", line)
			}
		}
		for _, tm := range typedMessages() {
			got := typedText(t, tm, parseLines(t, out, tm.kind))
			checkDelivered(t, "BPL consumer of "+tm.topic, got, tm.msgs)
		}
	})
	t.Run("typed BPL to Java", func(t *testing.T) {
		t.Parallel()
		java := needJava(t)
		ctx, servers := typedBroker(t, bin)
		out := runPeer(t, ctx, bin, "run", "--servers", servers, "testdata/interop/typed-produce.bpl")
		for _, tm := range typedMessages() {
			if line := fmt.Sprintf("sent %s %d", tm.topic, len(tm.msgs)); !slices.Contains(strings.Split(out, "\n"), line) {
				t.Fatalf("typed-produce.bpl printed:\n%s\nwant a line: %s", out, line)
			}
		}
		for _, tm := range typedMessages() {
			got := gotLines(t, runPeer(t, ctx, java, javaArgs("consume-typed", servers, tm.topic, strconv.Itoa(len(tm.msgs)), tm.keyType, tm.valueType)...))
			checkDelivered(t, fmt.Sprintf("Java consumer of %s (%s keys, %s values)", tm.topic, tm.keyType, tm.valueType), typedText(t, tm, got), tm.msgs)
		}
	})
	t.Run("group shared with Java", func(t *testing.T) {
		t.Parallel()
		java := needJava(t)
		peer := javaGroupPeer(java, "jobs", "shared", "classic")
		peer.offers = []string{"range", "cooperative-sticky"}
		testGroupShared(t, bin, peer)
	})
	t.Run("group shared with Java, KIP-848", func(t *testing.T) {
		t.Parallel()
		java := needJava(t)
		ctx, servers := interopBroker(t, bin)
		runGroupShared(t, bin, groupRun{ctx: ctx, servers: servers, topic: "jobs", group: "shared-848", protocol: "consumer"}, javaGroupPeer(java, "jobs", "shared-848", "consumer"))
	})
}

// javaGroupPeer is Peer.java's group mode, a member of group on topic
// under protocol.
func javaGroupPeer(java, topic, group, protocol string) groupPeer {
	return groupPeer{
		name: "Java", clientID: "java-interop", cmd: java,
		args: func(servers string) []string { return javaArgs("group", servers, topic, group, protocol) },
	}
}

// testRealJavaGroup is TestRealKafka's "group shared with Java, KIP-848":
// runGroupShared with Java's KafkaConsumer (kafka-clients 4.4) under
// KIP-848's protocol, on the real broker, where its members say which
// protocol they joined with.
func testRealJavaGroup(t *testing.T, servers, bin string) {
	const topic, group = "rk-java-jobs", "rk-java-shared"
	java := needJava(t)
	lib := newRealLib(t)
	ctx := realCtx(t)
	ok[map[string]bool](t)(lib.CreateTopics(ctx, servers, []string{topic}, kafkabpl.TopicOptions{Partitions: interopPartitions}))
	runGroupShared(t, bin, groupRun{ctx: ctx, servers: servers, topic: topic, group: group, protocol: "consumer"}, javaGroupPeer(java, topic, group, "consumer"))
}

// needJava checks for java on PATH and the Java client's jars in
// javaDir/lib, and logs java's version.
func needJava(t *testing.T) string {
	t.Helper()
	java := needJars(t, javaDir, "kafka-clients", "the Java client's jars", javaFetch)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, java, "-version").CombinedOutput()
	if err != nil {
		t.Fatalf("java -version: %v\n%s", err, out)
	}
	version, _, _ := strings.Cut(string(out), "\n")
	t.Logf("%s", version)
	return java
}

// needJars checks for java on PATH and, in dir/lib, the jar of artifact at
// exactly the version dir/pom.xml names (a stale second version counts as
// missing); it returns java's path. what names the jars, fetch is the
// command that fetches them.
func needJars(t testing.TB, dir, artifact, what, fetch string) string {
	t.Helper()
	fix := "fetch them from the repository root: " + fetch
	java, err := exec.LookPath("java")
	if err != nil {
		missingTool(t, "java (a JDK, 17 or later)", err, "install it: apt-get install openjdk-17-jdk-headless maven; then "+fix)
	}
	pom, err := os.ReadFile(filepath.Join(dir, "pom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<artifactId>` + regexp.QuoteMeta(artifact) + `</artifactId>\s*<version>([^<]+)</version>`).FindSubmatch(pom)
	if m == nil {
		t.Fatalf("%s/pom.xml names no %s version", dir, artifact)
	}
	want := fmt.Sprintf("%s-%s.jar", artifact, m[1])
	// A version starts with a digit: kafka-tools-api-4.4.0.jar is no
	// version of kafka-tools.
	jars, _ := filepath.Glob(filepath.Join(dir, "lib", artifact+"-[0-9]*.jar"))
	if len(jars) != 1 || filepath.Base(jars[0]) != want {
		held := "no " + artifact + " jar"
		if len(jars) > 0 {
			for i, j := range jars {
				jars[i] = filepath.Base(j)
			}
			held = strings.Join(jars, ", ")
			fix = "rm -r cmd/kafkabpl/" + dir + "/lib, then " + fix
		}
		missingTool(t, what, fmt.Errorf("%s/lib holds %s, want %s", dir, held, want), fix)
	}
	t.Logf("%s/lib: %s", dir, want)
	return java
}

// javaArgs runs Peer.java with the jars of javaDir/lib. Java, not a shell,
// expands the class path's "*".
func javaArgs(mode string, args ...string) []string {
	return append([]string{"-cp", filepath.Join(javaDir, "lib", "*"), filepath.Join(javaDir, "Peer.java"), mode}, args...)
}

// javaProduce sends msgs to topic with KafkaProducer, keys and values of
// the given types (their text in msgs), and returns them as Java reported
// them, with the partitions it chose.
func javaProduce(t *testing.T, ctx context.Context, java, servers, topic, keyType, valueType string, msgs []peerMsg) []peerMsg {
	t.Helper()
	mode := []string{"produce", servers, topic}
	if keyType != "String" || valueType != "String" {
		mode = []string{"produce-typed", servers, topic, keyType, valueType}
	}
	out := runPeerInput(t, ctx, keyValueLines(msgs), java, javaArgs(mode[0], mode[1:]...)...)
	return parseLines(t, out, "sent")
}

// typedBroker is interopBroker with the topics of typedMessages made at
// start too, so that every client sees their partitions from its first
// request, and a topic added to the table is never left to creation on
// first use.
func typedBroker(t *testing.T, bin string) (context.Context, string) {
	t.Helper()
	var topics []string
	for _, tm := range typedMessages() {
		topics = append(topics, tm.topic)
	}
	return interopBroker(t, bin, topics...)
}

// typedTopic is the typed messages of one topic of typed-produce.bpl and
// typed-consume.bpl.
type typedTopic struct {
	topic, kind        string // kind: the prefix of typed-consume.bpl's lines
	keyType, valueType string // Java's names: Integer, Long, Float, Double
	// sent is the text that typed-produce.bpl sends and Java's producer
	// parses; msgs is what both sides must read back. They differ where a
	// type cannot hold the number sent (16777217 as a Float).
	sent, msgs []peerMsg
}

// typedMessages are the messages of typed-produce.bpl, in canonical text
// (typedText), each on the partition of murmur2 over Java's encoding of
// its key: big-endian, 4 bytes for an Integer, 8 for a Long.
func typedMessages() []typedTopic {
	doubles := []struct {
		key   int32
		value float64
	}{
		{0, 0.1}, {1, -273.15}, {-1, 21.5}, {42, 3}, {-42, negZero()},
		{2147483647, 1e300}, {-2147483648, -2.5e-8}, {7, 4.9e-324},
	}
	longs := [][2]int64{
		{9007199254740993, -9223372036854775808}, {-1, 9223372036854775807}, {0, -42},
		{123456789012, 1}, {-9223372036854775808, 0}, {9223372036854775807, -9007199254740993},
	}
	// Each float is read back as itself, except 2^24+1: between the floats
	// 2^24 and 2^24+2 it is a tie, and both Java's Float.valueOf and BPL's
	// Float serializer (the number a double, then rounded to a float) round
	// it to even, 2^24. So both sides print 16777216 (Java: 1.6777216E7).
	// Java's Float.toString prints 1.4E-45 (it writes two digits at least)
	// and, on Java 17, 1.17549435E-38: more digits than the fewest that
	// name the float. BPL prints the double nearest the fewest, 1.0E-45 and
	// 1.1754944E-38. typedText sees the same float in each.
	floats := []struct {
		key  int64
		sent string  // as typed-produce.bpl and Java's Float.valueOf read it
		want float32 // the float both sides must read back
	}{
		{10, "0.1", 0.1}, {-273, "-273.15", -273.15}, {21, "21.5", 21.5}, {3, "3", 3},
		{-1, "-0.0", float32(negZero())},
		{math.MaxInt64, "3.4028235E38", math.MaxFloat32},
		{math.MinInt64, "1.4E-45", math.SmallestNonzeroFloat32},
		{1 << 32, "1.17549435E-38", 0x1p-126}, // the smallest normal float
		{16777217, "16777217", 16777216},
	}
	d := typedTopic{topic: "doubles", kind: "double", keyType: "Integer", valueType: "Double"}
	for _, m := range doubles {
		key := binary.BigEndian.AppendUint32(nil, uint32(m.key))
		d.msgs = append(d.msgs, peerMsg{strconv.Itoa(int(m.key)), javaPartition(string(key), interopPartitions), strconv.FormatFloat(m.value, 'g', -1, 64)})
	}
	d.sent = d.msgs
	l := typedTopic{topic: "longs", kind: "long", keyType: "Long", valueType: "Long"}
	for _, m := range longs {
		key := binary.BigEndian.AppendUint64(nil, uint64(m[0]))
		l.msgs = append(l.msgs, peerMsg{strconv.FormatInt(m[0], 10), javaPartition(string(key), interopPartitions), strconv.FormatInt(m[1], 10)})
	}
	l.sent = l.msgs
	f := typedTopic{topic: "floats", kind: "float", keyType: "Long", valueType: "Float"}
	for _, m := range floats {
		key := binary.BigEndian.AppendUint64(nil, uint64(m.key))
		sent := peerMsg{strconv.FormatInt(m.key, 10), javaPartition(string(key), interopPartitions), m.sent}
		f.sent = append(f.sent, sent)
		sent.value = strconv.FormatFloat(float64(m.want), 'g', -1, 32)
		f.msgs = append(f.msgs, sent)
	}
	return []typedTopic{d, l, f}
}

func negZero() float64 { return math.Copysign(0, -1) }

// typedText puts the keys and values of msgs, as a client printed them, in
// the canonical text of typedMessages: integers in decimal (Java's and
// BPL's text alike), doubles in Go's shortest form ("1.0E300", Java's and
// BPL's text, is "1e+300"; BPL's "3" and Java's "3.0" are "3"), floats in
// Go's shortest float form ("3.4028235E38" is "3.4028235e+38").
//
// A float's text is compared by value too, but only text that is the float
// rounded to at most 9 significant digits counts: 9 tell any two floats
// apart, so it is text printed for a float, by Java's Float.toString
// (1.4E-45, and 1.17549435E-38 on Java 17: more digits than the fewest) or
// by BPL (1.0E-45, 1.1754944E-38). The float widened to a double, exactly
// 0.10000000149011612 for 0.1f, would round to the same float, but is the
// text of another number: BPL must read 0.1f as 0.1, so it stays as it is.
// Text that is no number of its type stays as it is, and fails the
// comparison.
func typedText(t *testing.T, tm typedTopic, msgs []peerMsg) []peerMsg {
	t.Helper()
	canon := func(typ, s string) string {
		switch typ {
		case "Integer", "Long":
			bits := 64
			if typ == "Integer" {
				bits = 32
			}
			if n, err := strconv.ParseInt(s, 10, bits); err == nil {
				return strconv.FormatInt(n, 10)
			}
		case "Double":
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return strconv.FormatFloat(f, 'g', -1, 64)
			}
		case "Float":
			f, err := strconv.ParseFloat(s, 32)
			v, err64 := strconv.ParseFloat(s, 64)
			if err != nil || err64 != nil {
				break
			}
			for prec := range 9 { // digits after the first
				if d, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'e', prec, 64), 64); d == v {
					return strconv.FormatFloat(f, 'g', -1, 32)
				}
			}
		}
		return s
	}
	out := make([]peerMsg, len(msgs))
	for i, m := range msgs {
		out[i] = peerMsg{canon(tm.keyType, m.key), m.partition, canon(tm.valueType, m.value)}
	}
	return out
}
