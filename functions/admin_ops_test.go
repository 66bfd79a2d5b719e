package functions

import (
	"errors"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/internal/testkit"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestBPLOffsets runs the offset functions through the BPL table: their
// argument forms and their results' shapes. The Go methods' own tests
// (admin_offsets_test.go in the root) check what they do to the cluster.
func TestBPLOffsets(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Topics("t"), embedded.Partitions(2), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	a := mustCall(t, lib, "kafka-create", "admin", servers)
	p := mustCall(t, lib, "kafka-create", "producer", servers)
	for part, n := range []int{3, 1} {
		for range n {
			mustCall(t, lib, "kafka-send", p, "t", "v", nv{"partition", part}, nv{"timestamp", 1000})
		}
	}
	testkit.WantFormat(t, "latest, the default",
		mustCall(t, lib, "kafka-list-offsets", a, "t"),
		`(("partition" => 0 "offset" => 3) ("partition" => 1 "offset" => 1))`)
	testkit.WantFormat(t, "a time",
		mustCall(t, lib, "kafka-list-offsets", servers, "t", map[string]any{"timestamp": 1000}),
		`(("partition" => 0 "offset" => 0 "timestamp" => 1000) ("partition" => 1 "offset" => 0 "timestamp" => 1000))`)
	testkit.WantFormat(t, "delete",
		mustCall(t, lib, "kafka-delete-records", a, "t", map[string]any{"0": 2, "1": 5}),
		`(("partition" => 0 "offset" => 2) ("partition" => 1 "offset" => null "error" => "partition 1: OFFSET_OUT_OF_RANGE: The requested offset is not within the range of offsets maintained by the server."))`)
	testkit.WantFormat(t, "earliest after the delete",
		mustCall(t, lib, "kafka-list-offsets", a, "t", "beginning"),
		`(("partition" => 0 "offset" => 2) ("partition" => 1 "offset" => 0))`)
	testkit.WantFormat(t, "reset to an offset",
		mustCall(t, lib, "kafka-reset-offsets", a, "g", "t", 1),
		`(("partition" => 0 "offset" => 2) ("partition" => 1 "offset" => 1))`)
	testkit.WantFormat(t, "copy another group's",
		mustCall(t, lib, "kafka-reset-offsets", a, "h", "t", map[string]any{"group": "g"}),
		`(("partition" => 0 "offset" => 2) ("partition" => 1 "offset" => 1))`)
	if got := mustCall(t, lib, "kafka-delete-group", a, "h"); got != true {
		t.Errorf("delete-group: %v", got)
	}
	if _, err := call(t, lib, "kafka-delete-group", a, "h"); !errors.Is(err, kerr.GroupIDNotFound) || !strings.HasPrefix(err.Error(), "kafka-delete-group: ") {
		t.Errorf("delete-group again: %v", err)
	}

	for _, tt := range []struct {
		fn   string
		args []any
		want string
	}{
		{"kafka-list-offsets", []any{a, "t", 5}, `offset: want "earliest", "latest" or ("timestamp" => ms), got 5`},
		{"kafka-list-offsets", []any{a, "t", "first"}, `offset: want "earliest", "latest" or ("timestamp" => ms), got the string "first"`},
		{"kafka-list-offsets", []any{a, "t", map[string]any{"group": "g"}}, `offset: want "earliest", "latest" or ("timestamp" => ms), got`},
		{"kafka-list-offsets", []any{a}, "usage: (kafka-list-offsets target topic"},
		{"kafka-delete-records", []any{a, "t", []any{1, 2}}, `offsets: want partition numbers as names ("0" => 100)`},
		{"kafka-delete-records", []any{a, "t", []any{}}, `offsets: want ("partition" => offset ...)`},
		{"kafka-delete-records", []any{a, "t", map[string]any{"0": -2}}, `offsets "0": want an integer from -1 to`},
		{"kafka-reset-offsets", []any{a, "g", "t", -1}, "offset: want an integer from 0 to"},
		{"kafka-reset-offsets", []any{a, "g", "t", map[string]any{"group": ""}}, `("group" => name), got`},
		{"kafka-delete-group", []any{a, 5}, "group: want a string, got 5"},
	} {
		_, err := call(t, lib, tt.fn, tt.args...)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), tt.fn+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: %v, want InvalidArgument containing %q", tt.fn, tt.args, err, tt.want)
		}
	}
}

// TestBPLConfigs runs kafka-describe-configs and kafka-alter-configs:
// numbers are written as Kafka's text, null removes a config.
func TestBPLConfigs(t *testing.T) {
	t.Parallel()
	servers := testkit.NewCluster(t, embedded.Topics("t"), embedded.NoAutoCreate()).Servers()
	lib := newLib(t)
	a := mustCall(t, lib, "kafka-create", "admin", servers)
	if got := mustCall(t, lib, "kafka-alter-configs", a, "topic", "t", map[string]any{"retention.ms": 60000, "cleanup.policy": "compact"}); got != true {
		t.Errorf("alter: %v", got)
	}
	described := mustCall(t, lib, "kafka-describe-configs", a, "topic", "t").(*value.List)
	if v, _ := described.Get("retention.ms"); v != "60000" {
		t.Errorf("retention.ms: %v", v)
	}
	mustCall(t, lib, "kafka-alter-configs", a, "topic", "t", map[string]any{"cleanup.policy": nil})
	described = mustCall(t, lib, "kafka-describe-configs", servers, "topic", "t").(*value.List)
	if v, _ := described.Get("cleanup.policy"); v != "delete" {
		t.Errorf("cleanup.policy after its removal: %v", v)
	}
	if l := mustCall(t, lib, "kafka-describe-configs", a, "broker", 0).(*value.List); l.Len() == 0 {
		t.Errorf("broker 0: no configs")
	}
	mustCall(t, lib, "kafka-describe-configs", a, "broker", "")
	// A group's: a share group's start, say.
	mustCall(t, lib, "kafka-alter-configs", a, "group", "workers", map[string]any{"share.auto.offset.reset": "earliest"})
	described = mustCall(t, lib, "kafka-describe-configs", a, "group", "workers").(*value.List)
	if v, _ := described.Get("share.auto.offset.reset"); v != "earliest" {
		t.Errorf("share.auto.offset.reset: %v", v)
	}
	for _, tt := range []struct {
		fn   string
		args []any
		want string
	}{
		{"kafka-describe-configs", []any{a, "cluster", "g"}, `type: want "topic", "group" or "broker", got the string "cluster"`},
		{"kafka-describe-configs", []any{a, "group", ""}, `group: want a group name, got ""`},
		{"kafka-describe-configs", []any{a, "broker", -1}, `broker: want a broker id, or "" for the brokers' default, got -1`},
		{"kafka-describe-configs", []any{a, "topic", ""}, `topic: want a topic name`},
		{"kafka-alter-configs", []any{a, "topic", "t", []any{"x"}}, `configs: want ("key" => value ...), null to remove`},
		{"kafka-alter-configs", []any{a, "topic", "t", map[string]any{"x": []any{1}}}, `configs "x": want a string, number, boolean or null`},
	} {
		_, err := call(t, lib, tt.fn, tt.args...)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), tt.fn+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: %v, want InvalidArgument containing %q", tt.fn, tt.args, err, tt.want)
		}
	}
}

// TestBPLACLs runs the ACL functions on a cluster that enforces ACLs.
func TestBPLACLs(t *testing.T) {
	t.Parallel()
	const mech = "PLAIN"
	servers := testkit.NewCluster(t, embedded.Topics("t"), embedded.NoAutoCreate(), embedded.KfakeOptions(
		kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser(mech, "admin", "admin-pass"))).Servers()
	lib := newLib(t)
	admin := map[string]any{"servers": servers, "sasl": map[string]any{"mechanism": mech, "username": "admin", "password": "admin-pass"}}
	acl := map[string]any{"principal": "User:alice", "resource": "topic", "name": "t", "operation": "read"}
	testkit.WantFormat(t, "create one", mustCall(t, lib, "kafka-create-acls", admin, acl), `(true)`)
	testkit.WantFormat(t, "create two",
		mustCall(t, lib, "kafka-create-acls", admin, []any{acl, map[string]any{"principal": "User:bob", "resource": "cluster", "operation": "describe", "permission": "deny"}}),
		`(true true)`)
	alice := `("principal" => "User:alice" "host" => "*" "resource" => "topic" "name" => "t" "pattern" => "literal" "operation" => "read" "permission" => "allow")`
	bob := `("principal" => "User:bob" "host" => "*" "resource" => "cluster" "name" => "kafka-cluster" "pattern" => "literal" "operation" => "describe" "permission" => "deny")`
	testkit.WantFormat(t, "describe all", mustCall(t, lib, "kafka-describe-acls", admin), "("+bob+" "+alice+")")
	testkit.WantFormat(t, "describe alice's", mustCall(t, lib, "kafka-describe-acls", admin, map[string]any{"principal": "User:alice"}), "("+alice+")")
	testkit.WantFormat(t, "delete bob's", mustCall(t, lib, "kafka-delete-acls", admin, map[string]any{"principal": "User:bob"}), "("+bob+")")
	testkit.WantFormat(t, "describe after", mustCall(t, lib, "kafka-describe-acls", admin), "("+alice+")")
	for _, tt := range []struct {
		fn   string
		args []any
		want string
	}{
		{"kafka-create-acls", []any{admin, "alice"}, `acl: want ("principal" => "User:name"`},
		{"kafka-create-acls", []any{admin, map[string]any{"user": "alice"}}, `acl: unknown element "user"`},
		{"kafka-create-acls", []any{admin, []any{acl, map[string]any{"principal": 5}}}, `acls[1] "principal": want a string, got 5`},
		{"kafka-create-acls", []any{admin, map[string]any{"principal": "User:x", "resource": "topic", "name": "t", "operation": "peek"}}, `acl operation: unknown "peek"`},
		{"kafka-delete-acls", []any{admin, map[string]any{}}, `() would delete every ACL`},
	} {
		_, err := call(t, lib, tt.fn, tt.args...)
		if !errors.Is(err, kafkabpl.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), tt.fn+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: %v, want InvalidArgument containing %q", tt.fn, tt.args, err, tt.want)
		}
	}
}
