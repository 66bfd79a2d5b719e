package serde

import (
	_ "embed"
	"testing"

	"github.com/twmb/avro"
)

// The Avro benchmarks write and read one record of ten fields (strings,
// numbers, a timestamp, an array, a nullable union) through kafkabpl's
// codec, from and to BPL values, and through twmb/avro, in the same run:
// from and to the generic Go values a dynamic program has
// (map[string]any: "twmb-avro-map", the aim's base) and, for reference,
// a typed Go struct ("twmb-avro-struct"), which a BPL value never is.
// BENCHMARKS.md has the command and the figures. The record's schema and
// value are in testdata (reading.avsc, reading.bpl), which package
// kafkabpl's BenchmarkRecordsAvro sends too.

// The benchmarks' record, embedded so that a test binary built with
// go test -c runs them from any directory.
var (
	//go:embed testdata/reading.avsc
	readingSchema string
	//go:embed testdata/reading.bpl
	readingText string
)

type benchReading struct {
	Device      string   `avro:"device"`
	Site        string   `avro:"site"`
	Seq         int64    `avro:"seq"`
	Temperature float64  `avro:"temperature"`
	Humidity    float32  `avro:"humidity"`
	OK          bool     `avro:"ok"`
	At          int64    `avro:"at"`
	Battery     int32    `avro:"battery"`
	Alarms      []string `avro:"alarms"`
	Note        *string  `avro:"note"`
}

func benchAvroMap() map[string]any {
	return map[string]any{"device": "boiler-17", "site": "north-plant", "seq": int64(123456789), "temperature": 71.25,
		"humidity": float32(0.5), "ok": true, "at": int64(1700000000123), "battery": int32(87),
		"alarms": []any{"overheat", "low-water"}, "note": "checked"}
}

func benchAvroStruct() *benchReading {
	note := "checked"
	return &benchReading{"boiler-17", "north-plant", 123456789, 71.25, 0.5, true, 1700000000123, 87, []string{"overheat", "low-water"}, &note}
}

func BenchmarkAvroEncode(b *testing.B) {
	c := mustAvro(b, readingSchema)
	v := mustParseBPL(b, readingText)
	raw := avro.MustParse(readingSchema)
	m, st := benchAvroMap(), benchAvroStruct()
	buf := make([]byte, 0, 256)
	b.Run("kafkabpl", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.appendEncode(buf[:0], v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("twmb-avro-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := raw.AppendEncode(buf[:0], m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("twmb-avro-struct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := raw.AppendEncode(buf[:0], st); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAvroDecode(b *testing.B) {
	c := mustAvro(b, readingSchema)
	raw := avro.MustParse(readingSchema)
	data, err := c.appendEncode(nil, mustParseBPL(b, readingText))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("kafkabpl", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("twmb-avro-map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if _, err := raw.Decode(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("twmb-avro-struct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v benchReading
			if _, err := raw.Decode(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
