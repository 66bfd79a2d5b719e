package serde

import (
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
)

// BenchmarkProtobuf and BenchmarkJSONSchema time the payload's encode and
// decode (no registry: the codecs alone), for the paths issue 38 changed:
// Protobuf's reader schema lookup, JSON Schema's writing of empty lists.
func BenchmarkProtobuf(b *testing.B) {
	c := mustProto(b, readingProto)
	v := mustParseBPL(b, `("device" => "b1" "temperature" => 71.5 "alarms" => ("hot" "dry") "counters" => ("a" => 1 "b" => 2)
		"unit" => "F" "where" => ("x" => 1.5 "y" => 2) "raw" => "xyz" "at" => ("seconds" => 1700000000 "nanos" => 5) "code" => 7)`)
	enc, err := c.appendEncode([]byte{0}, v)
	if err != nil {
		b.Fatal(err)
	}
	benchCodec(b, c, v, enc)
}

func BenchmarkJSONSchema(b *testing.B) {
	c, err := compileJSONSchema(b.Context(), nil, sr.Schema{Schema: readingJSONSchema, Type: sr.TypeJSON})
	if err != nil {
		b.Fatal(err)
	}
	v := mustParseBPL(b, `("device" => "b1" "temperature" => 71.5 "alarms" => ("hot" "dry" "wet"))`)
	enc, err := c.appendEncode(nil, v)
	if err != nil {
		b.Fatal(err)
	}
	benchCodec(b, c, v, enc)
}

// benchCodec times c's encoding of v and decoding of enc, apart.
func benchCodec(b *testing.B, c interface {
	appendEncode(dst []byte, v any) ([]byte, error)
	decode(b []byte) (any, error)
}, v any, enc []byte) {
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 256)
		for b.Loop() {
			if _, err := c.appendEncode(buf[:0], v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.decode(enc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
