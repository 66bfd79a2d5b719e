package serde

import (
	"bytes"
	"errors"
	"math"
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

// TestProtobufUint64: a uint64 above an int64's range reads as its
// decimal text and writes back exactly; a float there, which BPL makes of
// an integer too big for an int64 and which has lost digits, is refused.
func TestProtobufUint64(t *testing.T) {
	t.Parallel()
	c := mustProto(t, `syntax = "proto3"; message U { uint64 u = 1; fixed64 f = 2; map<uint64, string> m = 3; }`)
	for _, in := range []string{
		`("u" => "18446744073709551615" "f" => "9223372036854775809" "m" => ("18446744073709551615" => "max"))`,
		`("u" => 9223372036854775807 "f" => 0 "m" => ("1" => "one"))`,
	} {
		b, err := c.appendEncode([]byte{0}, mustParseBPL(t, in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, err := c.decode(b)
		if err != nil || value.Format(got) != in {
			t.Errorf("%s read back as %s, %v", in, value.Format(got), err)
		}
		if again, err := c.appendEncode([]byte{0}, got); err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s written again: % x, %v; want % x", in, again, err, b)
		}
	}
	// A Go uint64, which a BPL integer cannot hold, goes in as it is.
	b, err := c.appendEncode(nil, value.NewList().AppendNamed("u", uint64(math.MaxUint64)))
	if got, _ := c.decode(append([]byte{0}, b...)); err != nil || value.Format(got) != `("u" => "18446744073709551615" "f" => 0 "m" => ())` {
		t.Errorf("a Go uint64: %s, %v", value.Format(got), err)
	}
	for _, tt := range []struct{ in, want string }{
		{`("u" => 9223372036854775809)`, `field "u": want a uint64; one above 9223372036854775807 as its decimal text ("18446744073709551615"), since a number that big is a float that has lost digits, got 9.223372036854776E18`},
		{`("u" => 18446744073709551615)`, `field "u": want a uint64; one above`},
		{`("u" => "18446744073709551616")`, `field "u": want a uint64 (0 to 18446744073709551615; above 9223372036854775807 as decimal text), got the string "18446744073709551616"`},
		{`("f" => -1)`, `field "f": want a uint64 (0 to`},
		{`("m" => ("-1" => "x"))`, `field "m.-1": want a uint64 (0 to`},
	} {
		if _, err := c.appendEncode(nil, mustParseBPL(t, tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.in, err, tt.want)
		}
	}
}
