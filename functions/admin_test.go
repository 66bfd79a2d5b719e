package functions

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The admin functions' tests run on three brokers that create no topic on
// first use: what exists is what the admin functions made. The admin
// methods under them are tested in package kafkabpl.

// TestAdminTopics runs the topic functions through the BPL table on an
// admin handle and on configs, checking each result's exact shape.
func TestAdminTopics(t *testing.T) {
	t.Parallel()
	cluster := testkit.NewCluster(t, embedded.Brokers(3), embedded.NoAutoCreate())
	c, servers := cluster.Kfake(), cluster.Servers()
	lib := newLib(t)
	a := mustCall(t, lib, "kafka-create", "admin", servers)

	testkit.WantFormat(t, "create t1 t2",
		mustCall(t, lib, "kafka-create-topics", a, []any{"t1", "t2"}, nv{"partitions", 3}, nv{"replication-factor", 3}),
		`("t1" => true "t2" => true)`)
	// A config is a target too: a server string, or a named list.
	testkit.WantFormat(t, "create t2 t3 on a server string",
		mustCall(t, lib, "kafka-create-topics", servers, []any{"t2", "t3", "t2"}),
		`("t2" => false "t3" => true)`)
	testkit.WantFormat(t, "create one topic by name",
		mustCall(t, lib, "kafka-create-topics", map[string]any{"servers": servers, "client-id": "ops"}, "t4", nv{"configs", map[string]any{"retention.ms": 60000, "cleanup.policy": "delete"}}),
		`("t4" => true)`)
	// An internal topic is left out of the listings.
	mustCall(t, lib, "kafka-create-topics", a, "_internal", nv{"configs", map[string]any{"kfake.is_internal": true}})
	testkit.WantFormat(t, "list", mustCall(t, lib, "kafka-list-topics", a), `("t1" "t2" "t3" "t4")`)
	testkit.WantFormat(t, "list on a config list", mustCall(t, lib, "kafka-list-topics", []any{servers}), `("t1" "t2" "t3" "t4")`)

	testkit.WantFormat(t, "delete", mustCall(t, lib, "kafka-delete-topics", a, []any{"t3", "missing", "t4"}), `("t3" => true "missing" => false "t4" => true)`)
	testkit.WantFormat(t, "delete none", mustCall(t, lib, "kafka-delete-topics", a, []any{}), `()`)
	testkit.WantFormat(t, "list after delete", mustCall(t, lib, "kafka-list-topics", servers), `("t1" "t2")`)

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
	testkit.WantFormat(t, "describe t1", mustCall(t, lib, "kafka-describe-topics", a, "t1"), "("+t1+")")
	testkit.WantFormat(t, "describe t2 t1, in that order", mustCall(t, lib, "kafka-describe-topics", a, []any{"t2", "t1"}), "("+t2+" "+t1+")")
	testkit.WantFormat(t, "describe all, sorted, no internal topic", mustCall(t, lib, "kafka-describe-topics", servers), "("+t1+" "+t2+")")
	testkit.WantFormat(t, "describe no topics", mustCall(t, lib, "kafka-describe-topics", a, []any{}), "()")
	testkit.WantFormat(t, "describe the internal topic by name", names(mustCall(t, lib, "kafka-describe-topics", a, "_internal").(*value.List)), `("_internal")`)

	// describe-cluster: kfake's id, its last broker as controller, and
	// the brokers in id order with the addresses they listen on.
	var brokers []string
	for i, addr := range cluster.Addrs() {
		host, port, _ := strings.Cut(addr, ":")
		brokers = append(brokers, fmt.Sprintf(`("id" => %d "host" => %q "port" => %s)`, i, host, port))
	}
	testkit.WantFormat(t, "describe-cluster", mustCall(t, lib, "kafka-describe-cluster", a),
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
	if !errors.Is(err, kerr.UnknownTopicOrPartition) || kafkabpl.ErrorType(err) != "KafkaError" || !strings.Contains(err.Error(), `topic "nope"`) {
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

// TestAdminBadInputs checks targets and arguments that are wrong.
func TestAdminBadInputs(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Brokers(3), embedded.NoAutoCreate()).Servers()
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
		{"kafka-list-topics", []any{"a" + strings.Repeat("0", 32)}, kafkabpl.ErrUnknownHandle, `kafka-list-topics: unknown admin id "a000`},
		{"kafka-list-topics", []any{gone}, kafkabpl.ErrUnknownHandle, "unknown admin id"},
		{"kafka-list-topics", []any{"p" + strings.Repeat("1", 32)}, kafkabpl.ErrUnknownHandle, `unknown producer id "p111`},
		{"kafka-list-topics", []any{p}, kafkabpl.ErrWrongKind, "is a producer id, not an admin id"},
		{"kafka-describe-cluster", []any{c}, kafkabpl.ErrWrongKind, "is a consumer id, not an admin id"},
		{"kafka-list-topics", []any{42}, kafkabpl.ErrInvalidConfig, "got 42"},
		{"kafka-list-topics", []any{map[string]any{"servers": servers, "grup": "g"}}, kafkabpl.ErrInvalidConfig, `unknown config key "grup"`},
		{"kafka-list-topics", []any{}, kafkabpl.ErrInvalidArgument, "kafka-list-topics: want 1 arguments, got 0; usage: (kafka-list-topics target)"},
		{"kafka-create-topics", []any{a}, kafkabpl.ErrInvalidArgument, "want 2 arguments, got 1"},
		{"kafka-create-topics", []any{a, 7}, kafkabpl.ErrInvalidArgument, "topics: want a topic name or a list of them, got 7"},
		{"kafka-create-topics", []any{a, "t", nv{"partitions", 0}}, kafkabpl.ErrInvalidArgument, `"partitions": want an integer from 1 to 2147483647, got 0`},
		{"kafka-create-topics", []any{a, "t", nv{"partitions", "3"}}, kafkabpl.ErrInvalidArgument, `"partitions": want an integer`},
		{"kafka-create-topics", []any{a, "t", nv{"replication-factor", 40000}}, kafkabpl.ErrInvalidArgument, `"replication-factor": want an integer from 1 to 32767`},
		{"kafka-create-topics", []any{a, "t", nv{"partitons", 3}}, kafkabpl.ErrInvalidArgument, `unknown named argument "partitons" (did you mean "partitions"?)`},
		{"kafka-create-topics", []any{a, "t", nv{"configs", []any{"x"}}}, kafkabpl.ErrInvalidArgument, `"configs": want a named list`},
		{"kafka-create-topics", []any{a, "t", nv{"configs", map[string]any{"k": []any{1}}}}, kafkabpl.ErrInvalidArgument, `"configs" "k": want a string or a number, got the list (1)`},
		{"kafka-delete-topics", []any{a, map[string]any{"t": 1}}, kafkabpl.ErrInvalidArgument, "topics: want topic names"},
		{"kafka-describe-topics", []any{a, "t", "u"}, kafkabpl.ErrInvalidArgument, "want 1 to 2 arguments, got 3"},
		{"kafka-describe-topics", []any{a, "nope"}, kerr.UnknownTopicOrPartition, `kafka-describe-topics: topic "nope": UNKNOWN_TOPIC_OR_PARTITION`},
		{"kafka-create-partitions", []any{a, "t", 0}, kafkabpl.ErrInvalidArgument, "count: want an integer from 1"},
		{"kafka-create-partitions", []any{a, "a b", 2}, kafkabpl.ErrInvalidArgument, `topic: invalid topic name "a b"`},
		{"kafka-create-partitions", []any{a, 5, 2}, kafkabpl.ErrInvalidArgument, "topic: want a string, got 5"},
		{"kafka-describe-group", []any{a, 5}, kafkabpl.ErrInvalidArgument, "group: want a string, got 5"},
		{"kafka-describe-group", []any{a, ""}, kafkabpl.ErrInvalidArgument, `group: want a group name`},
		{"kafka-describe-group", []any{a, "no-such-group"}, kerr.GroupIDNotFound, `kafka-describe-group: group "no-such-group": GROUP_ID_NOT_FOUND`},
		{"kafka-list-groups", []any{a, "x"}, kafkabpl.ErrInvalidArgument, "want 1 arguments, got 2"},
	}
	for _, tt := range tests {
		t.Run(tt.fn+" "+value.Format(bplList(t, tt.args...)), func(t *testing.T) {
			v, err := call(t, lib, tt.fn, tt.args...)
			if err == nil {
				t.Fatalf("got %s, want an error", value.Format(v))
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q is a %s, want %v", err, kafkabpl.ErrorType(err), tt.kind)
			}
			if !strings.HasPrefix(err.Error(), tt.fn+": ") || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q: want it to start with %q and contain %q", err, tt.fn+": ", tt.msg)
			}
		})
	}
}

// TestBPLGroups checks what kafka-list-groups and kafka-describe-group
// return for a group with a member and once it is empty.
func TestBPLGroups(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	a := mustCall(t, lib, "kafka-create", "admin", servers)
	mustCall(t, lib, "kafka-create-topics", a, "g-t")
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	mustCall(t, lib, "kafka-send", p, "g-t", []any{"1", "2"})
	c := mustCall(t, lib, "kafka-create", "consumer", map[string]any{"servers": servers, "group": "g", "topics": "g-t", "auto-offset-reset": "earliest", "enable-auto-commit": false}).(string)
	pollUntil(t, lib, c, nil, 2)
	mustCall(t, lib, "kafka-commit", c)

	testkit.WantFormat(t, "list-groups", mustCall(t, lib, "kafka-list-groups", a), `("g" => "Stable")`)
	g := testkit.Must[*kafkabpl.GroupInfo](t)(lib.DescribeGroup(testkit.Ctx(t), a, "g")) // the member's id and host
	lag := `"lag" => ("g-t" => (("partition" => 0 "committed" => 2 "end" => 2 "lag" => 0))) "total-lag" => 0)`
	member := fmt.Sprintf(`("member-id" => %q "client-id" => "kafkabpl" "host" => %q "assignment" => ("g-t" => (0)))`, g.Members[0].MemberID, g.Members[0].Host)
	testkit.WantFormat(t, "describe-group", mustCall(t, lib, "kafka-describe-group", servers, "g"),
		`("group" => "g" "state" => "Stable" "members" => (`+member+`) `+lag)

	mustCall(t, lib, "kafka-destroy", c)
	testkit.WantFormat(t, "list-groups empty", mustCall(t, lib, "kafka-list-groups", servers), `("g" => "Empty")`)
	testkit.WantFormat(t, "describe-group empty", mustCall(t, lib, "kafka-describe-group", a, "g"),
		`("group" => "g" "state" => "Empty" "members" => () `+lag)
}
