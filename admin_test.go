package kafkabpl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The admin tests run on three brokers that create no topic on first use:
// what exists is what the admin functions made.
// wantFormat fails the test unless v prints as want.
func wantFormat(t testing.TB, what string, v any, want string) {
	t.Helper()
	if got := Format(v); got != want {
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
	wantFormat(t, "describe the internal topic by name", names(mustCall(t, lib, "kafka-describe-topics", a, "_internal").(*List)), `("_internal")`)

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
	parts, _ := mustCall(t, lib, "kafka-describe-topics", a, "t1").(*List).Get("t1")
	if ps, _ := parts.(*List).Get("partitions"); ps.(*List).Len() != 5 {
		t.Errorf("t1 after growing: %s", Format(parts))
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
func names(l *List) *List {
	out := &List{}
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
	a := mustCall(t, lib, "kafka-create", "admin", servers)
	mustCall(t, lib, "kafka-create-topics", a, "old")

	// kfake, as Kafka, refuses a replication factor above the number of
	// brokers with INVALID_REPLICATION_FACTOR, for each topic.
	_, err := call(t, lib, "kafka-create-topics", a, []any{"r1", "r2"}, nv{"replication-factor", 5})
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
	_, err = call(t, lib, "kafka-create-topics", a, []any{"secret", "open"})
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || !strings.Contains(err.Error(), `topic "secret": TOPIC_AUTHORIZATION_FAILED`) || !strings.HasSuffix(err.Error(), `created: "open"`) {
		t.Errorf("not authorized: %v", err)
	}
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DeleteTopics}, Topic: "open", Err: kerr.TopicAuthorizationFailed})
	_, err = call(t, lib, "kafka-delete-topics", a, []any{"open", "good", "never"})
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || !strings.HasSuffix(err.Error(), `; deleted: "good"; did not exist: "never"`) {
		t.Errorf("delete not authorized: %v", err)
	}
	// A single topic's error is just that topic's.
	_, err = call(t, lib, "kafka-create-topics", a, "x y")
	if err == nil || !strings.HasPrefix(err.Error(), `kafka-create-topics: invalid topic name "x y"`) {
		t.Errorf("one bad topic: %v", err)
	}
	wantFormat(t, "after the errors", mustCall(t, lib, "kafka-list-topics", a), `("old" "open")`)
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
		{"kafka-create-topics", []any{a, "t", nv{"configs", map[string]any{"k": []any{1}}}}, ErrInvalidArgument, `"configs" "k": want a string or a number, got (1)`},
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
		t.Run(tt.fn+" "+Format(bplList(t, tt.args...)), func(t *testing.T) {
			v, err := call(t, lib, tt.fn, tt.args...)
			if err == nil {
				t.Fatalf("got %s, want an error", Format(v))
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

// TestAdminLeaderChanges checks that describe-topics shows leaders moved
// by the cluster.
func TestAdminLeaderChanges(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	must[map[string]bool](t)(lib.CreateTopics(ctx, a, []string{"moving"}, TopicOptions{Partitions: 6}))

	// leaders returns the leaders describe-topics shows, by partition.
	leaders := func() []int32 {
		infos := must[[]TopicInfo](t)(lib.DescribeTopics(ctx, a, "moving"))
		var out []int32
		for _, p := range infos[0].Partitions {
			out = append(out, p.Leader)
		}
		return out
	}
	// waitLeaders polls describe-topics until it shows the cluster's
	// own leaders, or fails after 10 s.
	waitLeaders := func(what string) []int32 {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var want []int32
			for p := range int32(6) {
				want = append(want, c.LeaderFor("moving", p))
			}
			got := leaders()
			if cmp.Equal(got, want) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: describe-topics shows leaders %v, the cluster %v", what, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	before := waitLeaders("at creation")

	to := (before[3] + 1) % 3
	if err := c.MoveTopicPartition("moving", 3, to); err != nil {
		t.Fatal(err)
	}
	if got := waitLeaders("after MoveTopicPartition"); got[3] != to {
		t.Errorf("partition 3 led by %d, moved to %d", got[3], to)
	}
	// Shuffle until some leader changes (random, so bounded retries).
	changed := false
	for range 20 {
		prev := leaders()
		c.ShufflePartitionLeaders()
		if !cmp.Equal(waitLeaders("after ShufflePartitionLeaders"), prev) {
			changed = true
			break
		}
	}
	if !changed {
		t.Error("20 shuffles changed no leader")
	}
	// The replicas follow the leader: it is always the first.
	for _, p := range must[[]TopicInfo](t)(lib.DescribeTopics(ctx, a, "moving"))[0].Partitions {
		if len(p.Replicas) == 0 || p.Replicas[0] != p.Leader {
			t.Errorf("partition %d: leader %d, replicas %v", p.Partition, p.Leader, p.Replicas)
		}
	}
}

// TestAdminGroupLag follows a group's lag down to 0 as a consumer catches
// up and commits.
func TestAdminGroupLag(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	a := mustCall(t, lib, "kafka-create", "admin", servers)
	mustCall(t, lib, "kafka-create-topics", a, "lagged", nv{"partitions", 2})
	_, err := call(t, lib, "kafka-describe-group", a, "g-lag")
	if !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describe-group before the group exists: %v", err)
	}

	p := must[string](t)(lib.Create(ctx, Producer, servers))
	var msgs []Message // 6 to partition 0, 4 to partition 1
	for i := range 10 {
		part := int32(0)
		if i >= 6 {
			part = 1
		}
		msgs = append(msgs, Message{Value: fmt.Sprint(i), Partition: new(part)})
	}
	must[int](t)(lib.Send(ctx, p, []string{"lagged"}, msgs))

	cons := mustCall(t, lib, "kafka-create", "consumer", map[string]any{
		"servers": servers, "group": "g-lag", "topics": "lagged", "auto-offset-reset": "earliest",
		"enable-auto-commit": false, "max-poll-records": 3,
	}).(string)

	// describe checks the lag's consistency and returns the group.
	describe := func() *GroupInfo {
		t.Helper()
		g := must[*GroupInfo](t)(lib.DescribeGroup(ctx, a, "g-lag"))
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

	polled := 0
	for _, m := range pollUntil(t, lib, cons, nil, 1) {
		polled += m.Len()
	}
	if polled > 3 {
		t.Fatalf("polled %d with max-poll-records 3", polled)
	}
	// Polled but not committed: all of it is still lag.
	if g := describe(); g.TotalLag != 10 {
		t.Errorf("before the commit: total lag %d, want 10", g.TotalLag)
	}
	mustCall(t, lib, "kafka-commit", cons)
	g := describe()
	if g.TotalLag != int64(10-polled) || g.TotalLag == 0 {
		t.Errorf("after polling %d and committing: total lag %d, want %d", polled, g.TotalLag, 10-polled)
	}
	if g.State != "Stable" || len(g.Members) != 1 {
		t.Fatalf("group %s", Format(g.List()))
	}
	m := g.Members[0]
	if m.ClientID != "kafkabpl" || m.MemberID == "" || m.Host == "" || !cmp.Equal(m.Assignment, []TopicPartitions{{"lagged", []int32{0, 1}}}) {
		t.Errorf("member %+v", m)
	}

	// Catch up and commit: the lag goes to 0.
	for polled < 10 {
		for _, msgs := range pollUntil(t, lib, cons, nil, 1) {
			polled += msgs.Len()
		}
	}
	mustCall(t, lib, "kafka-commit", cons)
	res := mustCall(t, lib, "kafka-describe-group", a, "g-lag").(*List)
	member := fmt.Sprintf(`("member-id" => %q "client-id" => "kafkabpl" "host" => %q "assignment" => ("lagged" => (0 1)))`, m.MemberID, m.Host)
	wantFormat(t, "describe-group caught up", res,
		`("group" => "g-lag" "state" => "Stable" "members" => (`+member+`) "lag" => ("lagged" => (`+
			`("partition" => 0 "committed" => 6 "end" => 6 "lag" => 0) ("partition" => 1 "committed" => 4 "end" => 4 "lag" => 0))) "total-lag" => 0)`)
	wantFormat(t, "list-groups", mustCall(t, lib, "kafka-list-groups", servers), `("g-lag" => "Stable")`)

	// More messages: lag again, until the consumer reads and commits them.
	must[int](t)(lib.Send(ctx, p, []string{"lagged"}, []Message{{Value: "x", Partition: new(int32(1))}}))
	if g := describe(); g.TotalLag != 1 || g.Lag[0].Partitions[1].Lag != 1 {
		t.Errorf("after one more message: %s", Format(g.List()))
	}
	pollUntil(t, lib, cons, nil, 1)
	mustCall(t, lib, "kafka-commit", cons)
	if g := describe(); g.TotalLag != 0 {
		t.Errorf("after reading it: %s", Format(g.List()))
	}

	// Once the consumer leaves, the group is Empty and keeps its commits.
	mustCall(t, lib, "kafka-destroy", cons)
	wantFormat(t, "describe-group empty", mustCall(t, lib, "kafka-describe-group", a, "g-lag"),
		`("group" => "g-lag" "state" => "Empty" "members" => () "lag" => ("lagged" => (`+
			`("partition" => 0 "committed" => 6 "end" => 6 "lag" => 0) ("partition" => 1 "committed" => 5 "end" => 5 "lag" => 0))) "total-lag" => 0)`)
	wantFormat(t, "list-groups empty", mustCall(t, lib, "kafka-list-groups", a), `("g-lag" => "Empty")`)
}

// TestAdminUncommittedLag checks the shape of a partition the group has
// committed nothing to: committed is null and the whole partition is lag.
func TestAdminUncommittedLag(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	mustCall(t, lib, "kafka-create-topics", servers, "u", nv{"partitions", 2})
	p := must[string](t)(lib.Create(ctx, Producer, servers))
	must[int](t)(lib.Send(ctx, p, []string{"u"}, []Message{{Value: "a", Partition: new(int32(0))}}))
	cons := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "group": "g-u", "topics": "u", "auto-offset-reset": "earliest", "auto-commit": false})
	if s := Format(pollUntil(t, lib, cons.(string), nil, 1)["u"]); s != `("a")` {
		t.Fatalf("polled %s", s)
	}
	mustCall(t, lib, "kafka-commit", cons)
	// Sent after the commit and never polled: partition 1 has nothing
	// committed.
	must[int](t)(lib.Send(ctx, p, []string{"u"}, []Message{{Value: "b", Partition: new(int32(1))}, {Value: "c", Partition: new(int32(1))}}))
	g := must[*GroupInfo](t)(lib.DescribeGroup(ctx, servers, "g-u"))
	lag, _ := g.List().Get("lag")
	wantFormat(t, "uncommitted partition", lag, `("u" => (("partition" => 0 "committed" => 1 "end" => 1 "lag" => 0) ("partition" => 1 "committed" => null "end" => 2 "lag" => 2)))`)
	if g.TotalLag != 2 {
		t.Errorf("total lag %d, want 2", g.TotalLag)
	}
}

// TestAdminRecreatedTopic deletes a topic a producer and a subscribed
// consumer of the Library know, creates it again, and checks both keep
// working with the new topic.
func TestAdminRecreatedTopic(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	a := mustCall(t, lib, "kafka-create", "admin", servers)
	mustCall(t, lib, "kafka-create-topics", a, "re", nv{"partitions", 3})
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "group": "g-re", "topics": "re", "auto-offset-reset": "earliest"})
	must[int](t)(lib.Send(testCtx(t), p.(string), []string{"re"}, []Message{{Value: "early0", Partition: new(int32(0))}, {Value: "early1", Partition: new(int32(1))}}))
	// Another consumer, with the default "latest" and its own group,
	// subscribed by a poll once partitions 0 and 1 hold a message: it
	// starts after them. The topic created again must not start there.
	c2 := mustCall(t, lib, "kafka-create", "consumer", servers)
	mustCall(t, lib, "kafka-poll", c2, "re", 0)

	mustCall(t, lib, "kafka-send", p, "re", bplList(t, nv{"k1", "old1"}, nv{"k2", "old2"}))
	if n := len(pollUntil(t, lib, c.(string), nil, 4)["re"].Values()); n != 4 {
		t.Fatalf("consumer 1 read %d messages before the delete, want 4", n)
	}
	if s := Format(pollUntil(t, lib, c2.(string), nil, 2)["re"]); s != `("k1" => "old1" "k2" => "old2")` && s != `("k2" => "old2" "k1" => "old1")` {
		t.Fatalf("consumer 2 before the delete: %s", s)
	}
	mustCall(t, lib, "kafka-commit", c)

	// Deleted through a config target: the Library's clients are told
	// all the same.
	wantFormat(t, "delete", mustCall(t, lib, "kafka-delete-topics", servers, "re"), `("re" => true)`)
	wantFormat(t, "re-create", mustCall(t, lib, "kafka-create-topics", a, "re", nv{"partitions", 2}), `("re" => true)`)

	if n := mustCall(t, lib, "kafka-send", p, "re", bplList(t, nv{"k1", "new1"}, nv{"k2", "new2"}, "new3"), nv{"partition", 0}); n != int64(3) {
		t.Fatalf("send to the new topic = %v", n)
	}
	for _, id := range []any{c, c2} {
		got := pollUntil(t, lib, id.(string), nil, 3)["re"]
		values := map[string]bool{}
		for _, v := range got.Values() {
			values[v.(string)] = true
		}
		if !cmp.Equal(values, map[string]bool{"new1": true, "new2": true, "new3": true}) {
			t.Errorf("consumer %s after re-creation: %s, want the three new messages", id, Format(got))
		}
	}
	// The consumer can commit on the new topic, and its group's lag
	// is that of the new topic.
	mustCall(t, lib, "kafka-commit", c)
	g := must[*GroupInfo](t)(lib.DescribeGroup(testCtx(t), a, "g-re"))
	if g.TotalLag != 0 || len(g.Lag) != 1 || len(g.Lag[0].Partitions) != 2 {
		t.Errorf("group after re-creation: %s", Format(g.List()))
	}
	wantFormat(t, "subscription", mustCall(t, lib, "kafka-subscribe", c, "re"), `("re")`)
}

// TestAdminUnreachable checks that admin calls to a server nobody listens
// on fail with a Timeout error naming it, within the request-timeout.
func TestAdminUnreachable(t *testing.T) {
	t.Parallel()
	lib := newLib(t)
	cfg := map[string]any{"servers": "127.0.0.1:1", "request-timeout": 300} // loopback: nothing listens on port 1
	a := mustCall(t, lib, "kafka-create", "admin", cfg)
	calls := []struct {
		fn   string
		args []any
	}{
		{"kafka-list-topics", []any{a}},
		{"kafka-list-topics", []any{cfg}},
		{"kafka-create-topics", []any{a, "t"}},
		{"kafka-delete-topics", []any{cfg, "t"}},
		{"kafka-describe-topics", []any{a}},
		{"kafka-describe-cluster", []any{cfg}},
		{"kafka-create-partitions", []any{a, "t", 2}},
		{"kafka-list-groups", []any{a}},
		{"kafka-describe-group", []any{cfg, "g"}},
	}
	for _, cl := range calls {
		start := time.Now()
		_, err := call(t, lib, cl.fn, cl.args...)
		elapsed := time.Since(start)
		if !errors.Is(err, ErrTimeout) || !strings.HasPrefix(err.Error(), cl.fn+": ") || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("%s: %v (%s), want a Timeout naming 127.0.0.1:1", cl.fn, err, ErrorType(err))
		}
		if elapsed > 3*time.Second {
			t.Errorf("%s took %v with a 300 ms request-timeout", cl.fn, elapsed)
		}
	}
}

// TestAdminSilentBroker checks a server that accepts connections and never
// answers: the call ends at the request-timeout with a Timeout error.
func TestAdminSilentBroker(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	lib := newLib(t)
	cfg := map[string]any{"servers": ln.Addr().String(), "request-timeout": 300}
	for _, target := range []any{cfg, mustCall(t, lib, "kafka-create", "admin", cfg)} {
		start := time.Now()
		_, err := call(t, lib, "kafka-describe-cluster", target)
		elapsed := time.Since(start)
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "no answer from "+ln.Addr().String()+" within 300ms") {
			t.Errorf("silent broker: %v (%s)", err, ErrorType(err))
		}
		if elapsed < 250*time.Millisecond || elapsed > 3*time.Second {
			t.Errorf("took %v with a 300 ms request-timeout", elapsed)
		}
	}
}

// TestAdminClosedLibrary checks admin calls after Close.
func TestAdminClosedLibrary(t *testing.T) {
	t.Parallel()
	servers := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
	lib := New()
	ctx := context.Background()
	a := must[string](t)(lib.Create(ctx, Admin, servers))
	if err := lib.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, target := range []any{a, servers} {
		if _, err := lib.ListTopics(ctx, target); !errors.Is(err, ErrClosed) {
			t.Errorf("ListTopics(%v) after Close: %v, want ErrClosed", target, err)
		}
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

// staleMetadata makes c answer the next n metadata requests that name only
// topic, without asking to create it, as a broker that has not yet applied
// the controller's last change would: with stale(), the topic as it was.
// It returns how many it answered so.
func staleMetadata(t *testing.T, c *kfake.Cluster, topic string, n int32, stale func() kmsg.MetadataResponseTopic) *atomic.Int32 {
	t.Helper()
	var brokers []kmsg.MetadataResponseBroker
	for i, addr := range c.ListenAddrs() {
		host, port, _ := strings.Cut(addr, ":")
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i), host, int32(must[int](t)(strconv.Atoi(port)))
		brokers = append(brokers, b)
	}
	var answered atomic.Int32
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.MetadataRequest)
		if req.AllowAutoTopicCreation || len(req.Topics) != 1 || req.Topics[0].Topic == nil || *req.Topics[0].Topic != topic {
			return nil, nil, false
		}
		if answered.Add(1) >= n {
			c.DropControl()
		}
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = brokers
		resp.ControllerID = 0
		rt := stale()
		rt.Topic = kmsg.StringPtr(topic)
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	return &answered
}

// staleTopic is a topic with partitions 0 to n-1, each led by broker 0;
// with n 0, a topic the broker does not know.
func staleTopic(n int) func() kmsg.MetadataResponseTopic {
	return func() kmsg.MetadataResponseTopic {
		rt := kmsg.NewMetadataResponseTopic()
		if n == 0 {
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
		for i := range n {
			p := kmsg.NewMetadataResponseTopicPartition()
			p.Partition, p.Leader, p.Replicas, p.ISR = int32(i), 0, []int32{0}, []int32{0}
			rt.Partitions = append(rt.Partitions, p)
		}
		return rt
	}
}

// TestAdminWaitsForMetadata checks that create-topics, create-partitions
// and delete-topics return only once the brokers' metadata shows what they
// did. A Kafka broker applies the controller's change a moment after the
// call that made it returns; without the wait, a script's next
// describe-topics or list-topics saw the topic missing, the old partition
// count, or the deleted topic still there.
func TestAdminWaitsForMetadata(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	a := mustCall(t, lib, "kafka-create", "admin", servers)
	const lag = 3 // stale answers before the change shows

	created := staleMetadata(t, c, "w", lag, staleTopic(0))
	wantFormat(t, "create", mustCall(t, lib, "kafka-create-topics", a, "w", nv{"partitions", 2}), `("w" => true)`)
	if n := created.Load(); n != lag {
		t.Errorf("create-topics returned after %d stale metadata answers, want %d", n, lag)
	}

	grown := staleMetadata(t, c, "w", lag, staleTopic(2))
	if mustCall(t, lib, "kafka-create-partitions", a, "w", 4) != true {
		t.Error("create-partitions 4 did not answer true")
	}
	// create-partitions asks once before growing; that answer is stale too.
	if n := grown.Load(); n != lag {
		t.Errorf("create-partitions returned after %d stale metadata answers, want %d", n, lag)
	}

	deleted := staleMetadata(t, c, "w", lag, staleTopic(4))
	wantFormat(t, "delete", mustCall(t, lib, "kafka-delete-topics", a, "w"), `("w" => true)`)
	if n := deleted.Load(); n != lag {
		t.Errorf("delete-topics returned after %d stale metadata answers, want %d", n, lag)
	}
	wantFormat(t, "topics after the delete", mustCall(t, lib, "kafka-list-topics", a), `()`)
}

// TestAdminDescribeGroupWaitsForCoordinator checks that describe-group
// asks again while the brokers answer COORDINATOR_NOT_AVAILABLE, as Kafka
// does on a cluster no group has used yet while it creates the offsets
// topic, instead of failing at once.
func TestAdminDescribeGroupWaitsForCoordinator(t *testing.T) {
	t.Parallel()
	cluster := newCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	const refusals = 3
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.FindCoordinator), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if refused.Add(1) >= refusals {
			c.DropControl()
		}
		req := kreq.(*kmsg.FindCoordinatorRequest)
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		resp.NodeID = -1
		for _, key := range req.CoordinatorKeys {
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			rc.Key, rc.NodeID, rc.ErrorCode = key, -1, kerr.CoordinatorNotAvailable.Code
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		return resp, nil, true
	})
	_, err := lib.DescribeGroup(testCtx(t), servers, "nobody")
	if !errors.Is(err, kerr.GroupIDNotFound) {
		t.Errorf("describe-group of a group that does not exist: %v, want GROUP_ID_NOT_FOUND once the coordinator is ready", err)
	}
	if n := refused.Load(); n != refusals {
		t.Errorf("the brokers refused %d times, want %d", n, refusals)
	}
}

// TestGroupMemberHost checks that a member's host reads the same whichever
// broker reported it: Kafka prints it as Java prints an address, kfake
// with the client's port.
func TestGroupMemberHost(t *testing.T) {
	for _, host := range []string{"/127.0.0.1", "127.0.0.1", "127.0.0.1:54321"} {
		info := groupInfo(kadm.DescribedGroupLag{Members: []kadm.DescribedGroupMember{{MemberID: "m", ClientHost: host}}})
		if got := info.Members[0].Host; got != "127.0.0.1" {
			t.Errorf("member host %q reads %q, want 127.0.0.1", host, got)
		}
	}
}
