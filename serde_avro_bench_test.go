package kafkabpl

import (
	"testing"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// The Avro benchmarks write and read one record of ten fields (strings,
// numbers, a timestamp, an array, a nullable union) through kafkabpl's
// codec, from and to BPL values, and through twmb/avro, in the same run:
// from and to the generic Go values a dynamic program has
// (map[string]any: "twmb-avro-map", the aim's base) and, for reference,
// a typed Go struct ("twmb-avro-struct"), which a BPL value never is.
// BENCHMARKS.md has the command and the figures.

const benchAvroSchema = `{"type":"record","name":"Reading","namespace":"iot","fields":[
 {"name":"device","type":"string"},
 {"name":"site","type":"string"},
 {"name":"seq","type":"long"},
 {"name":"temperature","type":"double"},
 {"name":"humidity","type":"float"},
 {"name":"ok","type":"boolean"},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"battery","type":"int"},
 {"name":"alarms","type":{"type":"array","items":"string"}},
 {"name":"note","type":["null","string"]}]}`

const benchAvroBPL = `("device" => "boiler-17" "site" => "north-plant" "seq" => 123456789 "temperature" => 71.25
 "humidity" => 0.5 "ok" => true "at" => 1700000000123 "battery" => 87 "alarms" => ("overheat" "low-water") "note" => "checked")`

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
	c := mustAvro(b, benchAvroSchema)
	v := mustParseBPL(b, benchAvroBPL)
	raw := avro.MustParse(benchAvroSchema)
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
	c := mustAvro(b, benchAvroSchema)
	raw := avro.MustParse(benchAvroSchema)
	data, err := c.appendEncode(nil, mustParseBPL(b, benchAvroBPL))
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

// BenchmarkRecordsAvro is BenchmarkRecords (a Send's serialization, 1,000
// messages) with the Avro serializer, the registry's id already cached:
// the per-record cost of a registry-backed producer against a String one.
func BenchmarkRecordsAvro(b *testing.B) {
	reg := srfake.New()
	defer reg.Close()
	value := mustParseBPL(b, benchAvroBPL)
	for _, tt := range []struct {
		name string
		cfg  map[string]any
		v    any
	}{
		{"String", map[string]any{"servers": "127.0.0.1:9092"}, benchValue},
		{"Avro", map[string]any{"servers": "127.0.0.1:9092", "schema-registry-url": reg.URL(), "value-serializer": "Avro", "value-schema": benchAvroSchema}, value},
	} {
		b.Run(tt.name, func(b *testing.B) {
			cfg, err := parseConfig(tt.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer cfg.reg.close()
			h := &handle{cfg: cfg}
			msgs := make([]Message, benchBatch)
			for i := range msgs {
				msgs[i] = Message{Key: benchKeys[i%len(benchKeys)], Value: tt.v}
			}
			topics := []string{"t"}
			b.ReportAllocs()
			for b.Loop() {
				recs, failed, err := h.records(topics, len(msgs), func(i int) (Message, error) { return msgs[i], nil })
				if err != nil || len(recs) != len(msgs) || failed != nil {
					b.Fatal(len(recs), err, failed)
				}
				putRecords(recs)
			}
		})
	}
}

var _ = sr.TypeAvro
