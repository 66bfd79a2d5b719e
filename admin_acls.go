package kafkabpl

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The ACL admin functions, as kafka-acls --add, --list and --remove do.
// The brokers enforce ACLs only when an authorizer is configured (on the
// embedded cluster, kfake.EnableACLs); a broker without one refuses these
// calls with kerr.SecurityDisabled.

// ACL is one access control entry: who (Principal, connecting from Host)
// is allowed or denied (Permission) what (Operation) on which resources
// (Resource, Name, Pattern). Names are Kafka's, lower case with dashes
// ("transactional-id", "describe-configs"); any case and underscores are
// accepted.
//
// As a filter (DescribeACLs, DeleteACLs) an empty field matches any
// value, and Pattern "match" matches the literal, prefixed and wildcard
// ACLs that apply to Name.
type ACL struct {
	Principal string // "User:alice"; "User:*" is every user
	Host      string // the client's address; "*" (the default) is any
	// Resource is "topic", "group", "cluster" or "transactional-id".
	Resource string
	// Name is the resource's name, "*" for every one; the cluster's is
	// "kafka-cluster" (the default for the cluster).
	Name string
	// Pattern is "literal" (the default: Name itself, or "*") or
	// "prefixed" (every name that starts with Name).
	Pattern string
	// Operation is "read", "write", "create", "delete", "alter",
	// "describe", "describe-configs", "alter-configs", "cluster-action",
	// "idempotent-write" or "all".
	Operation string
	// Permission is "allow" (the default) or "deny".
	Permission string
}

func (a ACL) String() string {
	return fmt.Sprintf("%s %s %s on %s %q (%s) from %s", a.Permission, a.Principal, a.Operation, a.Resource, a.Name, a.Pattern, a.Host)
}

// aclEntry is an ACL in the protocol's terms.
type aclEntry struct {
	resource   kmsg.ACLResourceType
	name       *string // nil: any (filters)
	pattern    kmsg.ACLResourcePatternType
	principal  *string
	host       *string
	operation  kmsg.ACLOperation
	permission kmsg.ACLPermissionType
}

// protocolACL checks a and puts it in the protocol's terms; a filter's
// empty fields match any value, a creation's take the defaults above.
func protocolACL(a ACL, filter bool) (aclEntry, error) {
	var e aclEntry
	parse := func(field, s, anyValue string, fn func(string) error) error {
		if s == "" && filter {
			s = anyValue
		}
		if err := fn(s); err != nil || strings.EqualFold(s, "unknown") || !filter && strings.EqualFold(s, "any") {
			return Errorf(ErrInvalidArgument, "acl %s: unknown %q", field, s)
		}
		return nil
	}
	var err error
	if err := parse("resource", a.Resource, "any", func(s string) error { e.resource, err = kmsg.ParseACLResourceType(s); return err }); err != nil {
		return e, err
	}
	if !filter && e.resource != kmsg.ACLResourceTypeTopic && e.resource != kmsg.ACLResourceTypeGroup &&
		e.resource != kmsg.ACLResourceTypeCluster && e.resource != kmsg.ACLResourceTypeTransactionalId {
		return e, Errorf(ErrInvalidArgument, `acl resource: want "topic", "group", "cluster" or "transactional-id", got %q`, a.Resource)
	}
	pattern := cmp.Or(a.Pattern, "literal")
	if filter && a.Pattern == "" {
		pattern = "any"
	}
	if err := parse("pattern", pattern, "any", func(s string) error { e.pattern, err = kmsg.ParseACLResourcePatternType(s); return err }); err != nil {
		return e, err
	}
	if !filter && e.pattern != kmsg.ACLResourcePatternTypeLiteral && e.pattern != kmsg.ACLResourcePatternTypePrefixed {
		return e, Errorf(ErrInvalidArgument, `acl pattern: want "literal" or "prefixed", got %q`, a.Pattern)
	}
	if err := parse("operation", a.Operation, "any", func(s string) error { e.operation, err = kmsg.ParseACLOperation(s); return err }); err != nil {
		return e, err
	}
	permission := cmp.Or(a.Permission, "allow")
	if filter && a.Permission == "" {
		permission = "any"
	}
	if err := parse("permission", permission, "any", func(s string) error { e.permission, err = kmsg.ParseACLPermissionType(s); return err }); err != nil {
		return e, err
	}
	name := a.Name
	if name == "" && e.resource == kmsg.ACLResourceTypeCluster {
		name = "kafka-cluster"
	}
	host := cmp.Or(a.Host, "*")
	if filter {
		host = a.Host
	}
	if !filter && (name == "" || !strings.Contains(a.Principal, ":")) {
		return e, Errorf(ErrInvalidArgument, `acl: want a resource name and a principal such as "User:alice", got %q and %q`, a.Name, a.Principal)
	}
	for _, f := range []struct {
		dst **string
		v   string
	}{{&e.name, name}, {&e.principal, a.Principal}, {&e.host, host}} {
		if f.v != "" {
			*f.dst = &f.v
		}
	}
	return e, nil
}

// protocolName is a protocol enum's name as ACL holds it: lower case, with
// dashes.
func protocolName(s fmt.Stringer) string {
	return strings.ReplaceAll(strings.ToLower(s.String()), "_", "-")
}

// CreateACLs creates acls, as kafka-acls --add does. The result has one
// element per ACL, in order: nil when it was created (or existed), or why
// not. An ACL that does not read (an unknown operation, no principal) is
// an error before anything is sent. In BPL, (kafka-create-acls target
// (("principal" => "User:alice" "resource" => "topic" "name" => "t"
// "operation" => "read") ...)) returns (true ...), or the error's text in
// place of true.
func (lib *Library) CreateACLs(ctx context.Context, target any, acls []ACL) ([]error, error) {
	const fn = "kafka-create-acls"
	req := kmsg.NewPtrCreateACLsRequest()
	for i, a := range acls {
		e, err := protocolACL(a, false)
		if err != nil {
			return nil, NewError(fn, fmt.Errorf("acls[%d]: %w", i, err))
		}
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = e.resource, *e.name, e.pattern
		c.Principal, c.Host, c.Operation, c.PermissionType = *e.principal, *e.host, e.operation, e.permission
		req.Creations = append(req.Creations, c)
	}
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) ([]error, error) {
		out := make([]error, len(acls))
		if len(acls) == 0 {
			return out, nil
		}
		resp, err := req.RequestWith(ctx, h.cl)
		if err != nil {
			return nil, h.requestError(ctx, err)
		}
		if len(resp.Results) != len(acls) {
			return nil, unanswered("ACLs", fmt.Sprint(len(acls)))
		}
		for i, r := range resp.Results {
			if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
				out[i] = Wrapf(ErrKafka, err, "%s", msgOr(r.ErrorMessage, acls[i].String()))
			}
		}
		return out, nil
	})
}

// msgOr is the broker's message, or what when it gave none.
func msgOr(msg *string, what string) string {
	if msg != nil && *msg != "" {
		return *msg
	}
	return what
}

// DescribeACLs returns the ACLs that match filter, sorted, as kafka-acls
// --list does; the zero ACL matches every one. In BPL,
// (kafka-describe-acls target ("resource" => "topic")) returns
// (("principal" => "User:alice" "host" => "*" "resource" => "topic" ...) ...).
func (lib *Library) DescribeACLs(ctx context.Context, target any, filter ACL) ([]ACL, error) {
	const fn = "kafka-describe-acls"
	e, err := protocolACL(filter, true)
	if err != nil {
		return nil, NewError(fn, err)
	}
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourceName, req.ResourcePatternType = e.resource, e.name, e.pattern
	req.Principal, req.Host, req.Operation, req.PermissionType = e.principal, e.host, e.operation, e.permission
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) ([]ACL, error) {
		resp, err := req.RequestWith(ctx, h.cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			if isKafkaErr(err) {
				return nil, Wrapf(ErrKafka, err, "%s", msgOr(resp.ErrorMessage, "describe ACLs"))
			}
			return nil, h.requestError(ctx, err)
		}
		var out []ACL
		for _, r := range resp.Resources {
			for _, a := range r.ACLs {
				out = append(out, aclOf(r.ResourceType, r.ResourceName, r.ResourcePatternType, a.Principal, a.Host, a.Operation, a.PermissionType))
			}
		}
		sortACLs(out)
		return out, nil
	})
}

// DeleteACLs deletes the ACLs that match filter, as kafka-acls --remove
// does, and returns them, sorted. Hazard: the zero ACL matches, and so
// deletes, every ACL of the cluster; give at least a resource or a
// principal. In BPL, (kafka-delete-acls target filter) returns the ACLs
// deleted.
func (lib *Library) DeleteACLs(ctx context.Context, target any, filter ACL) ([]ACL, error) {
	const fn = "kafka-delete-acls"
	e, err := protocolACL(filter, true)
	if err != nil {
		return nil, NewError(fn, err)
	}
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = e.resource, e.name, e.pattern
	f.Principal, f.Host, f.Operation, f.PermissionType = e.principal, e.host, e.operation, e.permission
	req := kmsg.NewPtrDeleteACLsRequest()
	req.Filters = append(req.Filters, f)
	return withAdmin(ctx, lib, fn, target, func(ctx context.Context, h *handle, adm *kadm.Client) ([]ACL, error) {
		resp, err := req.RequestWith(ctx, h.cl)
		if err != nil {
			return nil, h.requestError(ctx, err)
		}
		var out []ACL
		for _, r := range resp.Results {
			if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
				return nil, Wrapf(ErrKafka, err, "%s", msgOr(r.ErrorMessage, "delete ACLs"))
			}
			for _, m := range r.MatchingACLs {
				if kerr.ErrorForCode(m.ErrorCode) != nil {
					continue // not deleted
				}
				out = append(out, aclOf(m.ResourceType, m.ResourceName, m.ResourcePatternType, m.Principal, m.Host, m.Operation, m.PermissionType))
			}
		}
		sortACLs(out)
		return out, nil
	})
}

// aclOf is an ACL the brokers described, in ACL's names.
func aclOf(resource kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal, host string,
	op kmsg.ACLOperation, permission kmsg.ACLPermissionType) ACL {
	return ACL{Principal: principal, Host: host, Resource: protocolName(resource), Name: name,
		Pattern: protocolName(pattern), Operation: protocolName(op), Permission: protocolName(permission)}
}

// sortACLs sorts acls by resource, name, principal, operation.
func sortACLs(acls []ACL) {
	slices.SortFunc(acls, func(a, b ACL) int {
		return cmp.Or(strings.Compare(a.Resource, b.Resource), strings.Compare(a.Name, b.Name), strings.Compare(a.Pattern, b.Pattern),
			strings.Compare(a.Principal, b.Principal), strings.Compare(a.Host, b.Host), strings.Compare(a.Operation, b.Operation),
			strings.Compare(a.Permission, b.Permission))
	})
}

// List returns the ACL as the BPL functions show it: ("principal" =>
// "User:alice" "host" => "*" "resource" => "topic" "name" => "t"
// "pattern" => "literal" "operation" => "read" "permission" => "allow").
func (a ACL) List() *value.List {
	l := &value.List{}
	l.AppendNamed("principal", a.Principal)
	l.AppendNamed("host", a.Host)
	l.AppendNamed("resource", a.Resource)
	l.AppendNamed("name", a.Name)
	l.AppendNamed("pattern", a.Pattern)
	l.AppendNamed("operation", a.Operation)
	l.AppendNamed("permission", a.Permission)
	return l
}
