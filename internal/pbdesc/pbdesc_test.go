package pbdesc

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

func TestJSONName(t *testing.T) {
	for name, want := range map[string]string{"temperature": "temperature", "device_id": "deviceId", "a__b": "aB", "x_1y": "x1y", "_lead": "Lead", "Trail_": "Trail"} {
		if got := JSONName(name); got != want {
			t.Errorf("JSONName(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestFillJSONNames fills the missing and empty names, nested messages'
// too, and keeps a custom one.
func TestFillJSONNames(t *testing.T) {
	fdp := &descriptorpb.FileDescriptorProto{MessageType: []*descriptorpb.DescriptorProto{{
		Name: proto.String("Reading"),
		Field: []*descriptorpb.FieldDescriptorProto{
			{Name: proto.String("device_id")},
			{Name: proto.String("celsius"), JsonName: proto.String("")},
			{Name: proto.String("unit"), JsonName: proto.String("u")},
		},
		NestedType: []*descriptorpb.DescriptorProto{{Name: proto.String("Where"), Field: []*descriptorpb.FieldDescriptorProto{{Name: proto.String("site_name")}}}},
	}}}
	FillJSONNames(fdp)
	m := fdp.MessageType[0]
	got := []string{m.Field[0].GetJsonName(), m.Field[1].GetJsonName(), m.Field[2].GetJsonName(), m.NestedType[0].Field[0].GetJsonName()}
	want := []string{"deviceId", "celsius", "u", "siteName"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("json names %q, want %q", got, want)
			break
		}
	}
}
