package kafkabpl

import (
	"testing"

	"github.com/brain4it/kafkabpl/value"
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
