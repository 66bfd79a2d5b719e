package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kerr"
)

// testRealOps runs the operator's admin (configs, offsets, records,
// group resets and deletes) on the real broker, with its bad inputs:
// what kfake lets pass (an unknown config) is refused here.
func testRealOps(t *testing.T, servers string) {
	lib := newRealLib(t)
	ctx := realCtx(t)
	a := ok[string](t)(lib.Create(ctx, kafkabpl.Admin, servers))
	const topic, group = "rk-ops", "rk-ops-group"
	ok[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{topic}, kafkabpl.TopicOptions{Partitions: 2}))

	// Configs.
	res := kafkabpl.TopicConfigs(topic)
	if err := lib.AlterConfigs(ctx, a, res, map[string]string{"retention.ms": "60000"}, nil); err != nil {
		t.Fatal(err)
	}
	entry := func(entries []kafkabpl.ConfigEntry, name string) kafkabpl.ConfigEntry {
		for _, e := range entries {
			if e.Name == name {
				return e
			}
		}
		t.Fatalf("no config %s", name)
		return kafkabpl.ConfigEntry{}
	}
	described := eventually(t, func() ([]kafkabpl.ConfigEntry, error) { return lib.DescribeConfigs(ctx, a, res) },
		func(es []kafkabpl.ConfigEntry) bool { return entry(es, "retention.ms").Value == "60000" })
	if e := entry(described, "retention.ms"); e.Source != "topic" {
		t.Errorf("retention.ms: %+v", e)
	}
	if err := lib.AlterConfigs(ctx, a, res, map[string]string{"retention.mss": "1"}, nil); err == nil || !strings.Contains(err.Error(), "retention.mss") {
		t.Errorf("an unknown config: %v", err)
	}
	if err := lib.AlterConfigs(ctx, a, res, map[string]string{"retention.ms": "soon"}, nil); err == nil || !strings.Contains(err.Error(), "retention.ms") {
		t.Errorf("a bad value: %v", err)
	}
	if err := lib.AlterConfigs(ctx, a, kafkabpl.BrokerConfigs(kafkabpl.ClusterBrokers), map[string]string{"log.cleaner.threads": "2"}, nil); err != nil {
		t.Fatal(err)
	}
	shared := eventually(t, func() ([]kafkabpl.ConfigEntry, error) {
		return lib.DescribeConfigs(ctx, a, kafkabpl.BrokerConfigs(1))
	}, func(es []kafkabpl.ConfigEntry) bool { return entry(es, "log.cleaner.threads").Value == "2" })
	if e := entry(shared, "log.cleaner.threads"); e.Source != "cluster" {
		t.Errorf("log.cleaner.threads on broker 1: %+v", e)
	}
	if _, err := lib.DescribeConfigs(ctx, a, kafkabpl.TopicConfigs("rk-ops-missing")); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("an unknown topic's configs: %v", err)
	}

	// ACLs: this broker has no authorizer, and says so.
	if _, err := lib.DescribeACLs(ctx, a, kafkabpl.ACL{}); !errors.Is(err, kerr.SecurityDisabled) {
		t.Errorf("ACLs on a broker without an authorizer: %v", err)
	}

	// Offsets and records.
	p := newProducer(t, lib, ctx, servers)
	base := time.UnixMilli(1_700_000_000_000)
	for i := range 4 {
		part := int32(i % 2)
		ok[int](t)(lib.Send(ctx, p, []string{topic}, []kafkabpl.Message{{Value: fmt.Sprint(i), Partition: &part, Timestamp: base.Add(time.Duration(i) * time.Second)}}))
	}
	if got := offsets(ok[[]kafkabpl.PartitionOffset](t)(lib.ListOffsets(ctx, a, topic, kafkabpl.OffsetLatest()))); got != "0:2 1:2" {
		t.Errorf("latest: %s", got)
	}
	if got := offsets(ok[[]kafkabpl.PartitionOffset](t)(lib.ListOffsets(ctx, a, topic, kafkabpl.OffsetAtTime(base.Add(2*time.Second))))); got != "0:1 1:1" {
		t.Errorf("at a time: %s", got)
	}
	deleted := ok[[]kafkabpl.PartitionOffset](t)(lib.DeleteRecords(ctx, a, topic, map[int32]int64{0: 1, 1: 7}))
	if deleted[0].Offset != 1 || !errors.Is(deleted[1].Err, kerr.OffsetOutOfRange) {
		t.Errorf("deleted: %+v", deleted)
	}

	// A group: reset refused while it has a member, then done.
	c := ok[string](t)(lib.Create(ctx, kafkabpl.Consumer, map[string]any{"servers": servers, "group": group, "topics": topic, "auto-offset-reset": "earliest"}))
	eventually(t, func() (*kafkabpl.Polled, error) { return lib.Poll(ctx, c, 200*time.Millisecond) }, func(p *kafkabpl.Polled) bool { return p.Len() > 0 })
	if _, err := lib.ResetGroupOffsets(ctx, a, group, topic, kafkabpl.OffsetEarliest()); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Errorf("a reset of an active group: %v", err)
	}
	if err := lib.DeleteGroup(ctx, a, group); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Errorf("a delete of an active group: %v", err)
	}
	ok[bool](t)(lib.Destroy(ctx, c))
	reset := eventually(t, func() ([]kafkabpl.PartitionOffset, error) {
		return lib.ResetGroupOffsets(ctx, a, group, topic, kafkabpl.OffsetAt(0))
	}, func([]kafkabpl.PartitionOffset) bool { return true })
	if got := offsets(reset); got != "0:1 1:0" {
		t.Errorf("reset to 0, clamped to the starts: %s", got)
	}
	// A copy from a group that does not exist: Kafka answers the offset
	// fetch of an unknown group with no offsets and no error, and the
	// reset did nothing, silently (issue 47).
	if _, err := lib.ResetGroupOffsets(ctx, a, group, topic, kafkabpl.OffsetsOf("rk-no-such-group")); !errors.Is(err, kerr.GroupIDNotFound) || !strings.Contains(err.Error(), `group "rk-no-such-group"`) {
		t.Errorf("a copy from a group that does not exist: %v, want GROUP_ID_NOT_FOUND naming it", err)
	}
	if err := lib.DeleteGroup(ctx, a, group); err != nil {
		t.Errorf("a delete of an inactive group: %v", err)
	}
	if err := lib.DeleteGroup(ctx, a, group); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("a delete of a deleted group: %v", err)
	}
}

// offsets formats offsets as "partition:offset" joined.
func offsets(pos []kafkabpl.PartitionOffset) string {
	var s []string
	for _, po := range pos {
		s = append(s, fmt.Sprintf("%d:%d", po.Partition, po.Offset))
	}
	return strings.Join(s, " ")
}
