package kafkabpl

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// The benchmarks of the library's own CPU work, no broker's; those that
// compare it with raw kgo on a cluster, through the Go API and the BPL
// functions, are in bench_compare_test.go (package kafkabpl_test, which
// may import package functions). They share the workload below. See
// BENCHMARKS.md for the commands.

const (
	benchBatch     = 1000 // messages per Send
	benchValueSize = 100  // bytes per message
)

var benchValue = strings.Repeat("x", benchValueSize)

// benchKeys are the keys Send's messages take in turn.
var benchKeys = func() []string {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprint(i)
	}
	return keys
}()

// BenchmarkRecords is the part of a Send that is the library's own CPU
// work and no broker's: serializing 1,000 messages into kgo records, in a
// slice from the pool and back.
func BenchmarkRecords(b *testing.B) {
	h := &handle{cfg: defaultConfig()}
	msgs := make([]Message, benchBatch)
	for i := range msgs {
		msgs[i] = Message{Key: benchKeys[i%len(benchKeys)], Value: benchValue}
	}
	topics := []string{"t"}
	b.ReportAllocs()
	for b.Loop() {
		recs, _, err := h.records(context.Background(), topics, len(msgs), func(i int) (Message, error) { return msgs[i], nil })
		if err != nil || len(recs) != len(msgs) {
			b.Fatal(len(recs), err)
		}
		putRecords(recs)
	}
}

// The record of package serde's Avro benchmarks, embedded so that a test
// binary built with go test -c runs them from any directory.
var (
	//go:embed serde/testdata/reading.avsc
	readingSchema string
	//go:embed serde/testdata/reading.bpl
	readingText string
)

// BenchmarkRecordsAvro is BenchmarkRecords (a Send's serialization, 1,000
// messages) with the Avro serializer, the registry's id already cached:
// the per-record cost of a registry-backed producer against a String one.
func BenchmarkRecordsAvro(b *testing.B) {
	reg := srfake.New()
	defer reg.Close()
	reading := must[[]any](b)(value.Parse(readingText))[0]
	for _, tt := range []struct {
		name string
		cfg  map[string]any
		v    any
	}{
		{"String", map[string]any{"servers": "127.0.0.1:9092"}, benchValue},
		{"Avro", map[string]any{"servers": "127.0.0.1:9092", "schema-registry-url": reg.URL(), "value-serializer": "Avro", "value-schema": readingSchema}, reading},
	} {
		b.Run(tt.name, func(b *testing.B) {
			cfg, err := parseConfig(tt.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer cfg.reg.Close()
			h := &handle{cfg: cfg}
			msgs := make([]Message, benchBatch)
			for i := range msgs {
				msgs[i] = Message{Key: benchKeys[i%len(benchKeys)], Value: tt.v}
			}
			topics := []string{"t"}
			b.ReportAllocs()
			for b.Loop() {
				recs, failed, err := h.records(context.Background(), topics, len(msgs), func(i int) (Message, error) { return msgs[i], nil })
				if err != nil || len(recs) != len(msgs) || failed != nil {
					b.Fatal(len(recs), err, failed)
				}
				putRecords(recs)
			}
		})
	}
}
