package kafkabpl

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestACLs grants a SASL user the right to see a topic, checks that it
// does, lists the ACL, and deletes it again, on an embedded cluster that
// enforces ACLs.
func TestACLs(t *testing.T) {
	t.Parallel()
	const mech = "SCRAM-SHA-256"
	servers := newCluster(t, embedded.Topics("t", "u"), embedded.NoAutoCreate(), embedded.KfakeOptions(
		kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser(mech, "admin", "admin-pass"), kfake.User(mech, "reader", "reader-pass"))).Servers()
	lib := newLib(t)
	ctx := testCtx(t)
	admin := map[string]any{"servers": servers, "sasl": map[string]any{"mechanism": mech, "username": "admin", "password": "admin-pass"}}
	reader := map[string]any{"servers": servers, "sasl": map[string]any{"mechanism": mech, "username": "reader", "password": "reader-pass"}}
	visible := func() []string { return must[[]string](t)(lib.ListTopics(ctx, reader)) }
	if got := visible(); len(got) != 0 {
		t.Fatalf("the reader sees %v before any ACL", got)
	}
	grant := ACL{Principal: "User:reader", Resource: "topic", Name: "t", Operation: "describe"}
	errs := must[[]error](t)(lib.CreateACLs(ctx, admin, []ACL{grant, {Principal: "User:reader", Resource: "group", Name: "g-", Pattern: "prefixed", Operation: "READ"}}))
	if len(errs) != 2 || errs[0] != nil || errs[1] != nil {
		t.Fatalf("create: %v", errs)
	}
	if got := visible(); !slices.Equal(got, []string{"t"}) {
		t.Errorf("the reader sees %v with describe on t", got)
	}
	listed := must[[]ACL](t)(lib.DescribeACLs(ctx, admin, ACL{Principal: "User:reader"}))
	want := []ACL{
		{Principal: "User:reader", Host: "*", Resource: "group", Name: "g-", Pattern: "prefixed", Operation: "read", Permission: "allow"},
		{Principal: "User:reader", Host: "*", Resource: "topic", Name: "t", Pattern: "literal", Operation: "describe", Permission: "allow"},
	}
	if !slices.Equal(listed, want) {
		t.Errorf("described %v, want %v", listed, want)
	}
	if got := must[[]ACL](t)(lib.DescribeACLs(ctx, admin, ACL{Resource: "topic"})); !slices.Equal(got, want[1:]) {
		t.Errorf("described topics' %v", got)
	}
	if errs := must[[]error](t)(lib.CreateACLs(ctx, reader, []ACL{grant})); errs[0] == nil || !strings.Contains(errs[0].Error(), "AUTHORIZATION") {
		t.Errorf("a create by a user with no right to: %v", errs)
	}
	deleted := must[[]ACL](t)(lib.DeleteACLs(ctx, admin, ACL{Resource: "topic", Name: "t"}))
	if !slices.Equal(deleted, want[1:]) {
		t.Errorf("deleted %v", deleted)
	}
	if got := visible(); len(got) != 0 {
		t.Errorf("the reader sees %v after the delete", got)
	}
	for _, bad := range []ACL{
		{Principal: "User:x", Resource: "topic", Name: "t", Operation: "peek"},
		{Principal: "reader", Resource: "topic", Name: "t", Operation: "read"},
		{Principal: "User:x", Resource: "user", Name: "t", Operation: "read"},
		{Principal: "User:x", Resource: "topic", Name: "t", Pattern: "match", Operation: "read"},
		{Principal: "User:x", Resource: "topic", Operation: "read"},
	} {
		if _, err := lib.CreateACLs(ctx, admin, []ACL{bad}); !errors.Is(err, ErrInvalidArgument) || !strings.HasPrefix(err.Error(), "kafka-create-acls: acls[0]: acl") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if _, err := lib.DescribeACLs(ctx, admin, ACL{Operation: "peek"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a filter with a bad operation: %v", err)
	}
}
