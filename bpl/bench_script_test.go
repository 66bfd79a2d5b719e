package bpl

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// The brain4it-style scripts of issue 37: a loop of a million iterations
// of arithmetic, of string building and of list access, and a recursive
// function, each a function called once per benchmark iteration, as a
// script would call it. Each iteration of a benchmark is one whole run of
// its script, so that b.N stays small.

// scriptBench defines the function src evaluates to as bench, then calls
// (bench arg) b.N times, checking each value with check.
func scriptBench(b *testing.B, src string, arg int64, check func(v any) bool) {
	in := New(io.Discard)
	fn, err := in.Eval(context.Background(), mustParse(b, src))
	if err != nil {
		b.Fatal(err)
	}
	in.SetGlobal("bench", fn)
	call := value.NewList(value.Reference("bench"), arg)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		v, err := in.Eval(ctx, call)
		if err != nil || !check(v) {
			b.Fatal(v, err)
		}
	}
}

// scriptArith is a loop of integer arithmetic: a sum of i*3 + i mod 7.
const scriptArith = `(function (n)
  (local i sum)
  (set i 0)
  (set sum 0)
  (while (< i n)
    (set sum (+ sum (* i 3) (mod i 7)))
    (set i (+ i 1)))
  sum)`

// scriptStrings builds a key of text and a number at every iteration and
// adds up the keys' lengths.
const scriptStrings = `(function (n)
  (local i total key)
  (set i 0)
  (set total 0)
  (while (< i n)
    (set key (concat "sensor-" (string (mod i 1000))))
    (set total (+ total (length key)))
    (set i (+ i 1)))
  total)`

// scriptLists reads and writes a list of ten by index and by name: a
// ring of the last ten values and a running count.
const scriptLists = `(function (n)
  (local i ring stats)
  (set ring (list 0 0 0 0 0 0 0 0 0 0))
  (set stats (list "count" => 0 "last" => null))
  (set i 0)
  (while (< i n)
    (put ring (mod i 10) (+ (get ring (mod (+ i 9) 10)) 1))
    (put stats "count" (+ (get stats "count") 1))
    (put stats "last" (get ring (mod i 10)))
    (set i (+ i 1)))
  (get stats "last"))`

// scriptFib is brain4it's favourite: a recursive function, by its
// global name.
const scriptFib = `(function (n)
  (if (< n 2) n (+ (bench (- n 1)) (bench (- n 2)))))`

// BenchmarkScript runs the scripts.
func BenchmarkScript(b *testing.B) {
	const million = 1000000
	b.Run("arith", func(b *testing.B) {
		// sum of 3i for i < n, plus i mod 7 summed over n = 7k+6 ...
		want := int64(3) * (million - 1) * million / 2
		for i := int64(0); i < million; i++ {
			want += i % 7
		}
		scriptBench(b, scriptArith, million, func(v any) bool { return v == want })
	})
	b.Run("strings", func(b *testing.B) {
		scriptBench(b, scriptStrings, million, func(v any) bool { return v == int64(10+90*2+900*3)*1000+int64(7*million) })
	})
	b.Run("lists", func(b *testing.B) {
		scriptBench(b, scriptLists, million, func(v any) bool { return v == int64(million) })
	})
	b.Run("fib", func(b *testing.B) {
		scriptBench(b, scriptFib, 25, func(v any) bool { return v == int64(75025) })
	})
}

// BenchmarkEvalOnce is code that runs once, as a server's evaluation or a
// script's top-level line does: walked, not compiled, which would cost
// more than it saves.
func BenchmarkEvalOnce(b *testing.B) {
	in := New(io.Discard)
	in.SetGlobal("x", mustParse(b, `("a" => 1 "b" => 2)`))
	evalBench(b, in, `(do (set y (list (+ 1 2) (get x "a") (concat "k" (string 5))))
  (if (> (size y) 2) (get y 0) null))`, func(v any) bool { return v == int64(3) })
}

// TestScriptFilesMatch checks that bench/interp's scripts, which
// brain4it's own interpreter runs for the comparison in BENCHMARKS.md, are
// the ones BenchmarkScript runs.
func TestScriptFilesMatch(t *testing.T) {
	for name, src := range map[string]string{"arith": scriptArith, "strings": scriptStrings, "lists": scriptLists, "fib": scriptFib} {
		b, err := os.ReadFile(filepath.Join("..", "bench", "interp", name+".bpl"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != src {
			t.Errorf("bench/interp/%s.bpl differs from BenchmarkScript's script:\n%s\nwant:\n%s", name, b, src)
		}
	}
}
