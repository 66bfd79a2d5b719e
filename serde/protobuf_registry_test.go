package serde

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
	"github.com/bufbuild/protocompile"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
)

const (
	unitProto     = `syntax = "proto3"; package iot; enum Unit { C = 0; F = 1; }`
	importerProto = `syntax = "proto3"; package iot; import "iot/unit.proto"; import "google/protobuf/timestamp.proto";
message Temp { double t = 1; Unit unit = 2; google.protobuf.Timestamp at = 3; }`
)

// serializedProto is the .proto files compiled and each written as
// confluent-kafka registers a file: its FileDescriptorProto, serialized,
// in base64 (the descriptor names the file as its author named it), here
// without the fields' JSON names, as Python's descriptor_pb2 builds them
// by hand.
func serializedProto(t testing.TB, files map[string]string, names ...string) []string {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(files)})}
	fds, err := c.Compile(t.Context(), names...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fd := range fds {
		fdp := protodesc.ToFileDescriptorProto(fd)
		for _, m := range fdp.MessageType { // as a descriptor built by hand has them
			for _, f := range m.Field {
				f.JsonName = nil
			}
		}
		b, err := proto.Marshal(fdp)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, base64.StdEncoding.EncodeToString(b))
	}
	return out
}

// TestProtobufSerializedSchemas: a schema registered as confluent-kafka
// registers one, a base64 FileDescriptorProto with a reference to its
// own imported file (serialized too), reads; so does one that mixes the
// two forms, and a reference that is neither says so.
func TestProtobufSerializedSchemas(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	files := map[string]string{"iot/unit.proto": unitProto, "reading.proto": importerProto}
	ser := serializedProto(t, files, "iot/unit.proto", "reading.proto")
	ref := []sr.SchemaReference{{Name: "iot/unit.proto", Subject: "iot/unit.proto", Version: 1}}
	for _, tt := range []struct{ name, unit, main string }{
		{"both serialized", ser[0], ser[1]},
		{"a serialized schema, a text reference", unitProto, ser[1]},
		{"a text schema, a serialized reference", ser[0], importerProto},
	} {
		fake := newFake(t)
		if _, _, err := fake.RegisterSchema("iot/unit.proto", sr.Schema{Schema: tt.unit, Type: sr.TypeProtobuf}); err != nil {
			t.Fatal(err)
		}
		id, _, err := fake.RegisterSchema("temps-value", sr.Schema{Schema: tt.main, Type: sr.TypeProtobuf, References: ref})
		if err != nil {
			t.Fatal(err)
		}
		reg := newRegistry(t, RegistryConfig{URL: fake.URL()})
		// The record as confluent-kafka writes it: 0, the id, index [0],
		// then t = 21.5, unit = F and at = {seconds: 5}.
		b := append([]byte{0, 0, 0, 0, byte(id), 0, 0x09}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(21.5))...)
		b = append(b, 0x10, 0x01, 0x1a, 0x02, 0x08, 0x05)
		got, err := bind(t, Protobuf, reg, ValueDeserializer).Decode(ctx, "temps", b, "value")
		if err != nil || value.Format(got) != `("t" => 21.5 "unit" => "F" "at" => ("seconds" => 5 "nanos" => 0))` {
			t.Errorf("%s: %s, %v", tt.name, value.Format(got), err)
		}
	}
	fake := newFake(t)
	if _, _, err := fake.RegisterSchema("iot/unit.proto", sr.Schema{Schema: "AAAA" + base64.StdEncoding.EncodeToString([]byte{0xff}), Type: sr.TypeProtobuf}); err != nil {
		t.Fatal(err)
	}
	id, _, err := fake.RegisterSchema("bad-value", sr.Schema{Schema: ser[1], Type: sr.TypeProtobuf, References: ref})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL()}), ValueDeserializer).Decode(ctx, "bad", []byte{0, 0, 0, 0, byte(id), 0}, "value")
	if !errors.Is(err, ErrSchemaRegistry) || !strings.Contains(err.Error(), "iot/unit.proto: neither .proto text nor a base64 serialized FileDescriptorProto") {
		t.Errorf("a reference that is not a schema: %v", err)
	}
}

// FuzzProtobufSchema: whatever a registry answers for a schema or its
// reference, .proto text or a serialized FileDescriptorProto, compiles or
// is an error, never a panic.
func FuzzProtobufSchema(f *testing.F) {
	ser := serializedProto(f, map[string]string{"iot/unit.proto": unitProto, "reading.proto": importerProto}, "iot/unit.proto", "reading.proto")
	raw := func(s string) []byte { b, _ := base64.StdEncoding.DecodeString(s); return b }
	f.Add([]byte(importerProto), raw(ser[0]), false)
	f.Add(raw(ser[1]), raw(ser[0]), true)
	f.Add(raw(ser[1]), []byte(unitProto), true)
	f.Fuzz(func(t *testing.T, main, unit []byte, serialized bool) {
		text := string(main)
		if serialized {
			text = base64.StdEncoding.EncodeToString(main)
		}
		files := map[string]string{protoMainFile: text, "iot/unit.proto": base64.StdEncoding.EncodeToString(unit)}
		if len(unit) > 0 && unit[0] == 's' {
			files["iot/unit.proto"] = string(unit)
		}
		c, err := compileProtoFiles(t.Context(), files)
		if err != nil {
			return
		}
		if _, err := c.decode([]byte{0}); err != nil {
			t.Logf("decode of an empty message: %v", err)
		}
	})
}

// TestProtobufRegistersSerialized: the serializer registers its schema as
// confluent-kafka does, serialized, since Confluent's deserializers read
// the registry's answer as base64; with auto-register-schemas off it
// finds the schema in either form.
func TestProtobufRegistersSerialized(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	in := mustParseBPL(t, `("device" => "b1" "temperature" => 71.5)`)
	fake := newFake(t)
	b, err := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL(), AutoRegister: true, ValueSchema: readingProto}), ValueSerializer).Encode(ctx, "t", in, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	ss, ok := fake.GetSchema("t-value", 1)
	if !ok {
		t.Fatal("nothing registered under t-value")
	}
	fdp, err := protoDescriptor(ss.Schema.Schema)
	if err != nil || fdp == nil || fdp.GetPackage() != "iot" || fdp.MessageType[0].GetName() != "Reading" ||
		!slices.Contains(fdp.Dependency, "google/protobuf/timestamp.proto") || fdp.MessageType[0].Field[1].GetJsonName() != "temperature" {
		t.Fatalf("registered %.60q: %v, %v", ss.Schema.Schema, fdp, err)
	}
	if got, err := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL()}), ValueDeserializer).Decode(ctx, "t", b, "value"); err != nil ||
		!strings.HasPrefix(value.Format(got), `("device" => "b1" "temperature" => 71.5 `) {
		t.Errorf("read back: %s, %v", value.Format(got), err)
	}
	// Looked up, not registered: found in the form kafkabpl registered,
	// and in the text a person registered.
	byHand := newFake(t)
	if _, _, err := byHand.RegisterSchema("t-value", sr.Schema{Schema: readingProto, Type: sr.TypeProtobuf}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*srfake.Registry{fake, byHand} {
		if _, err := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: f.URL(), ValueSchema: readingProto}), ValueSerializer).Encode(ctx, "t", in, 1, ""); err != nil {
			t.Errorf("looked up: %v", err)
		}
	}
}

// TestProtobufReaderSchema: an inline schema, or use-latest-version's,
// is what a Protobuf deserializer reads into, as for the other formats:
// fields by number, the reader's names and order, a field the writer
// lacked at its default, one the reader lacks dropped.
func TestProtobufReaderSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	v1 := `syntax = "proto3"; package iot; message Reading { string device = 1; double temperature = 2; int64 dropped = 3; }`
	v2 := `syntax = "proto3"; package iot; message Other { int32 x = 1; } message Reading { double temp = 2; string device = 1; string unit = 4; }`
	fake := newFake(t)
	b, err := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL(), AutoRegister: true, ValueSchema: v1}), ValueSerializer).
		Encode(ctx, "t", mustParseBPL(t, `("device" => "b1" "temperature" => 71.5 "dropped" => 9)`), 1, "")
	if err != nil {
		t.Fatal(err)
	}
	const want = `("temp" => 71.5 "device" => "b1" "unit" => "")`
	inline := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL(), ValueSchema: v2}), ValueDeserializer)
	if got, err := inline.Decode(ctx, "t", b, "value"); err != nil || value.Format(got) != want {
		t.Errorf("with value-schema: %s, %v; want %s", value.Format(got), err, want)
	}
	if _, _, err := fake.RegisterSchema("t-value", sr.Schema{Schema: v2, Type: sr.TypeProtobuf}); err != nil {
		t.Fatal(err)
	}
	latest := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL(), UseLatest: true}), ValueDeserializer)
	if got, err := latest.Decode(ctx, "t", b, "value"); err != nil || value.Format(got) != want {
		t.Errorf("with use-latest-version: %s, %v; want %s", value.Format(got), err, want)
	}
	// A reader without the writer's message reads into its first.
	other := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL(), ValueSchema: `syntax = "proto3"; message R { string name = 1; }`}), ValueDeserializer)
	if got, err := other.Decode(ctx, "t", b, "value"); err != nil || value.Format(got) != `("name" => "b1")` {
		t.Errorf("into a reader of another name: %s, %v", value.Format(got), err)
	}
}

// TestProtobufFullName: value-schema-full-name picks the message a
// serializer writes, a nested one too, with its indexes in the header,
// and the subject the record strategies take from it; a deserializer
// reads a record of another name into it. A name the schema lacks, or the
// key on another format, is an ErrInvalidConfig error naming the key.
func TestProtobufFullName(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := `syntax = "proto3"; package iot; message Reading { map<string, int32> m = 1; message Where { double x = 1; } }
message Alarm { string text = 1; message Level { int32 n = 1; } message Code { int32 c = 1; } }`
	for _, tt := range []struct {
		name, in string
		header   []byte // after the id
	}{
		{"iot.Alarm", `("text" => "hot")`, []byte{2, 2}},       // [1]
		{"iot.Reading.Where", `("x" => 1.5)`, []byte{4, 0, 0}}, // [0 0]: the map's entry is not counted
		{"iot.Alarm.Code", `("c" => 7)`, []byte{4, 2, 2}},      // [1 1]
		{"iot.Reading", `("m" => ("a" => 1))`, []byte{0}},      // [0], written short
	} {
		fake := newFake(t)
		reg := newRegistry(t, RegistryConfig{URL: fake.URL(), AutoRegister: true, ValueSchema: schema, ValueFullName: tt.name, Strategy: RecordStrategy})
		b, err := bind(t, Protobuf, reg, ValueSerializer).Encode(ctx, "t", mustParseBPL(t, tt.in), 1, "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !bytes.Equal(b[5:5+len(tt.header)], tt.header) {
			t.Errorf("%s: header % x, want indexes % x", tt.name, b[:5+len(tt.header)], tt.header)
		}
		if _, ok := fake.GetSchema(tt.name, 1); !ok {
			t.Errorf("%s: not registered under the record strategy's subject", tt.name)
		}
		got, err := bind(t, Protobuf, reg, ValueDeserializer).Decode(ctx, "t", b, "value")
		if err != nil || value.Format(got) != tt.in {
			t.Errorf("%s: read back %s, %v", tt.name, value.Format(got), err)
		}
	}
	// The reader's own message, for a record whose message it has not.
	fake := newFake(t)
	b, err := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL(), AutoRegister: true, ValueSchema: `syntax = "proto3"; message M { int32 n = 1; }`}), ValueSerializer).
		Encode(ctx, "t", mustParseBPL(t, `("n" => 3)`), 1, "")
	if err != nil {
		t.Fatal(err)
	}
	reader := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL(), ValueSchema: schema, ValueFullName: "iot.Alarm.Level"}), ValueDeserializer)
	if got, err := reader.Decode(ctx, "t", b, "value"); err != nil || value.Format(got) != `("n" => 3)` {
		t.Errorf("into the named message: %s, %v", value.Format(got), err)
	}
	for _, tt := range []struct {
		cfg  RegistryConfig
		s    *Serde
		want string
	}{
		{RegistryConfig{ValueSchema: schema, ValueFullName: "iot.Nope"}, Protobuf, `config "value-schema-full-name": the schema has no message "iot.Nope"; it has iot.Reading, iot.Reading.Where, iot.Alarm, iot.Alarm.Level, iot.Alarm.Code`},
		{RegistryConfig{KeySchema: schema, KeyFullName: "Alarm"}, Protobuf, `config "key-schema-full-name": the schema has no message "Alarm"`},
		{RegistryConfig{ValueFullName: "app.User"}, Avro, `config "value-schema-full-name": "app.User" names a Protobuf message; the Avro serde has no messages to choose from`},
	} {
		tt.cfg.URL = fake.URL()
		role := ValueSerializer
		if tt.cfg.KeyFullName != "" {
			role = KeyDeserializer
		}
		if _, err := tt.s.Bind(newRegistry(t, tt.cfg), role); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	// Named for the subject's latest schema, which lacks it.
	ser := bind(t, Protobuf, newRegistry(t, RegistryConfig{URL: fake.URL(), ValueFullName: "iot.Alarm"}), ValueSerializer)
	if _, err := ser.Encode(ctx, "t", mustParseBPL(t, `("n" => 3)`), 1, ""); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `config "value-schema-full-name": the schema has no message "iot.Alarm"; it has M`) {
		t.Errorf("a latest schema without the message: %v", err)
	}
}
