//go:build unix

// Command interp runs one of this folder's scripts through kafkabpl's
// evaluator as ScriptBench.java runs it through brain4it's: the file
// evaluates to a function, set as the global "bench" and called as
// (bench ARG), WARMUP times unmeasured, then ROUNDS times. It prints the
// last value and, per call, the wall time and the process's CPU time
// (user and system, every thread's: the garbage collector's included, as
// the JVM's process CPU time includes its compiler's and collector's), so
// that the two interpreters can be compared on a machine whose other load
// stretches wall time.
//
// Usage: go run ./bench/interp FILE ARG WARMUP ROUNDS
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/value"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "interp:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: interp FILE ARG WARMUP ROUNDS")
	}
	src, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var n [3]int64
	for i, a := range args[1:] {
		if n[i], err = strconv.ParseInt(a, 10, 64); err != nil || n[i] < 0 {
			return fmt.Errorf("argument %d: want an integer of 0 or more, got %q", i+2, a)
		}
	}
	exprs, err := value.Parse(string(src))
	if err != nil || len(exprs) != 1 {
		return fmt.Errorf("%s: want one expression (%v)", args[0], err)
	}
	ctx := context.Background()
	in := bpl.New(io.Discard)
	fn, err := in.Eval(ctx, exprs[0])
	if err != nil {
		return err
	}
	in.SetGlobal("bench", fn)
	call := value.NewList(value.Reference("bench"), n[0])
	var v any
	for range n[1] {
		if v, err = in.Eval(ctx, call); err != nil {
			return err
		}
	}
	cpu0, wall0 := cpuTime(), time.Now()
	for range n[2] {
		if v, err = in.Eval(ctx, call); err != nil {
			return err
		}
	}
	rounds := max(n[2], 1)
	fmt.Printf("%s value=%v ns/op=%d cpu-ns/op=%d\n", args[0], v,
		time.Since(wall0).Nanoseconds()/rounds, (cpuTime()-cpu0).Nanoseconds()/rounds)
	return nil
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
