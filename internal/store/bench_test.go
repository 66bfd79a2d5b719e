package store

import (
	"strconv"
	"testing"
	"time"
)

// The store's own cost per input, without Kafka: a stream's batch of 500
// inputs over 1000 keys, committed, as the run goroutine drives it.

const benchBatch, benchKeys = 500, 1000

// benchKeyNames are the keys inputs cycle through.
var benchKeyNames = func() []string {
	ks := make([]string, benchKeys)
	for i := range ks {
		ks[i] = "key-" + strconv.Itoa(i)
	}
	return ks
}()

// BenchmarkSetState counts per key: a State and a SetState per input.
func BenchmarkSetState(b *testing.B) {
	st, p := held(Config{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		key := benchKeyNames[i%benchKeys]
		v, err := st.State(p, key)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := v.(int64)
		if err := st.SetState(p, key, n+1); err != nil {
			b.Fatal(err)
		}
		if i%benchBatch == benchBatch-1 {
			st.Changelog(func(int32, []byte, []byte) {})
			st.Commit()
		}
	}
}

// BenchmarkFold sums into tumbling windows of 100 ms, an input a ms,
// closing them as the stream time passes.
func BenchmarkFold(b *testing.B) {
	st, p := held(Config{Windows: &WindowSpec{Size: 100 * time.Millisecond, Advance: 100 * time.Millisecond}})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		key := benchKeyNames[i%benchKeys]
		if _, err := st.Fold(p, []byte(key), int64(i/benchKeys), sum(1), nil); err != nil {
			b.Fatal(err)
		}
		if i%benchBatch == benchBatch-1 {
			if err := st.CloseDue(nil); err != nil {
				b.Fatal(err)
			}
			st.Changelog(func(int32, []byte, []byte) {})
			st.Commit()
		}
	}
}

// BenchmarkApply restores a per-key changelog, 1024 records a chunk.
func BenchmarkApply(b *testing.B) {
	st := New(Config{})
	p := st.NewPart(0)
	chunk := make([]logRecord, 1024)
	for i := range chunk {
		chunk[i] = logRecord{Key: []byte(benchKeyNames[i%benchKeys]), Value: []byte{1, 3, byte(i)}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Apply(p, records(chunk)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunk)), "ns/record")
}
