package serde

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
	c, err := compileJSONSchema(t.Context(), nil, sr.Schema{Schema: readingJSONSchema, Type: sr.TypeJSON})
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
	if _, err := compileJSONSchema(t.Context(), nil, sr.Schema{Schema: `{"$ref":"http://192.0.2.1/x.json"}`, Type: sr.TypeJSON}); err == nil || !strings.Contains(err.Error(), "neither part of the schema nor one of its references") {
		t.Errorf("remote $ref: %v", err)
	}
}

// TestJSONSchemaEmptyObject: {} reads as BPL's one empty list, (), and
// is written back as {} where the schema wants an object, [] where it
// wants an array; where it wants neither, the error is the schema's.
func TestJSONSchemaEmptyObject(t *testing.T) {
	t.Parallel()
	c, err := compileJSONSchema(t.Context(), nil, sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"object","properties":{
	 "meta":{"type":"object"},"tags":{"type":"array"},"rows":{"type":"array","items":{"type":"object"}},
	 "either":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/obj"}]},"name":{"type":"string"}},
	 "$defs":{"obj":{"type":"object"}}}`})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		`{"meta":{},"tags":[],"rows":[{},{"a":1},{}],"either":{}}`,
		`{}`,
	} {
		v, err := c.decode([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.appendEncode(nil, v)
		if err != nil || string(b) != text {
			t.Errorf("%s read as %s and written %s, %v", text, value.Format(v), b, err)
		}
	}
	if _, err := c.appendEncode(nil, mustParseBPL(t, `("name" => ())`)); err == nil || !strings.Contains(err.Error(), `field "name": got array, want string`) {
		t.Errorf("() for a string: %v", err)
	}
}

func FuzzJSONSchemaDecode(f *testing.F) {
	c, err := compileJSONSchema(f.Context(), nil, sr.Schema{Schema: readingJSONSchema, Type: sr.TypeJSON})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"device":"b1","temperature":1}`))
	f.Add([]byte(`[1,{"a":null}]`))
	f.Add([]byte(`{"device":{},"temperature":[],"alarms":[{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Any bytes: a value or an error, never a panic or a hang. (What
		// decodes need not encode again: {"": 1} has a member without a
		// name, which a list with names cannot hold, as with JSON.)
		v, err := c.decode(b)
		if err == nil && v == nil && string(b) != "null" && strings.TrimSpace(string(b)) != "null" {
			t.Fatalf("%q decoded to null", b)
		}
		// Written back, it fits the schema or is an error, never a panic
		// (empty lists are tried as objects where the schema wants one).
		if err == nil {
			c.appendEncode(nil, v)
		}
	})
}
