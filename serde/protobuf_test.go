package serde

import (
	"errors"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

const readingProto = `syntax = "proto3";
package iot;
import "google/protobuf/timestamp.proto";
message Reading {
  string device = 1;
  double temperature = 2;
  repeated string alarms = 3;
  map<string, int64> counters = 4;
  Unit unit = 5;
  Where where = 6;
  bytes raw = 7;
  google.protobuf.Timestamp at = 8;
  oneof extra { string note = 9; int32 code = 10; }
  optional float humidity = 11;
  message Where { double x = 1; double y = 2; }
}
enum Unit { C = 0; F = 1; }
`

// mustProto compiles text; files are the files it imports, by name,
// each followed by its text.
func mustProto(t testing.TB, text string, files ...string) *protobufCodec {
	t.Helper()
	m := map[string]string{protoMainFile: text}
	for i := 0; i+1 < len(files); i += 2 {
		m[files[i]] = files[i+1]
	}
	c, err := compileProtoFiles(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestProtobufCodec(t *testing.T) {
	t.Parallel()
	c := mustProto(t, readingProto)
	if c.fullName() != "iot.Reading" {
		t.Errorf("fullName %q", c.fullName())
	}
	in := mustParseBPL(t, `("device" => "b1" "temperature" => 71.5 "alarms" => ("hot" "dry") "counters" => ("b" => 2 "a" => 1)
		"unit" => "F" "where" => ("x" => 1.5 "y" => 2) "raw" => "xyz" "at" => ("seconds" => 1700000000 "nanos" => 5) "code" => 7 "humidity" => 0.1)`)
	b, err := c.appendEncode([]byte{0}, in) // the index byte the header writes for [0]
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `("device" => "b1" "temperature" => 71.5 "alarms" => ("hot" "dry") "counters" => ("a" => 1 "b" => 2) "unit" => "F" "where" => ("x" => 1.5 "y" => 2) "raw" => "xyz" "at" => ("seconds" => 1700000000 "nanos" => 5) "code" => 7 "humidity" => 0.1)`
	if value.Format(got) != want {
		t.Errorf("read back\n%s\nwant\n%s", value.Format(got), want)
	}
	empty, err := c.decode([]byte{0})
	if err != nil || value.Format(empty) != `("device" => "" "temperature" => 0 "alarms" => () "counters" => () "unit" => "C" "where" => null "raw" => "" "at" => null "humidity" => null)` {
		t.Errorf("empty message: %s %v", value.Format(empty), err)
	}
	// A nested message by its indexes: [0, 0] is Reading.Where.
	nested := mustProto(t, readingProto)
	wb, err := (&protobufCodec{file: nested.file, msg: pbDeclared(nested.msg.Messages(), 0)}).appendEncode([]byte{4, 0, 0}, mustParseBPL(t, `("x" => 3 "y" => 4)`))
	if err != nil {
		t.Fatal(err)
	}
	if w, err := c.decode(wb); err != nil || value.Format(w) != `("x" => 3 "y" => 4)` {
		t.Errorf("Reading.Where by index [0 0]: %s %v", value.Format(w), err)
	}
	for _, tt := range []struct{ in, want string }{
		{`("device" => 1)`, `field "device": want a string, got 1`},
		{`("alarms" => ("a" 2))`, `field "alarms[1]": want a string, got 2`},
		{`("where" => ("x" => "far"))`, `field "where.x": want a number, got the string "far"`},
		{`("unit" => "K")`, `field "unit": want one of the values of enum iot.Unit (C F), got the string "K"`},
		{`("nope" => 1)`, `field "nope": not a field of message iot.Reading`},
		{`("counters" => ("a" => "x"))`, `field "counters.a": want an int64, got the string "x"`},
	} {
		_, err := c.appendEncode(nil, mustParseBPL(t, tt.in))
		var ae *avroError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &ae) {
			t.Errorf("%s: %v, want %q", tt.in, err, tt.want)
		}
	}
	for _, bad := range [][]byte{{}, {2, 6}, {0, 0xff}} {
		if _, err := c.decode(bad); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}

func FuzzProtobufDecode(f *testing.F) {
	c := mustProto(f, readingProto)
	seed, err := c.appendEncode([]byte{0}, mustParseBPL(f, `("device" => "b1" "alarms" => ("x") "counters" => ("k" => 1) "where" => ("x" => 1) "note" => "n")`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{2, 0, 0x0a, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := c.decode(b)
		if err != nil {
			return
		}
		if len(b) > 0 && b[0] == 0 { // the first message: what decodes encodes again
			if _, err := c.appendEncode(nil, v); err != nil {
				t.Fatalf("decoded %s, cannot encode it: %v", value.Format(v), err)
			}
		}
	})
}
