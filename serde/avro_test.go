package serde

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/sr"
)

// avroAll has a field of every kind the codec maps.
const avroAll = `{"type":"record","name":"Reading","namespace":"iot","fields":[
 {"name":"id","type":"long"},
 {"name":"n","type":"int"},
 {"name":"ok","type":"boolean"},
 {"name":"temp","type":"double"},
 {"name":"f","type":"float"},
 {"name":"name","type":"string"},
 {"name":"raw","type":"bytes"},
 {"name":"nothing","type":"null"},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"unit","type":{"type":"enum","name":"Unit","symbols":["C","F"]}},
 {"name":"mac","type":{"type":"fixed","name":"Mac","size":6}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"long"}},
 {"name":"where","type":["null","string",{"type":"record","name":"Point","fields":[{"name":"x","type":"double"},{"name":"y","type":"double"}]}]},
 {"name":"next","type":["null","Reading"],"default":null},
 {"name":"note","type":"string","default":"none"}
]}`

func mustAvro(t testing.TB, schema string) *avroCodec {
	t.Helper()
	c, err := compileAvro(t.Context(), nil, sr.Schema{Schema: schema, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*avroCodec)
}

func mustParseBPL(t testing.TB, text string) any {
	t.Helper()
	vs, err := value.Parse(text)
	if err != nil || len(vs) != 1 {
		t.Fatalf("value.Parse(%s): %v", text, err)
	}
	return vs[0]
}

// TestAvroRoundTrip writes BPL values, checks the bytes against
// twmb/avro's own encoding of the same values as Go values, and reads
// them back.
func TestAvroRoundTrip(t *testing.T) {
	t.Parallel()
	c := mustAvro(t, avroAll)
	in := mustParseBPL(t, `("id" => 9007199254740993 "n" => -5 "ok" => true "temp" => 21.5 "f" => 0.1 "name" => "s1"
		"raw" => "AQID" "nothing" => null "day" => 1700006400000 "at" => 1700000000123 "price" => "12.34"
		"unit" => "F" "mac" => "abcdef" "tags" => ("a" "b") "attrs" => ("x" => 1)
		"where" => ("x" => 1.5 "y" => -2.0) "next" => ("id" => 1 "n" => 0 "ok" => false "temp" => 0.0 "f" => 0.0 "name" => ""
		"raw" => "" "nothing" => null "day" => 0 "at" => 0 "price" => "0" "unit" => "C" "mac" => "zzzzzz" "tags" => () "attrs" => ()
		"where" => null) "note" => "n")`)
	b, err := c.appendEncode(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(value.Format(in), `"raw" => "AQID"`, `"raw" => `+value.Format([]byte("AQID")), 1)
	want = strings.Replace(want, `"mac" => "abcdef"`, `"mac" => `+value.Format([]byte("abcdef")), 1)
	want = strings.Replace(want, `"raw" => ""`, `"raw" => `+value.Format([]byte{}), 1)
	want = strings.Replace(want, `"mac" => "zzzzzz"`, `"mac" => `+value.Format([]byte("zzzzzz")), 1)
	want = strings.Replace(want, `"price" => "0"`, `"price" => "0.00"`, 1)
	want = strings.Replace(want, `"where" => null)`, `"where" => null "next" => null "note" => "none")`, 1) // the inner record's defaults
	if value.Format(got) != want {
		t.Errorf("read back\n%s\nwant\n%s", value.Format(got), want)
	}
	// The same record as twmb/avro writes it from Go values.
	ref, err := avro.Parse(avroAll)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if _, err := ref.Decode(b, &generic); err != nil {
		t.Fatalf("twmb/avro cannot read our bytes: %v", err)
	}
	again, err := ref.Encode(generic)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("twmb/avro writes\n%x\nwe wrote\n%x", again, b)
	}
	// Missing fields with defaults, and the null-first union, fill in.
	short := mustParseBPL(t, `("id" => 1 "n" => 2 "ok" => true "temp" => 1 "f" => 1 "name" => "x" "raw" => "" "nothing" => null
		"day" => "2024-02-29" "at" => "2024-02-29T12:00:00Z" "price" => 1.006 "unit" => "C" "mac" => "123456" "tags" => () "attrs" => () "where" => "here")`)
	b, err = c.appendEncode(nil, short)
	if err != nil {
		t.Fatal(err)
	}
	got, err = c.decode(b)
	if err != nil {
		t.Fatal(err)
	}
	l := got.(*value.List)
	for name, want := range map[string]string{"next": "null", "note": `"none"`, "day": "1709164800000", "at": "1709208000000", "price": `"1.01"`, "where": `"here"`, "temp": "1"} {
		if v, _ := l.Get(name); value.Format(v) != want {
			t.Errorf("%s = %s, want %s", name, value.Format(v), want)
		}
	}
}

func TestAvroEncodeErrors(t *testing.T) {
	t.Parallel()
	c := mustAvro(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},
		{"name":"inner","type":{"type":"record","name":"I","fields":[{"name":"xs","type":{"type":"array","items":"long"}}]}},
		{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]},"default":"A"}]}`)
	for _, tt := range []struct{ in, want string }{
		{`("a" => "x" "inner" => ("xs" => ()))`, `field "a": want an int (32 bits), got the string "x"`},
		{`("a" => 4294967296 "inner" => ("xs" => ()))`, `field "a": want an int (32 bits)`},
		{`("a" => 1 "inner" => ("xs" => (1 2 "three")))`, `field "inner.xs[2]": want a long (an integer), got the string "three"`},
		{`("a" => 1)`, `field "inner": missing, and it has no default`},
		{`("a" => 1 "inner" => ("xs" => ()) "b" => 2)`, `field "b": not a field of record R`},
		{`("a" => 1 "inner" => ("xs" => ()) "e" => "C")`, `field "e": want one of the symbols of enum E (A B), got the string "C"`},
		{`(1 2)`, `want a list with names (record R)`},
	} {
		_, err := c.appendEncode(nil, mustParseBPL(t, tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.in, err, tt.want)
		}
		var ae *avroError
		if !errors.As(err, &ae) {
			t.Errorf("%s: %T, want an *avroError", tt.in, err)
		}
	}
}

// TestAvroDecimalAndUUID: a decimal with more digits than its precision
// is refused, as fastavro refuses it, rather than sent for a reader to
// cut; a uuid string must be a UUID's text.
func TestAvroDecimalAndUUID(t *testing.T) {
	t.Parallel()
	c := mustAvro(t, `{"type":"record","name":"R","fields":[
		{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}},
		{"name":"f","type":{"type":"fixed","name":"F","size":8,"logicalType":"decimal","precision":3,"scale":0},"default":"\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000"},
		{"name":"id","type":["null",{"type":"string","logicalType":"uuid"}],"default":null},
		{"name":"u","type":{"type":"string","logicalType":"uuid"},"default":"00000000-0000-0000-0000-000000000000"}]}`)
	for _, in := range []string{
		`("d" => "12.34" "f" => "999" "id" => "123e4567-e89b-12d3-a456-426614174000" "u" => "00000000-0000-0000-0000-000000000000")`,
		`("d" => "-99.99" "f" => "-999" "id" => "123E4567-E89B-12D3-A456-426614174000" "u" => "00000000-0000-0000-0000-000000000000")`,
		`("d" => "0.00" "f" => "0" "id" => null "u" => "00000000-0000-0000-0000-000000000000")`,
	} {
		b, err := c.appendEncode(nil, mustParseBPL(t, in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got, err := c.decode(b); err != nil || value.Format(got) != in {
			t.Errorf("%s read back as %s, %v", in, value.Format(got), err)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{`("d" => "123.45")`, `field "d": want a decimal of at most 4 digits, 2 of them after the point (decimal(4,2)), got the string "123.45"`},
		{`("d" => 100)`, `field "d": want a decimal of at most 4 digits`},
		{`("d" => 99.995)`, `field "d": want a decimal of at most 4 digits`}, // rounds to 100.00
		{`("d" => "1.234")`, `field "d": want a decimal with at most 2 digits after the point`},
		{`("d" => 1 "f" => -1000)`, `field "f": want a decimal of at most 3 digits, 0 of them after the point (decimal(3,0)), got -1000`},
		{`("d" => 1 "u" => "123e4567e89b12d3a456426614174000")`, `field "u": want a UUID, as text of 32 hex digits in groups of 8-4-4-4-12 ("123e4567-e89b-12d3-a456-426614174000"), got the string "123e4567e89b12d3a456426614174000"`},
		{`("d" => 1 "u" => "123e4567-e89b-12d3-a456-42661417400g")`, `field "u": want a UUID`},
		{`("d" => 1 "u" => "")`, `field "u": want a UUID`},
		{`("d" => 1 "id" => "123e4567-e89b-12d3-a456-42661417400g")`, `field "id": want one of the union's types (null uuid), got the string "123e4567-e89b-12d3-a456-42661417400g"`},
	} {
		_, err := c.appendEncode(nil, mustParseBPL(t, tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestAvroDecodeErrors: bytes that do not decode say where and why.
func TestAvroDecodeErrors(t *testing.T) {
	t.Parallel()
	c := mustAvro(t, `{"type":"record","name":"R","fields":[{"name":"s","type":"string"},{"name":"u","type":["null","long"]}]}`)
	for _, tt := range []struct {
		in   []byte
		want string
	}{
		{[]byte{}, "at byte 0: the data ends inside a number"},
		{[]byte{20, 'a'}, "at byte 1: string of 10 bytes, but 1 are left"},
		{[]byte{2, 'a', 6}, "at byte 3: the union has no branch 3"},
		{[]byte{2, 'a', 0, 9}, "at byte 3: 1 bytes after the value"},
		{[]byte{2, 0xff, 0}, "not UTF-8"},
	} {
		_, err := c.decode(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%x: %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestAvroEvolution: a record written with v1 is read with v2's reader
// schema: the new field gets its default, the widened type its value.
func TestAvroEvolution(t *testing.T) {
	t.Parallel()
	v1 := mustAvro(t, `{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":"int"},{"name":"gone","type":"string"}]}`)
	v2 := mustAvro(t, `{"type":"record","name":"User","fields":[{"name":"email","type":"string","default":"-"},{"name":"age","type":"long"},{"name":"name","type":"string"}]}`)
	b, err := v1.appendEncode(nil, mustParseBPL(t, `("name" => "ann" "age" => 31 "gone" => "x")`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := v1.resolve(v2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if s := value.Format(got); s != `("email" => "-" "age" => 31 "name" => "ann")` {
		t.Errorf("v1 read as v2: %s", s)
	}
	if same, _ := v1.resolve(mustAvro(t, v1.schema.String())); same != v1 {
		t.Error("resolving a schema against itself made a new codec")
	}
	bad := mustAvro(t, `{"type":"record","name":"User","fields":[{"name":"id","type":"long"}]}`)
	if _, err := v1.resolve(bad); err == nil {
		t.Error("v1 resolved against a reader with a field it lacks and no default")
	}
}

func FuzzAvroDecode(f *testing.F) {
	c := mustAvro(f, avroAll)
	seed, err := c.appendEncode(nil, mustParseBPL(f, `("id" => 1 "n" => 2 "ok" => true "temp" => 1 "f" => 1 "name" => "x" "raw" => "" "nothing" => null
		"day" => 0 "at" => 0 "price" => 1 "unit" => "C" "mac" => "123456" "tags" => ("t") "attrs" => ("k" => 1) "where" => ("x" => 1 "y" => 2))`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := c.decode(b)
		if err != nil {
			return
		}
		// What decodes encodes again to the same bytes, but a decimal
		// wider than its precision: read as written, never written.
		again, err := c.appendEncode(nil, v)
		if err != nil && strings.Contains(err.Error(), "want a decimal of at most") {
			return
		}
		if err != nil {
			t.Fatalf("decoded %s, cannot encode it: %v", value.Format(v), err)
		}
		if v2, err := c.decode(again); err != nil || value.Format(v2) != value.Format(v) {
			t.Fatalf("%s re-encoded reads %v, %v", value.Format(v), v2, err)
		}
	})
}
