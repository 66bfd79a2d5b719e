package kafkabpl

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The admin tests run on three brokers that create no topic on first use:
// what exists is what the admin functions made. This file tests the
// topic and cluster functions, through BPL and Go, with bad inputs and
// concurrent calls; admin_groups_test.go, admin_metadata_test.go and
// admin_failures_test.go hold the rest.

// wantFormat fails the test unless v prints as want.
func wantFormat(t testing.TB, what string, v any, want string) {
	t.Helper()
	if got := value.Format(v); got != want {
		t.Errorf("%s\n got  %s\n want %s", what, got, want)
	}
}

// TestAdminTopics runs the topic functions through the BPL table on an
// admin handle and on configs, checking each result's exact shape.
func TestAdminTopics(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	a := mustCall(t, lib, "kafka-create", "admin", servers)

	wantFormat(t, "create t1 t2",
		mustCall(t, lib, "kafka-create-topics", a, []any{"t1", "t2"}, nv{"partitions", 3}, nv{"replication-factor", 3}),
		`("t1" => true "t2" => true)`)
	// A config is a target too: a server string, or a named list.
	wantFormat(t, "create t2 t3 on a server string",
		mustCall(t, lib, "kafka-create-topics", servers, []any{"t2", "t3", "t2"}),
		`("t2" => false "t3" => true)`)
	wantFormat(t, "create one topic by name",
		mustCall(t, lib, "kafka-create-topics", map[string]any{"servers": servers, "client-id": "ops"}, "t4", nv{"configs", map[string]any{"retention.ms": 60000, "cleanup.policy": "delete"}}),
		`("t4" => true)`)
	// An internal topic is left out of the listings.
	mustCall(t, lib, "kafka-create-topics", a, "_internal", nv{"configs", map[string]any{"kfake.is_internal": true}})
	wantFormat(t, "list", mustCall(t, lib, "kafka-list-topics", a), `("t1" "t2" "t3" "t4")`)
	wantFormat(t, "list on a config list", mustCall(t, lib, "kafka-list-topics", []any{servers}), `("t1" "t2" "t3" "t4")`)

	wantFormat(t, "delete", mustCall(t, lib, "kafka-delete-topics", a, []any{"t3", "missing", "t4"}), `("t3" => true "missing" => false "t4" => true)`)
	wantFormat(t, "delete none", mustCall(t, lib, "kafka-delete-topics", a, []any{}), `()`)
	wantFormat(t, "list after delete", mustCall(t, lib, "kafka-list-topics", servers), `("t1" "t2")`)

	// Leaders placed by hand make describe-topics deterministic: kfake
	// lists a partition's replicas from its leader on, round the brokers.
	for p := range int32(3) {
		if err := c.MoveTopicPartition("t1", p, p); err != nil {
			t.Fatal(err)
		}
		if err := c.MoveTopicPartition("t2", p, 2-p); err != nil {
			t.Fatal(err)
		}
	}
	t1 := `"t1" => ("partitions" => (` +
		`("partition" => 0 "leader" => 0 "replicas" => (0 1 2) "isr" => (0 1 2)) ` +
		`("partition" => 1 "leader" => 1 "replicas" => (1 2 0) "isr" => (1 2 0)) ` +
		`("partition" => 2 "leader" => 2 "replicas" => (2 0 1) "isr" => (2 0 1))))`
	t2 := `"t2" => ("partitions" => (` +
		`("partition" => 0 "leader" => 2 "replicas" => (2 0 1) "isr" => (2 0 1)) ` +
		`("partition" => 1 "leader" => 1 "replicas" => (1 2 0) "isr" => (1 2 0)) ` +
		`("partition" => 2 "leader" => 0 "replicas" => (0 1 2) "isr" => (0 1 2))))`
	wantFormat(t, "describe t1", mustCall(t, lib, "kafka-describe-topics", a, "t1"), "("+t1+")")
	wantFormat(t, "describe t2 t1, in that order", mustCall(t, lib, "kafka-describe-topics", a, []any{"t2", "t1"}), "("+t2+" "+t1+")")
	wantFormat(t, "describe all, sorted, no internal topic", mustCall(t, lib, "kafka-describe-topics", servers), "("+t1+" "+t2+")")
	wantFormat(t, "describe no topics", mustCall(t, lib, "kafka-describe-topics", a, []any{}), "()")
	wantFormat(t, "describe the internal topic by name", names(mustCall(t, lib, "kafka-describe-topics", a, "_internal").(*value.List)), `("_internal")`)

	// describe-cluster: kfake's id, its last broker as controller, and
	// the brokers in id order with the addresses they listen on.
	var brokers []string
	for i, addr := range cluster.Addrs() {
		host, port, _ := strings.Cut(addr, ":")
		brokers = append(brokers, fmt.Sprintf(`("id" => %d "host" => %q "port" => %s)`, i, host, port))
	}
	wantFormat(t, "describe-cluster", mustCall(t, lib, "kafka-describe-cluster", a),
		`("cluster-id" => "kfake" "controller" => 2 "brokers" => (`+strings.Join(brokers, " ")+`))`)

	// create-partitions grows a topic; the same count again is false.
	if got := mustCall(t, lib, "kafka-create-partitions", a, "t1", 5); got != true {
		t.Errorf("grow t1 to 5 = %v, want true", got)
	}
	if got := mustCall(t, lib, "kafka-create-partitions", servers, "t1", 5); got != false {
		t.Errorf("grow t1 to 5 again = %v, want false", got)
	}
	parts, _ := mustCall(t, lib, "kafka-describe-topics", a, "t1").(*value.List).Get("t1")
	if ps, _ := parts.(*value.List).Get("partitions"); ps.(*value.List).Len() != 5 {
		t.Errorf("t1 after growing: %s", value.Format(parts))
	}
	_, err := call(t, lib, "kafka-create-partitions", a, "t1", 2)
	if !errors.Is(err, kerr.InvalidPartitions) || !strings.Contains(err.Error(), `kafka-create-partitions: topic "t1" has 5 partitions, more than 2`) {
		t.Errorf("shrinking: %v", err)
	}
	_, err = call(t, lib, "kafka-create-partitions", a, "nope", 2)
	if !errors.Is(err, kerr.UnknownTopicOrPartition) || ErrorType(err) != "KafkaError" || !strings.Contains(err.Error(), `topic "nope"`) {
		t.Errorf("growing a missing topic: %v", err)
	}
}

// names returns the names of l's elements, as a list of strings.
func names(l *value.List) *value.List {
	out := &value.List{}
	for name := range l.All() {
		out.Append(name)
	}
	return out
}

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

// TestAdminBadInputs checks targets and arguments that are wrong.
func TestAdminBadInputs(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	c := mustCall(t, lib, "kafka-create", "consumer", servers)
	gone := mustCall(t, lib, "kafka-create", "admin", servers)
	mustCall(t, lib, "kafka-destroy", gone)
	a := mustCall(t, lib, "kafka-create", "admin", servers)

	tests := []struct {
		fn   string
		args []any
		kind error
		msg  string
	}{
		{"kafka-list-topics", []any{"a" + strings.Repeat("0", 32)}, ErrUnknownHandle, `kafka-list-topics: unknown admin id "a000`},
		{"kafka-list-topics", []any{gone}, ErrUnknownHandle, "unknown admin id"},
		{"kafka-list-topics", []any{"p" + strings.Repeat("1", 32)}, ErrUnknownHandle, `unknown producer id "p111`},
		{"kafka-list-topics", []any{p}, ErrWrongKind, "is a producer id, not an admin id"},
		{"kafka-describe-cluster", []any{c}, ErrWrongKind, "is a consumer id, not an admin id"},
		{"kafka-list-topics", []any{42}, ErrInvalidConfig, "got 42"},
		{"kafka-list-topics", []any{map[string]any{"servers": servers, "grup": "g"}}, ErrInvalidConfig, `unknown config key "grup"`},
		{"kafka-list-topics", []any{}, ErrInvalidArgument, "kafka-list-topics: want 1 arguments, got 0; usage: (kafka-list-topics target)"},
		{"kafka-create-topics", []any{a}, ErrInvalidArgument, "want 2 arguments, got 1"},
		{"kafka-create-topics", []any{a, 7}, ErrInvalidArgument, "topics: want a topic name or a list of them, got 7"},
		{"kafka-create-topics", []any{a, "t", nv{"partitions", 0}}, ErrInvalidArgument, `"partitions": want an integer from 1 to 2147483647, got 0`},
		{"kafka-create-topics", []any{a, "t", nv{"partitions", "3"}}, ErrInvalidArgument, `"partitions": want an integer`},
		{"kafka-create-topics", []any{a, "t", nv{"replication-factor", 40000}}, ErrInvalidArgument, `"replication-factor": want an integer from 1 to 32767`},
		{"kafka-create-topics", []any{a, "t", nv{"partitons", 3}}, ErrInvalidArgument, `unknown named argument "partitons" (did you mean "partitions"?)`},
		{"kafka-create-topics", []any{a, "t", nv{"configs", []any{"x"}}}, ErrInvalidArgument, `"configs": want a named list`},
		{"kafka-create-topics", []any{a, "t", nv{"configs", map[string]any{"k": []any{1}}}}, ErrInvalidArgument, `"configs" "k": want a string or a number, got the list (1)`},
		{"kafka-delete-topics", []any{a, map[string]any{"t": 1}}, ErrInvalidArgument, "topics: want topic names"},
		{"kafka-describe-topics", []any{a, "t", "u"}, ErrInvalidArgument, "want 1 to 2 arguments, got 3"},
		{"kafka-describe-topics", []any{a, "nope"}, kerr.UnknownTopicOrPartition, `kafka-describe-topics: topic "nope": UNKNOWN_TOPIC_OR_PARTITION`},
		{"kafka-create-partitions", []any{a, "t", 0}, ErrInvalidArgument, "count: want an integer from 1"},
		{"kafka-create-partitions", []any{a, "a b", 2}, ErrInvalidArgument, `topic: invalid topic name "a b"`},
		{"kafka-create-partitions", []any{a, 5, 2}, ErrInvalidArgument, "topic: want a string, got 5"},
		{"kafka-describe-group", []any{a, 5}, ErrInvalidArgument, "group: want a string, got 5"},
		{"kafka-describe-group", []any{a, ""}, ErrInvalidArgument, `group: want a group name`},
		{"kafka-describe-group", []any{a, "no-such-group"}, kerr.GroupIDNotFound, `kafka-describe-group: group "no-such-group": GROUP_ID_NOT_FOUND`},
		{"kafka-list-groups", []any{a, "x"}, ErrInvalidArgument, "want 1 arguments, got 2"},
	}
	for _, tt := range tests {
		t.Run(tt.fn+" "+value.Format(bplList(t, tt.args...)), func(t *testing.T) {
			v, err := call(t, lib, tt.fn, tt.args...)
			if err == nil {
				t.Fatalf("got %s, want an error", value.Format(v))
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q is a %s, want %v", err, ErrorType(err), tt.kind)
			}
			if !strings.HasPrefix(err.Error(), tt.fn+": ") || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q: want it to start with %q and contain %q", err, tt.fn+": ", tt.msg)
			}
		})
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
