package registry

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Protobuf compatibility follows Confluent's rules: the differences
// between an original schema and its update are found by name for types
// and by number for fields, and the update can read data of the original
// unless a difference is one of those below that break the wire format
// (a scalar changing to a type of another wire group, a message type
// changing, a message removed, the package changed, ...).
var protoCompatible = map[string]bool{
	"MESSAGE_ADDED": true, "MESSAGE_MOVED": true, "ENUM_ADDED": true, "ENUM_REMOVED": true,
	"ENUM_CONST_ADDED": true, "ENUM_CONST_CHANGED": true, "ENUM_CONST_REMOVED": true,
	"FIELD_ADDED": true, "FIELD_REMOVED": true, "FIELD_NAME_CHANGED": true,
	"FIELD_STRING_OR_BYTES_LABEL_CHANGED": true, "ONEOF_ADDED": true, "ONEOF_REMOVED": true,
	"ONEOF_FIELD_ADDED": true, "ONEOF_FIELD_MOVED_TO_TOP_LEVEL": true,
}

var protoDescriptions = map[string]string{
	"PACKAGE_CHANGED":                "The package at '%s' in the {reader} schema does not match the package in the {writer} schema",
	"MESSAGE_REMOVED":                "The {writer} schema has a message at path '%s' which is missing in the {reader} schema",
	"FIELD_KIND_CHANGED":             "The kind of a field at path '%s' in the {reader} schema does not match its kind in the {writer} schema",
	"FIELD_SCALAR_KIND_CHANGED":      "The kind of a SCALAR field at path '%s' in the {reader} schema does not match its kind in the {writer} schema",
	"FIELD_NAMED_TYPE_CHANGED":       "The type of a MESSAGE field at path '%s' in the {reader} schema does not match its type in the {writer} schema",
	"FIELD_NUMERIC_LABEL_CHANGED":    "The label of a NUMERIC field at path '%s' in the {reader} schema does not match its label in the {writer} schema",
	"REQUIRED_FIELD_ADDED":           "The {reader} schema has a required field at path '%s' which is missing in the {writer} schema",
	"REQUIRED_FIELD_REMOVED":         "The {writer} schema has a required field at path '%s' which is missing in the {reader} schema",
	"ONEOF_FIELD_REMOVED":            "The {writer} schema has a oneof field at path '%s' which is missing in the {reader} schema",
	"MULTIPLE_FIELDS_MOVED_TO_ONEOF": "Multiple fields in the oneof at path '%s' in the {reader} schema are outside a single oneof in the {writer} schema",
	"FIELD_MOVED_TO_EXISTING_ONEOF":  "A field in the oneof at path '%s' in the {reader} schema was outside that oneof in the {writer} schema",
}

type protoDiff struct {
	diffs []string // incompatible ones, formatted
	seen  map[[2]protoreflect.FullName]bool
}

func (d *protoDiff) add(kind, path string) {
	if protoCompatible[kind] {
		return
	}
	desc, ok := protoDescriptions[kind]
	if !ok {
		desc = kind + " at path '%s'"
	}
	d.diffs = append(d.diffs, fmt.Sprintf(`{errorType:"%s", description:"%s"}`, kind, fmt.Sprintf(desc, path)))
}

func (protobufFormat) canRead(reader, writer parsed) []string {
	o, u := writer.(*protobufSchema).file, reader.(*protobufSchema).file
	d := &protoDiff{seen: map[[2]protoreflect.FullName]bool{}}
	if o.Package() != u.Package() {
		d.add("PACKAGE_CHANGED", "#/")
	}
	d.types("#/", o.Messages(), o.Enums(), u.Messages(), u.Enums())
	return d.diffs
}

func (d *protoDiff) types(path string, om protoreflect.MessageDescriptors, oe protoreflect.EnumDescriptors, um protoreflect.MessageDescriptors, ue protoreflect.EnumDescriptors) {
	for i := range om.Len() {
		m := om.Get(i)
		p := path + string(m.Name())
		switch n := um.ByName(m.Name()); {
		case n == nil && !m.IsMapEntry():
			d.add("MESSAGE_REMOVED", p)
		case n != nil:
			d.message(p, m, n)
		}
	}
	for i := range um.Len() {
		if m := um.Get(i); om.ByName(m.Name()) == nil && !m.IsMapEntry() {
			d.add("MESSAGE_ADDED", path+string(m.Name()))
		}
	}
	for i := range oe.Len() {
		e := oe.Get(i)
		if n := ue.ByName(e.Name()); n != nil {
			d.enum(path+string(e.Name()), e, n)
		}
	}
}

func (d *protoDiff) enum(path string, o, u protoreflect.EnumDescriptor) {
	for i := range o.Values().Len() {
		v := o.Values().Get(i)
		switch n := u.Values().ByNumber(v.Number()); {
		case n == nil:
			d.add("ENUM_CONST_REMOVED", path)
		case n.Name() != v.Name():
			d.add("ENUM_CONST_CHANGED", path)
		}
	}
}

// realOneof is a field's oneof, unless it is proto3 optional's synthetic
// one.
func realOneof(f protoreflect.FieldDescriptor) string {
	if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return string(o.Name())
	}
	return ""
}

func (d *protoDiff) message(path string, o, u protoreflect.MessageDescriptor) {
	key := [2]protoreflect.FullName{o.FullName(), u.FullName()}
	if d.seen[key] {
		return
	}
	d.seen[key] = true
	of, uf := o.Fields(), u.Fields()
	// A oneof is new where its fields came from more than one group of
	// the original: fields that were independent are now exclusive.
	for i := range u.Oneofs().Len() {
		oo := u.Oneofs().Get(i)
		if oo.IsSynthetic() {
			continue
		}
		groups, moved := map[string]bool{}, 0
		for j := range oo.Fields().Len() {
			f := of.ByNumber(oo.Fields().Get(j).Number())
			switch {
			case f == nil:
			case realOneof(f) != "":
				groups["oneof:"+realOneof(f)] = true
			default:
				groups[fmt.Sprint("field:", f.Number())] = true
				moved++
			}
		}
		if len(groups) > 1 {
			if moved > 1 {
				d.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF", path+"/"+string(oo.Name()))
			} else {
				d.add("FIELD_MOVED_TO_EXISTING_ONEOF", path+"/"+string(oo.Name()))
			}
		}
	}
	deleted := map[string]bool{} // original oneofs none of whose fields survive
	for i := range o.Oneofs().Len() {
		oo := o.Oneofs().Get(i)
		if oo.IsSynthetic() || u.Oneofs().ByName(oo.Name()) != nil {
			continue
		}
		survives := false
		for j := range oo.Fields().Len() {
			survives = survives || uf.ByNumber(oo.Fields().Get(j).Number()) != nil
		}
		if !survives {
			deleted[string(oo.Name())] = true
		}
	}
	var numbers []protoreflect.FieldNumber
	for i := range of.Len() {
		numbers = append(numbers, of.Get(i).Number())
	}
	for i := range uf.Len() {
		if of.ByNumber(uf.Get(i).Number()) == nil {
			numbers = append(numbers, uf.Get(i).Number())
		}
	}
	slices.Sort(numbers)
	for _, n := range numbers {
		ofd, ufd := of.ByNumber(n), uf.ByNumber(n)
		p := fmt.Sprintf("%s/%d", path, n)
		switch {
		case ufd == nil && realOneof(ofd) != "":
			if !deleted[realOneof(ofd)] {
				d.add("ONEOF_FIELD_REMOVED", fmt.Sprintf("%s/%s/%d", path, realOneof(ofd), n))
			}
		case ufd == nil && ofd.Cardinality() == protoreflect.Required:
			d.add("REQUIRED_FIELD_REMOVED", p)
		case ufd == nil:
			d.add("FIELD_REMOVED", p)
		case ofd == nil && ufd.Cardinality() == protoreflect.Required:
			d.add("REQUIRED_FIELD_ADDED", p)
		case ofd == nil:
			d.add("FIELD_ADDED", p)
		default:
			if realOneof(ofd) != "" && realOneof(ufd) == "" {
				d.add("ONEOF_FIELD_MOVED_TO_TOP_LEVEL", p)
			}
			if ofd.Name() != ufd.Name() {
				d.add("FIELD_NAME_CHANGED", p)
			}
			d.fieldType(p, protoLabel(ofd), protoLabel(ufd), ofd, ufd)
		}
	}
	d.types(path+"/", o.Messages(), o.Enums(), u.Messages(), u.Enums())
}

// protoLabel is a field's label as written: "" for a proto3 field
// without one, and for a oneof's or a map's.
func protoLabel(f protoreflect.FieldDescriptor) string {
	switch {
	case f.IsMap() || realOneof(f) != "":
		return ""
	case f.Cardinality() == protoreflect.Repeated:
		return "repeated"
	case f.Cardinality() == protoreflect.Required:
		return "required"
	case f.HasPresence() && f.Syntax() == protoreflect.Proto3 && f.Message() == nil:
		return "optional"
	case f.Syntax() == protoreflect.Proto2:
		return "optional"
	}
	return ""
}

func protoKind(f protoreflect.FieldDescriptor) string {
	switch {
	case f.IsMap():
		return "MAP"
	case f.Kind() == protoreflect.MessageKind || f.Kind() == protoreflect.GroupKind:
		return "MESSAGE"
	}
	return "SCALAR"
}

// protoScalarGroup is a scalar's group of wire-compatible types.
func protoScalarGroup(k protoreflect.Kind) string {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.BoolKind, protoreflect.EnumKind:
		return "GENERAL_NUMBER"
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return "SIGNED_NUMBER"
	case protoreflect.StringKind, protoreflect.BytesKind:
		return "STRING_OR_BYTES"
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return "FIXED32"
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return "FIXED64"
	}
	return strings.ToUpper(k.String())
}

func (d *protoDiff) fieldType(path, ol, ul string, o, u protoreflect.FieldDescriptor) {
	if protoKind(o) != protoKind(u) {
		d.add("FIELD_KIND_CHANGED", path)
		return
	}
	switch protoKind(o) {
	case "SCALAR":
		og, ug := protoScalarGroup(o.Kind()), protoScalarGroup(u.Kind())
		switch {
		case og != ug:
			d.add("FIELD_SCALAR_KIND_CHANGED", path)
		case ol != "" && ul != "" && ol != ul && og == "STRING_OR_BYTES":
			d.add("FIELD_STRING_OR_BYTES_LABEL_CHANGED", path)
		case ol != "" && ul != "" && ol != ul:
			d.add("FIELD_NUMERIC_LABEL_CHANGED", path)
		}
	case "MAP":
		d.fieldType(path, "", "", o.MapKey(), u.MapKey())
		d.fieldType(path, "", "", o.MapValue(), u.MapValue())
	case "MESSAGE":
		om, um := o.Message(), u.Message()
		local := func(m protoreflect.MessageDescriptor) string {
			return strings.TrimPrefix(string(m.FullName()), string(m.ParentFile().Package())+".")
		}
		if local(om) != local(um) {
			d.add("FIELD_NAMED_TYPE_CHANGED", path)
			return
		}
		sub := &protoDiff{seen: d.seen}
		sub.message("#/"+local(om), om, um)
		if len(sub.diffs) > 0 {
			d.diffs = append(d.diffs, sub.diffs...)
			d.add("FIELD_NAMED_TYPE_CHANGED", path)
		}
	}
}
