package kafkabpl

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/serde"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

const userV1 = `{"type":"record","name":"User","namespace":"app","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"}]}`

const userV2 = `{"type":"record","name":"User","namespace":"app","fields":[{"name":"name","type":"string"},{"name":"age","type":"long"},{"name":"email","type":["null","string"],"default":null}]}`

// bplValue is the one BPL value text holds.
func bplValue(t testing.TB, text string) any { return must[[]any](t)(value.Parse(text))[0] }

func newRegistryFake(t testing.TB) *srfake.Registry {
	t.Helper()
	reg := srfake.New()
	t.Cleanup(reg.Close)
	return reg
}

// pollRecords polls c until it has n records of topic.
func pollRecords(t testing.TB, lib *Library, c, topic string, n int) []Record {
	t.Helper()
	var out []Record
	ctx := testCtx(t)
	deadline := time.Now().Add(20 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("polled %d of %d records", len(out), n)
		}
		p, err := lib.PollTopics(ctx, c, []string{topic}, 500*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range p.Topics {
			out = append(out, tr.Records...)
		}
	}
	return out
}

// TestAvroThroughRegistry sends Avro records through a registry and reads
// them back; the value that does not fit fails alone.
func TestAvroThroughRegistry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	reg := newRegistryFake(t)
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema.registry.url": reg.URL(),
		"value.serializer": "io.confluent.kafka.serializers.KafkaAvroSerializer", "value-schema": userV1}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(),
		"value-deserializer": "io.confluent.kafka.serializers.KafkaAvroDeserializer", "auto-offset-reset": "earliest"}))
	msgs := []Message{
		{Value: bplValue(t, `("name" => "ann" "age" => 31)`)},
		{Value: bplValue(t, `("name" => "bob" "age" => "old")`)},
		{Value: bplValue(t, `("name" => "cy" "age" => 7)`)},
	}
	n, err := lib.Send(ctx, p, []string{"users"}, msgs)
	var se *SendError
	if n != 2 || !errors.As(err, &se) || se.Delivered != 2 || len(se.Failed) != 1 || se.Failed[0].Message != 1 {
		t.Fatalf("Send: %d, %v (%+v)", n, err, se)
	}
	for _, want := range []string{`message 2 to topic "users": the Avro serializer cannot encode`, `field "age": want an int (32 bits), got the string "old"`} {
		if !strings.Contains(se.Failed[0].Err.Error(), want) {
			t.Errorf("failure %q does not say %q", se.Failed[0].Err, want)
		}
	}
	if !errors.Is(err, ErrInvalidArgument) || ErrorType(err) != "InvalidArgument" {
		t.Errorf("Send error %v is not an InvalidArgument", err)
	}
	ss, ok := reg.GetSchema("users-value", 1)
	if !ok || ss.ID < 1 {
		t.Fatalf("subject users-value: %+v %v", ss, ok)
	}
	recs := pollRecords(t, lib, c, "users", 2)
	for i, want := range []string{`("name" => "ann" "age" => 31)`, `("name" => "cy" "age" => 7)`} {
		if err := recs[i].Err(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if s := value.Format(recs[i].Value()); s != want {
			t.Errorf("record %d = %s, want %s", i, s, want)
		}
		if b := recs[i].ValueBytes(); b[0] != 0 || int(b[1])<<24|int(b[2])<<16|int(b[3])<<8|int(b[4]) != ss.ID {
			t.Errorf("record %d's header %x, want magic 0 and id %d", i, b[:5], ss.ID)
		}
	}
}

// TestAvroUndecodable: a record whose schema id the registry does not
// know, and one that is not in the wire format, come back with the reason;
// the records after them are read.
func TestAvroUndecodable(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	reg := newRegistryFake(t)
	lib := newLib(t)
	ctx := testCtx(t)
	raw := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "value-serializer": "ByteArray"}))
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-serializer": "Avro", "value-schema": userV1}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-deserializer": "Avro", "auto-offset-reset": "earliest"}))
	must[int](t)(lib.Send(ctx, raw, []string{"u"}, []Message{{Value: []byte{0, 0, 0, 0, 99, 2, 'a', 2}}, {Value: []byte("plain")}}))
	must[int](t)(lib.Send(ctx, p, []string{"u"}, []Message{{Value: bplValue(t, `("name" => "ok" "age" => 1)`)}}))
	recs := pollRecords(t, lib, c, "u", 3)
	for i, want := range []string{"schema id 99", "not in the schema registry's wire format"} {
		err := recs[i].Err()
		if !errors.Is(err, ErrDeserialization) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the Avro deserializer") {
			t.Errorf("record %d (offset %d): %v, want a deserialization error saying %q", i, recs[i].Offset(), err, want)
		}
		if _, ok := recs[i].Value().([]byte); !ok {
			t.Errorf("record %d's value is %T, want its raw bytes", i, recs[i].Value())
		}
	}
	if err := recs[2].Err(); err != nil || value.Format(recs[2].Value()) != `("name" => "ok" "age" => 1)` {
		t.Errorf("the good record after them: %v %s", err, value.Format(recs[2].Value()))
	}
}

// TestAvroEvolutionThroughRegistry: records written with v1 are read with
// v2 as the reader schema, given inline or as the subject's latest.
func TestAvroEvolutionThroughRegistry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	reg := newRegistryFake(t)
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-serializer": "Avro", "value-schema": userV1}))
	must[int](t)(lib.Send(ctx, p, []string{"evo"}, []Message{{Value: bplValue(t, `("name" => "ann" "age" => 31)`)}}))
	if _, _, err := reg.RegisterSchema("evo-value", sr.Schema{Schema: userV2, Type: sr.TypeAvro}); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []map[string]any{{"value-schema": userV2}, {"use-latest-version": true}} {
		cfg["servers"], cfg["schema-registry-url"], cfg["value-deserializer"], cfg["auto-offset-reset"] = servers, reg.URL(), "Avro", "earliest"
		c := must[string](t)(lib.Create(ctx, Consumer, cfg))
		recs := pollRecords(t, lib, c, "evo", 1)
		if err := recs[0].Err(); err != nil {
			t.Fatal(err)
		}
		if s := value.Format(recs[0].Value()); s != `("name" => "ann" "age" => 31 "email" => null)` {
			t.Errorf("%v: v1 read as v2: %s", cfg, s)
		}
	}
}

// TestRegistryDown: a registry that is not there gives a typed error,
// naming its URL, within the request timeout.
func TestRegistryDown(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": url, "value-serializer": "Avro", "value-schema": userV1, "request-timeout": 2000}))
	start := time.Now()
	_, err = lib.Send(ctx, p, []string{"t"}, []Message{{Value: bplValue(t, `("name" => "a" "age" => 1)`)}})
	if !errors.Is(err, ErrSchemaRegistry) || !strings.Contains(err.Error(), url) || ErrorType(err) != "SchemaRegistryError" {
		t.Errorf("Send with the registry down: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	// A consumer's poll says so too, and holds the records back (see
	// TestPollHoldsBackDuringRegistryOutage): they are not bad records.
	raw := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "value-serializer": "ByteArray"}))
	must[int](t)(lib.Send(ctx, raw, []string{"down"}, []Message{{Value: []byte{0, 0, 0, 0, 1, 2, 'a', 2}}, {Value: []byte{0, 0, 0, 0, 1, 2, 'b', 4}}}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": url, "value-deserializer": "Avro", "auto-offset-reset": "earliest", "request-timeout": 2000}))
	start = time.Now()
	for {
		res, err := lib.PollTopics(ctx, c, []string{"down"}, 500*time.Millisecond)
		if err == nil && res.Len() == 0 && time.Since(start) < 10*time.Second {
			continue // not fetched yet
		}
		if !errors.Is(err, ErrRegistryUnavailable) || ErrorType(err) != "SchemaRegistryError" || !strings.Contains(fmt.Sprint(err), url) {
			t.Errorf("poll with the registry down: %v, %v", res, err)
		}
		break
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the poll took %v", d)
	}
	// A non-loopback registry is never dialed by the tests.
	p2 := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": "http://192.0.2.1:8081", "value-serializer": "Avro", "value-schema": userV1}))
	if _, err := lib.Send(ctx, p2, []string{"t"}, []Message{{Value: bplValue(t, `("name" => "a" "age" => 1)`)}}); !strings.Contains(fmt.Sprint(err), "loopback addresses only") {
		t.Errorf("Send to a registry off loopback: %v", err)
	}
}

func TestRegistryConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"value-serializer": "Avro"}, `config "value-serializer" "Avro" needs "schema-registry-url"`},
		{map[string]any{"value-serializer": "Avro", "schema-registry-url": "localhost:8081"}, `want an http:// or https:// URL`},
		{map[string]any{"value-serializer": "Avro", "schema-registry-url": "http://localhost:8081", "value-schema": `{"type":"nope"}`}, `config "value-schema": not a valid Avro schema`},
		{map[string]any{"value-serializer": "Avro", "schema-registry-url": "http://localhost:8081", "subject.name.strategy": "io.confluent.kafka.serializers.subject.RecordNameStrategy"}, `the record strategies need the schema`},
		{map[string]any{"subject-name-strategy": "nope"}, `want "topic", "record" or "topic-record"`},
		{map[string]any{"basic.auth.user.info": "nocolon"}, `want "user:password"`},
		{map[string]any{"use.schema.id": 0}, `a schema id (1 or more)`},
		{map[string]any{"schema.registry.ssl.truststore.location": "x"}, `"schema-registry-tls"`},
	} {
		tt.cfg["servers"] = "localhost:9092"
		_, err := parseConfig(tt.cfg)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	c, err := parseConfig(map[string]any{"servers": "localhost:9092", "value.serializer": "KafkaAvroSerializer", "schema.registry.url": "http://localhost:8081",
		"value.subject.name.strategy": "topic-record", "value-schema": userV1, "basic.auth.user.info": "u:secret"})
	if err != nil {
		t.Fatal(err)
	}
	if c.registry.Strategy != serde.TopicRecordStrategy || c.registry.UserInfo != "u:secret" {
		t.Errorf("registry config %+v", c.registry)
	}
	if !c.registry.AutoRegister {
		t.Error("auto-register-schemas is off by default")
	}
}

// TestRegistryTLSAndAuth: a registry over TLS, trusted through
// "schema-registry-tls", that wants basic auth from "basic-auth-user-info".
func TestRegistryTLSAndAuth(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	fake := srfake.NewRegistry(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("app:s3cret"))))
	srv := httptest.NewTLSServer(fake.Handler())
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	lib := newLib(t)
	ctx := testCtx(t)
	send := func(cfg map[string]any) error {
		cfg["servers"], cfg["schema-registry-url"], cfg["value-serializer"], cfg["value-schema"] = servers, srv.URL, "Avro", userV1
		p, err := lib.Create(ctx, Producer, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = lib.Send(ctx, p, []string{"tls"}, []Message{{Value: bplValue(t, `("name" => "a" "age" => 1)`)}})
		return err
	}
	tlsCfg := map[string]any{"ca-file": ca}
	if err := send(map[string]any{"schema-registry-tls": tlsCfg, "basic.auth.user.info": "app:s3cret"}); err != nil {
		t.Fatalf("with the CA and the password: %v", err)
	}
	err := send(map[string]any{"schema-registry-tls": tlsCfg, "basic.auth.user.info": "app:wrong"})
	if !errors.Is(err, ErrSchemaRegistry) || !strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), "HTTP 403") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("with a wrong password: %v", err)
	}
	if err := send(map[string]any{"basic.auth.user.info": "app:s3cret"}); !errors.Is(err, ErrSchemaRegistry) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v", err)
	}
}

// TestSubjectStrategies: the record and topic-record strategies register
// under the record's name, use-schema-id writes with that id, and keys
// have serdes of their own.
func TestSubjectStrategies(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	reg := newRegistryFake(t)
	lib := newLib(t)
	ctx := testCtx(t)
	val := bplValue(t, `("name" => "ann" "age" => 31)`)
	for _, tt := range []struct{ strategy, subject string }{{"record", "app.User"}, {"io.confluent.kafka.serializers.subject.TopicRecordNameStrategy", "st-app.User"}} {
		p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-serializer": "Avro", "value-schema": userV1, "subject-name-strategy": tt.strategy}))
		must[int](t)(lib.Send(ctx, p, []string{"st"}, []Message{{Value: val}}))
		if _, ok := reg.GetSchema(tt.subject, 1); !ok {
			t.Errorf("%s: no subject %s", tt.strategy, tt.subject)
		}
	}
	id, _, err := reg.RegisterSchema("elsewhere", sr.Schema{Schema: userV2, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(),
		"value-serializer": "Avro", "use.schema.id": id, "key-serializer": "Avro", "key-schema": `"string"`}))
	must[int](t)(lib.Send(ctx, p, []string{"by-id"}, []Message{{Key: "k1", Value: val}}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(),
		"value-deserializer": "Avro", "key-deserializer": "Avro", "auto-offset-reset": "earliest"}))
	r := pollRecords(t, lib, c, "by-id", 1)[0]
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if value.Format(r.Key()) != `"k1"` || value.Format(r.Value()) != `("name" => "ann" "age" => 31 "email" => null)` || int(r.ValueBytes()[4]) != id {
		t.Errorf("key %s value %s header %x, want the value written with schema id %d", value.Format(r.Key()), value.Format(r.Value()), r.ValueBytes()[:5], id)
	}
	if _, ok := reg.GetSchema("by-id-key", 1); !ok {
		t.Error("the key's schema is not under by-id-key")
	}
}

// TestProtobufThroughRegistry: Protobuf records with a reference, through
// a registry, and a message other than the file's first.
func TestProtobufThroughRegistry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	reg := newRegistryFake(t)
	if _, _, err := reg.RegisterSchema("unit.proto", sr.Schema{Schema: `syntax = "proto3"; package iot; enum Unit { C = 0; F = 1; }`, Type: sr.TypeProtobuf}); err != nil {
		t.Fatal(err)
	}
	schema := `syntax = "proto3"; package iot; import "unit.proto"; message Temp { double t = 1; Unit unit = 2; }`
	lib := newLib(t)
	ctx := testCtx(t)
	if _, _, err := reg.RegisterSchema("temps-value", sr.Schema{Schema: schema, Type: sr.TypeProtobuf,
		References: []sr.SchemaReference{{Name: "unit.proto", Subject: "unit.proto", Version: 1}}}); err != nil {
		t.Fatal(err)
	}
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-serializer": "io.confluent.kafka.serializers.protobuf.KafkaProtobufSerializer"}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-deserializer": "Protobuf", "auto-offset-reset": "earliest"}))
	n, err := lib.Send(ctx, p, []string{"temps"}, []Message{{Value: bplValue(t, `("t" => 21.5 "unit" => "F")`)}, {Value: bplValue(t, `("t" => "warm")`)}})
	if n != 1 || !strings.Contains(err.Error(), `the Protobuf serializer cannot encode`) || !strings.Contains(err.Error(), `field "t"`) {
		t.Fatalf("Send: %d %v", n, err)
	}
	recs := pollRecords(t, lib, c, "temps", 1)
	if err := recs[0].Err(); err != nil || value.Format(recs[0].Value()) != `("t" => 21.5 "unit" => "F")` {
		t.Errorf("read %s, %v", value.Format(recs[0].Value()), err)
	}
	if b := recs[0].ValueBytes(); b[0] != 0 || b[5] != 0 {
		t.Errorf("header %x, want the magic byte, the id and index [0] as one 0 byte", b[:6])
	}
	// value-schema-full-name (Confluent's dotted spelling too) picks the
	// message written; a value that is not a name is refused, naming the
	// key.
	schema = `syntax = "proto3"; package iot; message Reading { double t = 1; } message Alarm { string text = 1; }`
	p = must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-serializer": "Protobuf",
		"value-schema": schema, "value.schema.full.name": "iot.Alarm"}))
	c = must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-deserializer": "Protobuf", "auto-offset-reset": "earliest", "topics": "alarms"}))
	if _, err := lib.Send(ctx, p, []string{"alarms"}, []Message{{Value: bplValue(t, `("text" => "hot")`)}}); err != nil {
		t.Fatal(err)
	}
	recs = pollRecords(t, lib, c, "alarms", 1)
	if err := recs[0].Err(); err != nil || value.Format(recs[0].Value()) != `("text" => "hot")` || !bytes.Equal(recs[0].ValueBytes()[5:7], []byte{2, 2}) {
		t.Errorf("read %s, %v, header % x", value.Format(recs[0].Value()), err, recs[0].ValueBytes()[:7])
	}
	_, err = lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-serializer": "Protobuf", "value-schema-full-name": int64(3)})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `"value-schema-full-name"`) {
		t.Errorf("a number for the name: %v", err)
	}
	_, err = lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "key-serializer": "Protobuf",
		"key-schema": schema, "key.schema.full.name": "iot.Nope"})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `config "key-schema-full-name": the schema has no message "iot.Nope"; it has iot.Reading, iot.Alarm`) {
		t.Errorf("a key's message the schema lacks: %v", err)
	}
}

// TestJSONSchemaThroughRegistry: JSON Schema records through a registry,
// with a reference, the value that does not fit failing alone.
func TestJSONSchemaThroughRegistry(t *testing.T) {
	t.Parallel()
	servers := newCluster(t).Servers()
	reg := newRegistryFake(t)
	if _, _, err := reg.RegisterSchema("unit", sr.Schema{Schema: `{"type":"string","enum":["C","F"]}`, Type: sr.TypeJSON}); err != nil {
		t.Fatal(err)
	}
	id, _, err := reg.RegisterSchema("temps-value", sr.Schema{Schema: `{"type":"object","properties":{"t":{"type":"number"},"unit":{"$ref":"unit.json"}}}`,
		Type: sr.TypeJSON, References: []sr.SchemaReference{{Name: "unit.json", Subject: "unit", Version: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	lib := newLib(t)
	ctx := testCtx(t)
	p := must[string](t)(lib.Create(ctx, Producer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-serializer": "io.confluent.kafka.serializers.json.KafkaJsonSchemaSerializer", "use-latest-version": true}))
	c := must[string](t)(lib.Create(ctx, Consumer, map[string]any{"servers": servers, "schema-registry-url": reg.URL(), "value-deserializer": "JSON-Schema", "auto-offset-reset": "earliest"}))
	n, err := lib.Send(ctx, p, []string{"temps"}, []Message{{Value: bplValue(t, `("t" => 21.5 "unit" => "C")`)}, {Value: bplValue(t, `("t" => 70 "unit" => "K")`)}})
	var se *SendError
	if n != 1 || !errors.As(err, &se) || se.Failed[0].Message != 1 || !strings.Contains(err.Error(), `the JSON Schema serializer cannot encode`) || !strings.Contains(err.Error(), `field "unit"`) {
		t.Fatalf("Send: %d %v", n, err)
	}
	recs := pollRecords(t, lib, c, "temps", 1)
	if err := recs[0].Err(); err != nil || value.Format(recs[0].Value()) != `("t" => 21.5 "unit" => "C")` {
		t.Errorf("read %s, %v", value.Format(recs[0].Value()), err)
	}
	if b := recs[0].ValueBytes(); b[4] != byte(id) || string(b[5:]) != `{"t":21.5,"unit":"C"}` {
		t.Errorf("wire bytes %q, want id %d then the JSON", b, id)
	}
}
