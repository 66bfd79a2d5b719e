package registry_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/internal/registry"
	"github.com/brain4it/kafkabpl/internal/registry/registrytest"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestChecks runs the table of API checks against the registry: each
// answers as Confluent documents.
func TestChecks(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	doc, _, _ := registrytest.Run(t, registrytest.Target{Name: "registry", URL: srv.URL}, "t")
	if doc != len(registrytest.Checks) {
		t.Errorf("%d of %d checks as documented", doc, len(registrytest.Checks))
	}
}

// TestChecksSrfake measures franz-go's srfake, which the embedded cluster
// served before, with the same table; it only logs the figure.
func TestChecksSrfake(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	doc, _, _ := registrytest.Run(logOnly{t}, registrytest.Target{Name: "srfake", URL: fake.URL()}, "t")
	t.Logf("srfake: %d of %d checks as documented", doc, len(registrytest.Checks))
}

// logOnly reports a failed check as a log line.
type logOnly struct{ *testing.T }

func (l logOnly) Errorf(format string, args ...any) { l.Logf(format, args...) }

// TestHandBuiltDescriptor registers Protobuf schemas as base64
// FileDescriptorProtos without json names, as Python's descriptor_pb2
// builds them and confluent-kafka registers them, one importing the
// other: both are valid. Linking the importer as it came refused it
// (422, "custom JSON name "" conflicts").
func TestHandBuiltDescriptor(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	register := func(subject string, fdp *descriptorpb.FileDescriptorProto, refs ...map[string]any) {
		t.Helper()
		raw, err := proto.Marshal(fdp)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"schemaType": "PROTOBUF", "schema": base64.StdEncoding.EncodeToString(raw), "references": refs})
		resp, err := http.Post(srv.URL+"/subjects/"+subject+"/versions", "application/vnd.schemaregistry.v1+json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"id"`) {
			t.Errorf("register %s: %d %s", subject, resp.StatusCode, answer)
		}
	}
	field := func(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: typ.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
	}
	register("unit", &descriptorpb.FileDescriptorProto{
		Name: proto.String("iot/unit.proto"), Package: proto.String("iot"), Syntax: proto.String("proto3"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Unit"), Value: []*descriptorpb.EnumValueDescriptorProto{{Name: proto.String("C"), Number: proto.Int32(0)}}}},
	})
	unit := field("unit", 3, descriptorpb.FieldDescriptorProto_TYPE_ENUM)
	unit.TypeName = proto.String(".iot.Unit")
	register("readings-value", &descriptorpb.FileDescriptorProto{
		Name: proto.String("iot/reading.proto"), Package: proto.String("iot"), Syntax: proto.String("proto3"), Dependency: []string{"iot/unit.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Reading"), Field: []*descriptorpb.FieldDescriptorProto{
			field("device_id", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING), field("temperature", 2, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE), unit,
		}}},
	}, map[string]any{"name": "iot/unit.proto", "subject": "unit", "version": 1})
}
