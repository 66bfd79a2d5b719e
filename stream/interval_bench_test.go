package stream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkIntervalJoinTransform measures an interval join's work per
// input, without Kafka: the join with the key's buffer, the buffering and
// the expiry, committed every 100 inputs, for keys that hold about
// "held" records within the window. Inputs alternate between the sides,
// a millisecond apart, over 100 keys; the window spans 100 * held ms, so
// each key holds about held records and each input joins about half of
// them. It shows the cost of the hazard IntervalJoin's doc names: a key's
// records are read and written whole for each of its inputs.
func BenchmarkIntervalJoinTransform(b *testing.B) {
	for _, held := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			const keys = 100
			span := time.Duration(keys*held) * time.Millisecond
			noop := func(context.Context, *kafkabpl.Record, *kafkabpl.Record) ([]Output, error) { return nil, nil }
			spec := Spec{From: []string{"left", "right"}, To: "out", Store: "s",
				Interval: &IntervalJoin{Before: span / 2, After: span / 2, Joiner: noop}}
			cfg := testConfig(b, map[string]any{"servers": "127.0.0.1:1", "group": "g"})
			st, err := newStore(cfg, &spec, func(string) {})
			if err != nil {
				b.Fatal(err)
			}
			p := st.newPart(0, 1)
			st.state.Adopt(p.state, time.Now())
			if err := st.interval.rebuild(st.state, 0); err != nil {
				b.Fatal(err)
			}
			s := &stream{store: st, spec: spec, workCtx: context.Background()}
			transform := st.intervalTransform()
			names := make([][]byte, keys)
			for k := range names {
				names[k] = fmt.Appendf(nil, "k%d", k)
			}
			value := []byte("a reading of some twenty bytes")
			var bc batchCounts
			write := func(Output) error { return nil }
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				topic := "left"
				if i%2 == 1 {
					topic = "right"
				}
				rec := cfg.Record(&kgo.Record{Topic: topic, Key: names[i%keys], Value: value, Offset: int64(i), Timestamp: time.UnixMilli(int64(i))})
				in := &rec
				if _, err := transform(context.Background(), in); err != nil {
					b.Fatal(err)
				}
				if i%100 == 99 {
					if err := s.expireIntervals(&bc, write); err != nil {
						b.Fatal(err)
					}
					st.commit()
				}
			}
		})
	}
}
