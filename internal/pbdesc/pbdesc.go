// Package pbdesc mends Protobuf file descriptors built by hand, as
// Python's descriptor_pb2 builds them (confluent-kafka registers its
// schemas so), for the schema registry and the Protobuf serde alike.
package pbdesc

import (
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// FillJSONNames gives every field and extension of fdp that has no
// json_name (or an empty one) protoc's: a descriptor built by hand has
// none, and protocompile, linking it, takes each missing one for a
// custom "", in conflict with the others.
func FillJSONNames(fdp *descriptorpb.FileDescriptorProto) {
	fill(fdp.GetMessageType(), fdp.GetExtension())
}

func fill(msgs []*descriptorpb.DescriptorProto, fields []*descriptorpb.FieldDescriptorProto) {
	for _, f := range fields {
		if f.GetJsonName() == "" {
			f.JsonName = proto.String(JSONName(f.GetName()))
		}
	}
	for _, m := range msgs {
		fill(m.GetNestedType(), append(m.GetField(), m.GetExtension()...))
	}
}

// JSONName is protoc's JSON name of a field: its underscores dropped,
// each letter after one in upper case.
func JSONName(name string) string {
	var b strings.Builder
	up := false
	for _, c := range []byte(name) {
		switch {
		case c == '_':
			up = true
		case up && 'a' <= c && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			up = false
		default:
			b.WriteByte(c)
			up = false
		}
	}
	return b.String()
}
