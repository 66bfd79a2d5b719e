package bpl

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/brain4it/kafkabpl/internal/box"
	"github.com/brain4it/kafkabpl/value"
)

// The evaluator's benchmarks: the two things a Kafka script does most, per
// message. BENCHMARKS.md has the figures.

// evalBench parses src once and evaluates it b.N times, checking each
// value with check.
func evalBench(b *testing.B, in *Interp, src string, check func(v any) bool) {
	expr := mustParse(b, src)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		v, err := in.Eval(ctx, expr)
		if err != nil || !check(v) {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkBuildMessages is the loop of a script that builds a kafka-send's
// 1,000 messages, each named by its key: a comparison, a conversion, a put
// and an addition per message.
func BenchmarkBuildMessages(b *testing.B) {
	in := New(io.Discard)
	in.SetGlobal("value", "a value of a hundred bytes, or thereabouts, as the benchmarks of the library send, padded out to 100.")
	evalBench(b, in, `(do
  (set msgs (list))
  (set i 0)
  (while (< i 1000)
    (put msgs (string i) value)
    (set i (+ i 1)))
  msgs)`, func(v any) bool { l, ok := v.(*value.List); return ok && l.Len() == 1000 })
}

// BenchmarkBuildMessagesGo does BuildMessages's work in Go, on the same
// values: the key's text boxed (one allocation, as string gives it), a
// put by name into the growing named list, the counter an int64 in an
// interface. It is the floor under BuildMessages: what building the
// messages costs with no evaluator at all.
func BenchmarkBuildMessagesGo(b *testing.B) {
	var val any = "a value of a hundred bytes, or thereabouts, as the benchmarks of the library send, padded out to 100."
	b.ReportAllocs()
	for b.Loop() {
		msgs := &value.List{}
		var i any = int64(0)
		for i.(int64) < 1000 {
			var buf [20]byte
			key := box.Text(strconv.AppendInt(buf[:0], i.(int64), 10))
			msgs.Put(key.(string), val)
			i = i.(int64) + 1
		}
		if msgs.Len() != 1000 {
			b.Fatal(msgs.Len())
		}
	}
}

// BenchmarkCallFunction is a stream's transform: a BPL function value that
// the library calls from Go with one record, as kafka-stream does.
func BenchmarkCallFunction(b *testing.B) {
	in := New(io.Discard)
	fn, err := in.Eval(context.Background(), mustParse(b, `(function (in) (get in "value"))`))
	if err != nil {
		b.Fatal(err)
	}
	f := fn.(value.Callable)
	rec := value.NewList()
	rec.AppendNamed("key", "k")
	rec.AppendNamed("value", "v")
	args := value.NewList(rec)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if v, err := f.Call(ctx, args); err != nil || v != "v" {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkCallAggregate is a windowed aggregate's step: a two-argument
// BPL function value that the library calls from Go with a record and the
// accumulator so far, and whose value is the next accumulator. count adds
// one to a number (null at first); sum builds a named list from a list
// accumulator, reading it by get and by path. (BPL has no null?: a call of
// it would be data, a list, which is true; (= acc null) is the test.)
func BenchmarkCallAggregate(b *testing.B) {
	b.Run("count", func(b *testing.B) {
		aggregateBench(b, `(function (in acc) (+ (if (= acc null) 0 acc) 1))`, int64(1),
			func(acc any, n int64) bool { return acc == n })
	})
	b.Run("sum", func(b *testing.B) {
		aggregateBench(b, `(function (in acc)
  (list "sum" => (+ (get acc "sum") (get in "value")) "count" => (+ acc/count 1)))`, int64(3),
			func(acc any, n int64) bool {
				l, ok := acc.(*value.List)
				if !ok {
					return false
				}
				sum, _ := l.Get("sum")
				count, _ := l.Get("count")
				return sum == 3*n && count == n
			})
	})
}

// aggregateBench calls the function src evaluates to b.N times with a
// record whose value is val and the previous call's result (null the
// first time), checking each result with check(acc, calls so far).
func aggregateBench(b *testing.B, src string, val any, check func(acc any, n int64) bool) {
	in := New(io.Discard)
	fn, err := in.Eval(context.Background(), mustParse(b, src))
	if err != nil {
		b.Fatal(err)
	}
	f := fn.(value.Callable)
	rec := value.NewList()
	rec.AppendNamed("key", "k")
	rec.AppendNamed("value", val)
	ctx := context.Background()
	var acc any
	var n int64
	b.ReportAllocs()
	for b.Loop() {
		v, err := f.Call(ctx, value.NewList(rec, acc))
		n++
		if err != nil || !check(v, n) {
			b.Fatal(v, err)
		}
		acc = v
	}
}

// mustParse returns the one expression of src.
func mustParse(b *testing.B, src string) any {
	exprs, err := value.Parse(src)
	if err != nil || len(exprs) != 1 {
		b.Fatal(len(exprs), err)
	}
	return exprs[0]
}
