package kafkabpl

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkPollList is kafka-poll's list of 1,000 polled messages (String
// keys and values of a few bytes), every message read by index and name,
// as a script's for-each reads them: the poll's cost per message beyond
// the Go API's, for comparing two commits.
func BenchmarkPollList(b *testing.B) {
	recs := polledRecords(1000)
	p := &Polled{Topics: []TopicRecords{{Topic: "t", Records: recs}}}
	b.ReportAllocs()
	for b.Loop() {
		msgs, _ := p.List().Get("t")
		l := msgs.(*value.List)
		for i := range l.Len() {
			_, _ = l.At(i), l.Name(i)
		}
	}
}

// BenchmarkPollKeep keeps one message of each of 1,000 polls of 500
// records of 100 bytes, as a script that keeps a few messages of many
// polls does, and reports the heap they hold per kept message
// (heap-B/kept; see keptHeap): the message itself, and a copy of it
// (strings.Clone of its name and value, what kafka-copy makes).
func BenchmarkPollKeep(b *testing.B) {
	for _, copied := range []bool{false, true} {
		b.Run(map[bool]string{false: "message", true: "copy"}[copied], func(b *testing.B) {
			var perKept float64
			for b.Loop() {
				perKept = keptHeap(1000, 500, 100, copied)
			}
			b.ReportMetric(perKept, "heap-B/kept")
		})
	}
}

// keptHeap lists polls polls of records records each, keys "0", "1", ...
// and values of size bytes, as kafka-poll lists them, and keeps one
// message of each, its name and value in one list, as a script's (put
// kept name value) does, or copies of them (copied). It returns the heap
// in use after a collection, less what it was before, per kept message:
// what keeping one costs. Each poll's records are new and dropped after
// it, as kgo's fetched batches are.
func keptHeap(polls, records, size int, copied bool) float64 {
	cfg := defaultConfig()
	val := bytes.Repeat([]byte("v"), size)
	recs := make([]Record, records)
	kept := &value.List{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	for p := range polls {
		for i := range recs {
			key := []byte(strconv.Itoa(p*records + i))
			recs[i] = Record{r: &kgo.Record{Topic: "t", Key: key, Value: bytes.Clone(val)}, cfg: cfg}
		}
		msgs, _ := (&Polled{Topics: []TopicRecords{{Topic: "t", Records: recs}}}).List().Get("t")
		l := msgs.(*value.List)
		i := p % records
		name, v := l.Name(i), l.At(i)
		if copied {
			name, v = strings.Clone(name), strings.Clone(v.(string))
		}
		kept.AppendNamed(name, v)
	}
	clear(recs)
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if kept.Len() != polls {
		panic("kept " + strconv.Itoa(kept.Len()) + " messages")
	}
	runtime.KeepAlive(kept)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(polls)
}
