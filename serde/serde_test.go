package serde

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// TestSerdeJavaBytes checks the encodings against the bytes Java's
// serializers write (big-endian two's complement and IEEE 754).
func TestSerdeJavaBytes(t *testing.T) {
	tests := []struct {
		serde string
		in    any
		hex   string
		out   any // what decoding gives back
	}{
		{"StringSerializer", "héllo", "68c3a96c6c6f", "héllo"},
		{"String", int64(42), "3432", "42"},
		{"String", 2.5, "322e35", "2.5"},
		{"String", true, "74727565", "true"},
		{"ByteArraySerializer", []byte{0, 1, 255}, "0001ff", []byte{0, 1, 255}},
		{"ShortSerializer", int64(256), "0100", int64(256)},
		{"Short", int64(-2), "fffe", int64(-2)},
		{"IntegerSerializer", int64(1), "00000001", int64(1)},
		{"Integer", int64(-1), "ffffffff", int64(-1)},
		{"Integer", int64(math.MinInt32), "80000000", int64(math.MinInt32)},
		{"Integer", "12", "0000000c", int64(12)},  // a message name is text
		{"Integer", "010", "0000000a", int64(10)}, // decimal, as Java reads it
		{"Long", "-7", "fffffffffffffff9", int64(-7)},
		{"Integer", 3.0, "00000003", int64(3)},
		{"LongSerializer", int64(math.MaxInt64), "7fffffffffffffff", int64(math.MaxInt64)},
		{"Long", int64(-1), "ffffffffffffffff", int64(-1)},
		{"FloatSerializer", 1.5, "3fc00000", 1.5},
		{"Float", int64(-2), "c0000000", -2.0},
		// Java's 0.1f; it reads as 0.1, as Java prints it, not as the
		// widened 0.10000000149011612.
		{"Float", 0.1, "3dcccccd", 0.1},
		{"Float", 3.4028234663852886e38, "7f7fffff", 3.4028235e38},
		{"Float", 1.401298464324817e-45, "00000001", 1e-45},
		{"Float", math.Inf(-1), "ff800000", math.Inf(-1)},
		{"DoubleSerializer", 1.5, "3ff8000000000000", 1.5},
		{"Double", math.Inf(-1), "fff0000000000000", math.Inf(-1)},
		{"JSON", value.NewList().AppendNamed("b", int64(1)).AppendNamed("a", value.NewList("x", 2.5, nil, true)), `7b2262223a312c2261223a5b2278222c322e352c6e756c6c2c747275655d7d`, value.NewList().AppendNamed("b", int64(1)).AppendNamed("a", value.NewList("x", 2.5, nil, true))},
		{"JSON", 3.0, "332e30", 3.0},
		{"JSON", value.NewList(), "5b5d", value.NewList()},
	}
	for _, tt := range tests {
		s := Lookup(tt.serde)
		if s == nil {
			t.Fatalf("no serde %q", tt.serde)
		}
		b, err := s.Encode(t.Context(), "", tt.in, 1, "")
		if err != nil {
			t.Errorf("%s encode %s: %v", tt.serde, value.Format(tt.in), err)
			continue
		}
		if got := hex.EncodeToString(b); got != tt.hex {
			t.Errorf("%s encode %s = %s, want %s", tt.serde, value.Format(tt.in), got, tt.hex)
		}
		v, err := s.Decode(t.Context(), "", b, "value")
		if err != nil || !equalValues(v, tt.out) {
			t.Errorf("%s decode %s = %s, %v; want %s", tt.serde, tt.hex, value.Format(v), err, value.Format(tt.out))
		}
		// What was read sends the same bytes again.
		if again, err := s.Encode(t.Context(), "", v, 1, ""); err != nil || hex.EncodeToString(again) != tt.hex {
			t.Errorf("%s: %s read from %s encodes to %x, %v", tt.serde, value.Format(v), tt.hex, again, err)
		}
	}
}

func TestSerdeNull(t *testing.T) {
	for name, s := range byName {
		b, err := s.Encode(t.Context(), "", nil, 1, "")
		if b != nil || err != nil {
			t.Errorf("%s: nil encodes to %v, %v", name, b, err)
		}
		v, err := s.Decode(t.Context(), "", nil, "value")
		if v != nil || err != nil {
			t.Errorf("%s: null decodes to %v, %v", name, v, err)
		}
	}
}

func TestSerdeErrors(t *testing.T) {
	enc := []struct {
		serde string
		in    any
		want  string
	}{
		{"String", value.NewList("a"), "use the JSON or BPL serializer"},
		{"Integer", int64(1 << 31), "out of range"},
		{"Short", int64(-40000), "out of range"},
		{"Integer", 1.5, "not an integer"},
		{"Long", "abc", "not an integer"},
		{"Integer", "0x10", "not an integer"},
		{"Short", "1_000", "not an integer"},
		{"Float", 1e300, "out of a Float's range"},
		{"Double", value.NewList(), "not a number"},
		{"ByteArray", int64(1), "want a byte array"},
		{"JSON", math.NaN(), "JSON has no NaN"},
		{"JSON", value.NewList("a").AppendNamed("k", "v"), "element 0 has no name"},
		{"JSON", []byte{0xff}, "not UTF-8"},
	}
	for _, tt := range enc {
		_, err := Lookup(tt.serde).Encode(t.Context(), "", tt.in, 3, "")
		if err == nil || !strings.Contains(err.Error(), "message 3: the "+Lookup(tt.serde).name+" serializer cannot encode") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %s: %v, want %q", tt.serde, value.Format(tt.in), err, tt.want)
		}
	}
	dec := []struct {
		serde string
		in    []byte
		want  string
	}{
		{"Integer", []byte{1, 2, 3}, "want 4 bytes"},
		{"Long", []byte{}, "want 8 bytes"},
		{"Short", []byte{1}, "want 2 bytes"},
		{"Float", []byte{1, 2}, "want 4 bytes"},
		{"Double", []byte{1}, "want 8 bytes"},
		{"JSON", []byte(`{"a":`), "ends too soon"},
		{"JSON", []byte(`1 2`), "text after the JSON value"},
		{"JSON", []byte(``), "ends too soon"},
	}
	for _, tt := range dec {
		_, err := Lookup(tt.serde).Decode(t.Context(), "", tt.in, "value")
		if cerr := Lookup(tt.serde).Check(t.Context(), "", tt.in, "value"); fmt.Sprint(cerr) != fmt.Sprint(err) {
			t.Errorf("%s %x: check says %v, decode says %v", tt.serde, tt.in, cerr, err)
		}
		if err == nil || !strings.Contains(err.Error(), "value: the "+Lookup(tt.serde).name+" deserializer cannot decode") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %x: %v, want %q", tt.serde, tt.in, err, tt.want)
		}
		if !errors.Is(err, ErrDeserialization) {
			t.Errorf("%s %x: %v does not wrap ErrDeserialization", tt.serde, tt.in, err)
		}
	}
}

// TestSerdeJSONKeepsOrderAndRepeats checks that objects keep their member
// order and repeated names both ways.
func TestSerdeJSONKeepsOrderAndRepeats(t *testing.T) {
	in := `{"z":1,"a":{"k":[1,2.5e3,"x"]},"z":null,"big":9223372036854775808}`
	v, err := JSON.decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := value.Format(v); got != `("z" => 1 "a" => ("k" => (1 2500 "x")) "z" => null "big" => 9.223372036854776E18)` {
		t.Errorf("decoded %s", got)
	}
	b, err := JSON.encode(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":1,"a":{"k":[1,2500.0,"x"]},"z":null,"big":9.223372036854776e+18}`; string(b) != want {
		t.Errorf("encoded %s, want %s", b, want)
	}
}

// TestSerdeBPL checks the BPL serializer writes canonical text and reads
// one expression back.
func TestSerdeBPL(t *testing.T) {
	v := value.NewList().AppendNamed("t", 21.5).AppendNamed("unit", "C").Append(value.NewList(int64(1), nil))
	b, err := BPL.encode(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `("t" => 21.5 "unit" => "C" (1 null))`; string(b) != want {
		t.Errorf("encoded %s, want %s", b, want)
	}
	back, err := BPL.decode(b)
	if err != nil || !equalValues(back, v) {
		t.Errorf("decoded %s, %v", value.Format(back), err)
	}
	if _, err := BPL.decode([]byte("1 2")); err == nil {
		t.Error("two expressions decoded without error")
	}
	// brain4it's tags: a shared list reads back shared and writes back
	// the same; one that contains itself is refused.
	shared, err := BPL.decode([]byte(`((<#1> 1) <@1>)`))
	if l, ok := shared.(*value.List); err != nil || !ok || l.At(0) != l.At(1) {
		t.Errorf("a shared list decoded as %v, %v", shared, err)
	}
	if b, _ := BPL.encode(shared); string(b) != `((<#1> 1) <@1>)` {
		t.Errorf("a shared list encoded as %s", b)
	}
	if v, err := BPL.decode([]byte(`(<#1> 1 <@1>)`)); err == nil {
		t.Errorf("a list that contains itself decoded as %p, no error", v)
	}
}

// TestStringBytesShares checks the zero-copy conversion used on the send
// path gives the string's bytes.
func TestStringBytesShares(t *testing.T) {
	s := strings.Repeat("ab", 3)
	if b := stringBytes(s); !bytes.Equal(b, []byte("ababab")) {
		t.Errorf("got %q", b)
	}
	if b := stringBytes(""); b == nil || len(b) != 0 {
		t.Errorf("empty string gave %#v, want empty and not nil (nil is null)", b)
	}
}

// TestSerdeJSONHugeNumbers checks that a number too large for a float64,
// valid JSON, decodes as ±Infinity (as Java's Double.parseDouble reads it)
// rather than failing after checkJSON accepted it, which used to hand the
// raw text to the caller as if it were the decoded value.
func TestSerdeJSONHugeNumbers(t *testing.T) {
	in := []byte(`{"a": 1, "b": [1, 2.0, 1e400, -1e400, 1e-400]}`)
	if err := checkJSON(in); err != nil {
		t.Fatalf("checkJSON: %v", err)
	}
	v, err := decodeJSON(in)
	if err != nil {
		t.Fatalf("decodeJSON: %v", err)
	}
	if got := value.Format(v); got != `("a" => 1 "b" => (1 2 Infinity -Infinity 0))` {
		t.Errorf("got %s", got)
	}
}

// equalValues reports whether two BPL values are equal, as List.Equal
// compares elements.
func equalValues(a, b any) bool { return value.NewList(a).Equal(value.NewList(b)) }

// FuzzJSON checks the JSON serde against itself: whatever checkJSON
// accepts (it decides whether a polled record is reported undecodable)
// decodes, and whatever decodes encodes to JSON that decodes to the same
// BPL value, unless it holds a value JSON has no form for.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1,2.5,"x",null,true]}`, `1e400`, `"\u00e9\ud83d\ude00"`, `{"z":1,"z":2}`, `[[],{}]`, `-0`, `9223372036854775808`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeJSON(b)
		if cerr := checkJSON(b); (cerr == nil) != (err == nil) {
			t.Fatalf("checkJSON says %v, decodeJSON says %v", cerr, err)
		}
		if err != nil {
			return
		}
		out, err := encodeJSON(v)
		if err != nil {
			return // NaN, ±Infinity: no JSON form
		}
		back, err := decodeJSON(out)
		if err != nil {
			t.Fatalf("%s encodes to %s, which does not decode: %v", b, out, err)
		}
		if value.Format(back) != value.Format(v) {
			t.Fatalf("%s: decoded %s, encoded %s, decoded again %s", b, value.Format(v), out, value.Format(back))
		}
	})
}
