package kafkabpl

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The admin tests run on three brokers that create no topic on first use:
// what exists is what the admin methods made. This file tests the topic
// and cluster methods, with bad inputs and concurrent calls;
// admin_groups_test.go, admin_metadata_test.go and admin_failures_test.go
// hold the rest, and package functions the BPL functions over them.

// TestAdminGoAPI checks the typed results of the Go methods.
func TestAdminGoAPI(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, servers))

	created := must[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"x", "y"}, TopicOptions{Partitions: 2, ReplicationFactor: 2, Configs: map[string]string{"retention.ms": "1000"}}))
	if diff := cmp.Diff(map[string]bool{"x": true, "y": true}, created); diff != "" {
		t.Errorf("CreateTopics (-want +got):\n%s", diff)
	}
	for p := range int32(2) {
		if err := c.MoveTopicPartition("x", p, 1); err != nil {
			t.Fatal(err)
		}
	}
	infos := must[[]TopicInfo](t)(lib.DescribeTopics(ctx, servers, "x"))
	want := []TopicInfo{{Topic: "x", Partitions: []PartitionInfo{
		{Partition: 0, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
		{Partition: 1, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
	}}}
	if diff := cmp.Diff(want, infos); diff != "" {
		t.Errorf("DescribeTopics (-want +got):\n%s", diff)
	}
	// A missing topic is an error naming it; the others still come back.
	infos, err := lib.DescribeTopics(ctx, a, "x", "ghost")
	if !errors.Is(err, kerr.UnknownTopicOrPartition) || !strings.Contains(err.Error(), `topic "ghost"`) || len(infos) != 1 || infos[0].Topic != "x" {
		t.Errorf("DescribeTopics with a missing topic: %v, %v", infos, err)
	}
	if names := must[[]string](t)(lib.ListTopics(ctx, a)); !cmp.Equal(names, []string{"x", "y"}) {
		t.Errorf("ListTopics = %q: describing a missing topic must not create it", names)
	}
	info := must[*ClusterInfo](t)(lib.DescribeCluster(ctx, a))
	if info.ClusterID != "kfake" || info.Controller != 2 || len(info.Brokers) != 3 || info.Brokers[1].ID != 1 || info.Brokers[1].Host != "127.0.0.1" {
		t.Errorf("DescribeCluster = %+v", info)
	}
	if grown := must[bool](t)(lib.CreatePartitions(ctx, a, "y", 4)); !grown {
		t.Error("CreatePartitions y to 4 = false")
	}
	deleted := must[map[string]bool](t)(lib.DeleteTopics(ctx, a, []string{"y", "y", "z"}))
	if diff := cmp.Diff(map[string]bool{"y": true, "z": false}, deleted); diff != "" {
		t.Errorf("DeleteTopics (-want +got):\n%s", diff)
	}
	if gs := must[[]GroupListing](t)(lib.ListGroups(ctx, a)); len(gs) != 0 {
		t.Errorf("ListGroups on a new cluster = %v", gs)
	}
	if _, err := lib.CreateTopics(ctx, a, []string{"n"}, TopicOptions{Partitions: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative partitions: %v", err)
	}
}

// TestAdminTopicErrors checks per-topic failures: every topic is tried, the
// error names each failed one with its reason (reachable with errors.Is)
// and says what happened to the others.
func TestAdminTopicErrors(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	must[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"old"}, TopicOptions{}))

	// kfake, as Kafka, refuses a replication factor above the number of
	// brokers with INVALID_REPLICATION_FACTOR, for each topic.
	_, err := lib.CreateTopics(ctx, a, []string{"r1", "r2"}, TopicOptions{ReplicationFactor: 5})
	if !errors.Is(err, kerr.InvalidReplicationFactor) || ErrorType(err) != "KafkaError" {
		t.Errorf("replication factor 5 on 3 brokers: %v (%s)", err, ErrorType(err))
	}
	wantMsg := `kafka-create-topics: 2 of 2 topics failed; topic "r1": INVALID_REPLICATION_FACTOR`
	if err == nil || !strings.HasPrefix(err.Error(), wantMsg) || !strings.Contains(err.Error(), `; topic "r2": INVALID_REPLICATION_FACTOR`) {
		t.Errorf("message %q: want it to start %q and name r2", err, wantMsg)
	}

	// kfake takes any name; the client applies Kafka's rules, and a bad
	// name fails only its own topic.
	done, err := lib.CreateTopics(ctx, a, []string{"good", "bad name", "old"}, TopicOptions{})
	if !errors.Is(err, kerr.InvalidTopicException) {
		t.Errorf("bad name: %v", err)
	}
	if diff := cmp.Diff(map[string]bool{"good": true, "old": false}, done); diff != "" {
		t.Errorf("the topics that did not fail (-want +got):\n%s", diff)
	}
	want := `kafka-create-topics: 1 of 3 topics failed; invalid topic name "bad name": only letters, digits, '.', '_' and '-' are allowed: INVALID_TOPIC_EXCEPTION`
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), `; created: "good"; already existed: "old"`) {
		t.Errorf("message %q", err)
	}

	// Not authorized: kfake answers TOPIC_AUTHORIZATION_FAILED for the
	// one topic, and the other is still created.
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.CreateTopics}, Topic: "secret", Err: kerr.TopicAuthorizationFailed})
	_, err = lib.CreateTopics(ctx, a, []string{"secret", "open"}, TopicOptions{})
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || !strings.Contains(err.Error(), `topic "secret": TOPIC_AUTHORIZATION_FAILED`) || !strings.HasSuffix(err.Error(), `created: "open"`) {
		t.Errorf("not authorized: %v", err)
	}
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DeleteTopics}, Topic: "open", Err: kerr.TopicAuthorizationFailed})
	_, err = lib.DeleteTopics(ctx, a, []string{"open", "good", "never"})
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || !strings.HasSuffix(err.Error(), `; deleted: "good"; did not exist: "never"`) {
		t.Errorf("delete not authorized: %v", err)
	}
	// A single topic's error is just that topic's.
	_, err = lib.CreateTopics(ctx, a, []string{"x y"}, TopicOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), `kafka-create-topics: invalid topic name "x y"`) {
		t.Errorf("one bad topic: %v", err)
	}
	if names := must[[]string](t)(lib.ListTopics(ctx, a)); !cmp.Equal(names, []string{"old", "open"}) {
		t.Errorf("after the errors: %q", names)
	}
}

// TestAdminConcurrent runs admin calls on one handle from many goroutines
// while the handle is destroyed: each call succeeds or fails cleanly.
func TestAdminConcurrent(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	var wg sync.WaitGroup
	var done atomic.Int32 // topics created, described and deleted
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				topic := fmt.Sprintf("c%d-%d", i, j)
				_, err := lib.CreateTopics(ctx, a, []string{topic}, TopicOptions{})
				if err == nil {
					_, err = lib.DescribeTopics(ctx, a, topic)
				}
				if err == nil {
					_, err = lib.DeleteTopics(ctx, a, []string{topic})
				}
				if err != nil {
					if !errors.Is(err, ErrUnknownHandle) && !errors.Is(err, ErrClosed) {
						t.Errorf("%s: %v", topic, err)
					}
					return
				}
				done.Add(1)
			}
		})
	}
	// Destroyed while the calls run: once some went through, with most
	// of the 160 rounds still to come.
	waitFor(t, "the first admin calls", func() bool { return done.Load() >= 8 })
	must[bool](t)(lib.Destroy(ctx, a))
	wg.Wait()
}
