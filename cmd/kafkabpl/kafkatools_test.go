//go:build unix

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaTools runs Apache Kafka 4.4.0's own command-line tools against
// kafkabpl broker (the built command, its default three brokers, on free
// ports), as an operator would: the classes that kafka-topics.sh,
// kafka-get-offsets.sh, kafka-consumer-groups.sh and kafka-share-groups.sh
// start, from the jars testdata/kafka/pom.xml fetches (kafka-tools beside
// the broker). Each tool must exit 0, print no exception, and print what
// the cluster holds. Before issue 47 every one of them but --list ended in
// a NullPointerException (DescribeTopicPartitions answered a null list of
// eligible leader replicas, CreateTopics a null list of configs), and
// kafka-consumer-groups --list listed no group (kfake matched group types
// by case). Without java or the jars it skips, and fails under CI.
func TestKafkaTools(t *testing.T) {
	t.Parallel()
	java := needJars(t, kafkaDir, "kafka-tools", "Kafka's command-line tools' jars", kafkaFetch)
	bin := buildBinary(t)
	b := startBrokerProc(t, bin, "--port", "0")
	servers := strings.Join(b.addrs, ",")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	lib, err := filepath.Abs(filepath.Join(kafkaDir, "lib"))
	if err != nil {
		t.Fatal(err)
	}
	tool := func(class string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, java, append([]string{"-cp", filepath.Join(lib, "*"), class, "--bootstrap-server", servers}, args...)...)
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		name := class[strings.LastIndex(class, ".")+1:] + " " + strings.Join(args, " ")
		if err != nil || strings.Contains(string(out), "Exception") {
			t.Fatalf("%s: %v\n%s\nthe broker's stderr:\n%s", name, err, out, b.stderr)
		}
		t.Logf("%s:\n%s", name, out)
		return string(out)
	}
	const (
		topics  = "org.apache.kafka.tools.TopicCommand"
		offsets = "org.apache.kafka.tools.GetOffsetShell"
		groups  = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
		shares  = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
		topic   = "tools-orders"
		group   = "tools-group"
		share   = "tools-share"
	)

	if out := tool(topics, "--create", "--topic", topic, "--partitions", "3", "--config", "retention.ms=3600000"); !strings.Contains(out, "Created topic "+topic) {
		t.Fatalf("kafka-topics --create: %q, want it created", out)
	}
	if out := tool(topics, "--list"); !slices.Contains(strings.Fields(out), topic) {
		t.Fatalf("kafka-topics --list: %q, want %s", out, topic)
	}
	desc := tool(topics, "--describe", "--topic", topic)
	for _, want := range []string{"PartitionCount: 3", "ReplicationFactor: 3", "retention.ms=3600000", "Partition: 0", "Partition: 1", "Partition: 2"} {
		if !strings.Contains(desc, want) {
			t.Errorf("kafka-topics --describe: no %q in\n%s", want, desc)
		}
	}

	// 5 records in partition 0, 2 in partition 1, none in 2.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for i := range 7 {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(min(i/5, 1)), Value: []byte("order")})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ends := tool(offsets, "--topic", topic)
	if got := strings.Fields(ends); !slices.Equal(slices.Sorted(slices.Values(got)), []string{topic + ":0:5", topic + ":1:2", topic + ":2:0"}) {
		t.Fatalf("kafka-get-offsets: %q, want %s:0:5, :1:2 and :2:0", ends, topic)
	}

	// A group that committed 4 of partition 0 and all of partition 1.
	adm := kadm.NewClient(cl)
	var commit kadm.Offsets
	commit.AddOffset(topic, 0, 4, -1)
	commit.AddOffset(topic, 1, 2, -1)
	if err := adm.CommitAllOffsets(ctx, group, commit); err != nil {
		t.Fatal(err)
	}
	if out := tool(groups, "--list"); !slices.Contains(strings.Fields(out), group) {
		t.Fatalf("kafka-consumer-groups --list: %q, want %s", out, group)
	}
	// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
	if got := toolRows(tool(groups, "--describe", "--group", group), group, 6); !slices.Equal(got, []string{
		group + " " + topic + " 0 4 5 1", group + " " + topic + " 1 2 2 0"}) {
		t.Fatalf("kafka-consumer-groups --describe: rows %q, want partition 0 at 4 of 5 (lag 1), 1 at 2 of 2", got)
	}
	// GROUP TOPIC PARTITION NEW-OFFSET
	if got := toolRows(tool(groups, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute"), group, 4); !slices.Equal(got, []string{
		group + " " + topic + " 0 0", group + " " + topic + " 1 0", group + " " + topic + " 2 0"}) {
		t.Fatalf("kafka-consumer-groups --reset-offsets: rows %q, want every partition at 0", got)
	}
	fetched, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		if o, ok := fetched.Lookup(topic, p); !ok || o.At != 0 {
			t.Errorf("after kafka-consumer-groups --reset-offsets, partition %d's committed offset is %+v (found %v), want 0", p, o, ok)
		}
	}

	// A share group set to start at the end, then at the start.
	if got := toolRows(tool(shares, "--reset-offsets", "--group", share, "--topic", topic, "--to-latest", "--execute"), share, 4); !slices.Equal(got, []string{
		share + " " + topic + " 0 5", share + " " + topic + " 1 2", share + " " + topic + " 2 0"}) {
		t.Fatalf("kafka-share-groups --reset-offsets --to-latest: rows %q, want 5, 2 and 0", got)
	}
	tool(shares, "--reset-offsets", "--group", share, "--topic", topic, "--to-earliest", "--execute")
	// GROUP TOPIC PARTITION START-OFFSET LAG
	if got := toolRows(tool(shares, "--describe", "--group", share), share, 5); !slices.Equal(got, []string{
		share + " " + topic + " 0 0 5", share + " " + topic + " 1 0 2", share + " " + topic + " 2 0 0"}) {
		t.Fatalf("kafka-share-groups --describe after --to-earliest: rows %q, want every partition at 0", got)
	}
}

// toolRows returns the rows of a Kafka tool's table that start with
// group, each as its first n columns joined by one space, sorted.
func toolRows(out, group string, n int) []string {
	var rows []string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) >= n && f[0] == group {
			rows = append(rows, strings.Join(f[:n], " "))
		}
	}
	slices.Sort(rows)
	return rows
}
