package functions

import (
	"context"
	"strconv"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
)

// The ACL functions: kafka-create-acls, kafka-describe-acls and
// kafka-delete-acls.

func (lib table) addACLFunctions(m map[string]value.Func) {
	m["kafka-create-acls"] = lib.bplCreateACLs
	m["kafka-describe-acls"] = lib.bplDescribeACLs
	m["kafka-delete-acls"] = lib.bplDeleteACLs
}

// acl reads an ACL, or a filter, from a named list: ("principal" =>
// "User:alice" "resource" => "topic" "name" => "t" "operation" => "read"
// ...); what names it in errors.
func (a *args) acl(v any, what string) (kafkabpl.ACL, error) {
	var acl kafkabpl.ACL
	l, ok := v.(*value.List)
	if !ok || l.Len() > 0 && !l.Named() {
		return acl, a.errorf(`%s: want ("principal" => "User:name" "resource" => "topic" "name" => "t" "operation" => "read" ...), got %s`, what, value.Describe(v))
	}
	for name, v := range l.All() {
		var field *string
		switch name {
		case "principal":
			field = &acl.Principal
		case "host":
			field = &acl.Host
		case "resource":
			field = &acl.Resource
		case "name":
			field = &acl.Name
		case "pattern":
			field = &acl.Pattern
		case "operation":
			field = &acl.Operation
		case "permission":
			field = &acl.Permission
		default:
			return acl, a.errorf(`%s: unknown element %q; an ACL has "principal", "host", "resource", "name", "pattern", "operation" and "permission"`, what, name)
		}
		s, ok := v.(string)
		if !ok {
			return acl, a.errorf("%s %q: want a string, got %s", what, name, value.Describe(v))
		}
		*field = s
	}
	return acl, nil
}

// aclsList is a list of ACLs in BPL.
func aclsList(acls []kafkabpl.ACL) *value.List {
	out := &value.List{}
	for _, acl := range acls {
		out.Append(acl.List())
	}
	return out
}

func (lib table) bplCreateACLs(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-create-acls", l)
	if err != nil {
		return nil, err
	}
	var acls []kafkabpl.ACL
	if list, ok := a.pos[1].(*value.List); ok && !list.Named() && list.Len() > 0 {
		for i, v := range list.Values() {
			acl, err := a.acl(v, "acls["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			acls = append(acls, acl)
		}
	} else {
		acl, err := a.acl(a.pos[1], "acl")
		if err != nil {
			return nil, err
		}
		acls = append(acls, acl)
	}
	errs, err := lib.CreateACLs(ctx, a.pos[0], acls)
	if err != nil {
		return nil, err
	}
	out := &value.List{}
	for _, err := range errs {
		if err != nil {
			out.Append(err.Error())
			continue
		}
		out.Append(true)
	}
	return out, nil
}

func (lib table) bplDescribeACLs(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-describe-acls", l)
	if err != nil {
		return nil, err
	}
	var filter kafkabpl.ACL
	if len(a.pos) == 2 {
		if filter, err = a.acl(a.pos[1], "filter"); err != nil {
			return nil, err
		}
	}
	acls, err := lib.DescribeACLs(ctx, a.pos[0], filter)
	if err != nil {
		return nil, err
	}
	return aclsList(acls), nil
}

func (lib table) bplDeleteACLs(ctx context.Context, l *value.List) (any, error) {
	a, err := readArgs("kafka-delete-acls", l)
	if err != nil {
		return nil, err
	}
	filter, err := a.acl(a.pos[1], "filter")
	if err != nil {
		return nil, err
	}
	if filter == (kafkabpl.ACL{}) {
		return nil, a.errorf("filter: want at least one element: () would delete every ACL of the cluster")
	}
	acls, err := lib.DeleteACLs(ctx, a.pos[0], filter)
	if err != nil {
		return nil, err
	}
	return aclsList(acls), nil
}
