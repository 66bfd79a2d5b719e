//go:build unix

package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The real Kafka broker that TestRealKafka, TestRealKafkaStream and the
// fault tests run on: finding java and the jars, starting one KRaft node on
// free ports of 127.0.0.1, and its log.

// kafkaDir holds pom.xml and, once fetched, lib/: the broker's jars.
const kafkaDir = "testdata/kafka"

// kafkaFetch fetches the broker's jars into kafkaDir/lib; run from the
// repository root.
const kafkaFetch = "mvn -q -B -f cmd/kafkabpl/testdata/kafka/pom.xml dependency:copy-dependencies"

// realClusterID is the broker's cluster id: a Kafka Uuid (16 bytes in
// URL-safe base64), the bytes of "kafkabpl-testing".
var realClusterID = base64.RawURLEncoding.EncodeToString([]byte("kafkabpl-testing"))

// needKafka checks for java on PATH and the broker's jars in
// kafkaDir/lib; it returns java's path.
func needKafka(t testing.TB) string {
	t.Helper()
	return needJars(t, kafkaDir, "kafka_2.13", "the Kafka broker's jars", kafkaFetch)
}

// realKafka is a running Kafka broker.
type realKafka struct {
	servers string // 127.0.0.1:PORT
	port    int
	log     string // the broker's log file
}

// freePort returns a port of 127.0.0.1 that nothing listens on now, never
// the same one twice in a test binary. It picks from below the kernel's
// ephemeral range (Linux's ip_local_port_range, 32768 up by default): a
// port from that range, as port 0 hands out, may be taken by any
// program's outgoing connection or port-0 listener before Kafka binds it,
// or while a killed node is down, so that its restart cannot bind. That
// happened beside another CI run that was starting clusters too.
func freePort(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	givenPorts.Lock()
	defer givenPorts.Unlock()
	for range 1000 {
		p := 10000 + rand.IntN(low-10000)
		if givenPorts.m[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue // in use
		}
		ln.Close()
		givenPorts.m[p] = true
		return p
	}
	t.Fatalf("no free port of 127.0.0.1 between 10000 and %d after 1000 tries", low)
	return 0
}

var givenPorts = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// ephemeralLow is the first port of the kernel's ephemeral range, read
// from /proc where there is one; else 32768, which is below the BSDs' and
// macOS's 49152.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil || low < 12000 {
		return 32768 // a range that starts this low leaves little below it: pick from it, as port 0 would
	}
	return low
}

// startKafka formats a KRaft log directory and starts a broker that is
// also its own controller, waits until it answers metadata requests with
// itself as the one broker (60 s at most), and kills it when the test
// ends. When the test failed, the broker log's warnings and errors are
// logged.
func startKafka(t testing.TB, java string) *realKafka {
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
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.share.min.record.lock.duration.ms=1000
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

func writeFile(t testing.TB, path, content string) {
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

// writeLog4j writes, in dir, a log4j2 configuration that sends a Kafka
// node's log to the file logFile, and returns its path.
func writeLog4j(t testing.TB, dir, logFile string) string {
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
