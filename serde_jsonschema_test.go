package kafkabpl

import (
	"errors"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/sr"
)

const readingJSONSchema = `{"title":"iot.Reading","type":"object","properties":{
 "device":{"type":"string"},"temperature":{"type":"number"},
 "alarms":{"type":"array","items":{"type":"string"}}},
 "required":["device","temperature"],"additionalProperties":false}`

func TestJSONSchemaCodec(t *testing.T) {
	t.Parallel()
	c, err := compileJSONSchema(nil, sr.Schema{Schema: readingJSONSchema, Type: sr.TypeJSON})
	if err != nil {
		t.Fatal(err)
	}
	if c.fullName() != "iot.Reading" {
		t.Errorf("fullName %q", c.fullName())
	}
	in := mustParseBPL(t, `("device" => "b1" "temperature" => 71.5 "alarms" => ("hot"))`)
	b, err := c.appendEncode([]byte{9}, in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[1:]) != `{"device":"b1","temperature":71.5,"alarms":["hot"]}` || b[0] != 9 {
		t.Errorf("wrote %q", b)
	}
	back, err := c.decode(b[1:])
	if err != nil || value.Format(back) != value.Format(in) {
		t.Errorf("read back %s, %v", value.Format(back), err)
	}
	for _, tt := range []struct{ in, want string }{
		{`("device" => "b1" "temperature" => "hot")`, `field "temperature": got string, want number`},
		{`("device" => "b1" "temperature" => 1 "alarms" => ("a" 2))`, `field "alarms[1]": got number, want string`},
		{`("device" => "b1")`, `missing property 'temperature'`},
		{`("device" => "b1" "temperature" => 1 "extra" => 1)`, `additional properties 'extra' not allowed`},
	} {
		_, err := c.appendEncode(nil, mustParseBPL(t, tt.in))
		var ae *avroError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &ae) {
			t.Errorf("%s: %v, want %q", tt.in, err, tt.want)
		}
	}
	// A $ref to anything but the schema itself or its references is
	// refused, never fetched.
	if _, err := compileJSONSchema(nil, sr.Schema{Schema: `{"$ref":"http://192.0.2.1/x.json"}`, Type: sr.TypeJSON}); err == nil || !strings.Contains(err.Error(), "neither part of the schema nor one of its references") {
		t.Errorf("remote $ref: %v", err)
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
	n, err := lib.Send(ctx, p, []string{"temps"}, []Message{{Value: mustParseBPL(t, `("t" => 21.5 "unit" => "C")`)}, {Value: mustParseBPL(t, `("t" => 70 "unit" => "K")`)}})
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
