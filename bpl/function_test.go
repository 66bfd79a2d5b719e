package bpl

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// A function's name that is no variable evaluates to itself, a hard
// reference in brain4it's words, so that it can be kept and called.
func TestHardReferences(t *testing.T) {
	checkValues(t, []valueTest{
		{`sin`, `sin`},
		{`(type-of subtype-of)`, `"reference"`},
		{`(subtype-of subtype-of)`, `"hard-reference"`},
		{`(subtype-of (quote alfa))`, `"soft-reference"`},
		{`(subtype-of system)`, `"hard-reference"`},
		{`(= (list + 1 2) (quote (+ 1 2)))`, `true`},
		{`(eval (list + 2 4))`, `6`},
		{`(set f sin) (call f 0.5)`, `0.479425538604203`},
		{`(set f sin) (f 0.5)`, `0.479425538604203`},
		{`(call sin 0.5)`, `0.479425538604203`},
		{`(call + 4 5)`, `9`},
		{`(call "+" 4 5)`, `9`},
		{`(set l (list 1)) (call push l 2) l`, `(1 2)`},
		{`(call list 1 "k" => 2)`, `(1 "k" => 2)`},
		{`(call (function (x) x) 3)`, `3`},
		// a variable of a function's name is the variable
		{`(set size 3) size`, `3`},
		{`(set size 3) (size (1 2))`, `2`},
		{`(boolean system)`, `true`},
		{`nosuchthing`, `null`},
	})
	checkErrors(t, []errorTest{
		{`(call system "ls")`, "NotImplemented", "system: brain4it's core function is not available here: it runs operating-system commands", 1},
		{`(set f system) (f "ls")`, "NotImplemented", "system: brain4it's core function is not available here", 1},
		{`(call nosuch 1)`, "UnknownFunction", "call: nosuch is not a function", 1},
		{`(call sin "x")`, "InvalidArgument", `sin: argument 1 is the string "x", want a number`, 1},
	})
}

// brain4it's parameters that take only a named argument: "m", and "k" => v.
func TestNamedParameters(t *testing.T) {
	checkValues(t, []valueTest{
		{`(set test (function (x y "m" "n") (+ x y m n))) (test 4)`, `4`},
		{`(set test (function (x y "m" "n") (+ x y m n))) (test 4 (+ 1 1) 3)`, `6`},
		{`(set test (function (x y "m" "n") (+ x y m n))) (test 4 (+ 1 1) z => 3)`, `6`},
		{`(set test (function (x y "m" "n") (+ x y m n))) (test 4 (+ 1 1) m => 3 n => 1)`, `10`},
		{`(set test (function (x y "m" "n") (+ x y m n))) (call test 4 2 n => 3)`, `9`},
		{`(set test (function (str "trimmed" "upcase" => up) (if up (set str (upcase str))) (if trimmed (set str (trim str))) str)) (test " hello " trimmed => true upcase => true)`, `"HELLO"`},
		{`(set test (function (str "upcase" => up) (list str up))) (test "a" "b")`, `("a" null)`},
		{`(set test (function ("upcase" => up) up)) (test upcase => 1)`, `1`},
	})
	checkErrors(t, []errorTest{
		{`(function (x 5) x)`, "InvalidArgument", "function: parameter 2 is 5, want a name", 1},
		{`(function ("k" => "v") x)`, "InvalidArgument", `function: parameter 1 is the string "v", want a name`, 1},
	})
}

// TestCallArgs checks that CallArgs gives what Call gives with a list of
// the same arguments: functions binding by position, taking their
// arguments as one list, with a parameter that takes only a named
// argument, with more and fewer parameters than arguments, and a nil one.
func TestCallArgs(t *testing.T) {
	in := New(io.Discard)
	ctx := context.Background()
	for _, src := range []string{
		`(function (a b) (list a b))`,
		`(function (a) (list a))`,
		`(function (a b c) (list a b c))`,
		`(function () "none")`,
		`(function args args)`,
		`(function (a "b") (list a b))`,
		`(function (a b) (set a (+ a 1)) (list a b))`,
	} {
		v, err := in.Eval(ctx, mustParseT(t, src))
		if err != nil {
			t.Fatal(src, err)
		}
		fn := v.(*Function)
		for n := range 3 {
			a0, a1 := any(int64(41)), any("x")
			args := []any{a0, a1}[:n]
			want, wantErr := fn.Call(ctx, value.NewList(args...))
			got, err := fn.CallArgs(ctx, n, a0, a1)
			if value.Format(got) != value.Format(want) || (err == nil) != (wantErr == nil) {
				t.Errorf("%s with %d arguments: CallArgs gave %s (%v), Call %s (%v)", src, n, value.Format(got), err, value.Format(want), wantErr)
			}
		}
	}
	if _, err := (*Function)(nil).CallArgs(ctx, 1, 1, nil); err == nil {
		t.Error("CallArgs of a nil *Function: no error")
	}
}

// TestCallArgsReusesState checks the reuse of a call's task and frame
// (callStates): a call sees only its own locals, whatever ran before in
// the state it got, calls run at once from several goroutines (for the
// race detector) each get their own, and a call whose library function
// kept the context naming its task never gives that task to another call.
func TestCallArgsReusesState(t *testing.T) {
	in := New(io.Discard)
	ctx := context.Background()
	var kept context.Context
	in.Define("keep-ctx", func(c context.Context, _ *value.List) (any, error) {
		kept = c
		return nil, nil
	})
	fnOf := func(src string) *Function {
		t.Helper()
		v, err := in.Eval(ctx, mustParseT(t, src))
		if err != nil {
			t.Fatal(src, err)
		}
		return v.(*Function)
	}
	many := fnOf(`(function (a b) (local c d e f g) (set c a) (set g b) (push (list) 1 2 3) (local-scope))`)
	one := fnOf(`(function (x) (local-scope))`)
	keeper := fnOf(`(function (x) (keep-ctx) x)`)
	for i := range 100 {
		if _, err := many.CallArgs(ctx, 2, int64(i), "b"); err != nil {
			t.Fatal(err)
		}
		v, err := one.CallArgs(ctx, 1, int64(i), nil)
		if got, want := value.Format(v), fmt.Sprintf(`("x" => %d)`, i); err != nil || got != want {
			t.Fatalf("call %d: the scope is %s (%v), want %s", i, got, err, want)
		}
	}

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				v, err := many.CallArgs(ctx, 2, int64(w), int64(i))
				want := fmt.Sprintf(`("a" => %d "b" => %d "c" => %d "d" => null "e" => null "f" => null "g" => %d)`, w, i, w, i)
				if got := value.Format(v); err != nil || got != want {
					t.Errorf("goroutine %d call %d: %s (%v), want %s", w, i, got, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()

	type mark struct{}
	first := context.WithValue(ctx, mark{}, "first")
	if _, err := keeper.CallArgs(first, 1, "k", nil); err != nil {
		t.Fatal(err)
	}
	c := callerOf(kept)
	if c.task == nil {
		t.Fatal("the library function got no caller")
	}
	for i := range 100 {
		if _, err := one.CallArgs(ctx, 1, int64(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if c.task.ctx != first {
		t.Error("the task a library function kept served another call")
	}
}

// TestCallFramesReused checks the frames compiled calls reuse (release):
// a call sees only its own locals whatever called before it, through a
// recursion deeper than the frames a task keeps, and after an exception.
func TestCallFramesReused(t *testing.T) {
	got, _, err := run(t, nil, `
(set many (function (a b) (local c d e f g) (set c a) (set g b) (local-scope)))
(set one (function (x) (local-scope)))
(set deep (function (n) (if (= n 0) (one n) (do (many n n) (deep (- n 1))))))
(set both (function (k) (many k k) (one k)))
(set failing (function (x) (local y) (set y x) (throw "Oops" "no")))
(set after (function (k) (try (failing k) (e "*" => (one k)))))
(set out (list))
(push out (deep 50))
(push out (both 5))
(push out (after 8))
out`)
	if want := `(("x" => 0) ("x" => 5) ("x" => 8))`; err != nil || got != want {
		t.Errorf("got %s (%v), want %s", got, err, want)
	}
}
