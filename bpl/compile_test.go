package bpl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// The tests of the compiling evaluator: what compiling resolves once must
// not change what a script sees. (run also runs every script of a fresh
// interpreter by walking the tree and compares.)

// TestCompiledKeepsMeaning checks redefinitions, builtins' names set as
// variables, hard references, locals, and the fast paths' edges.
func TestCompiledKeepsMeaning(t *testing.T) {
	checkValues(t, []valueTest{
		// a function redefined after a caller was compiled
		{`(set f (function () 1)) (set g (function () (f))) (set a (g)) (set f (function () 2)) (list a (g))`, `(1 2)`},
		// a builtin's name set as a variable: calls still call the builtin
		// (call evaluates its first argument: the variable)
		{`(set + (function (a b) 0)) (list (+ 1 2) (call + 1 2))`, `(3 0)`},
		{`(set + 5) (list + (+ 1 2))`, `(5 3)`},
		{`(set f sin) (set g (function (x) (f x))) (g 0)`, `0`},
		{`(set g (function () (list + 1 2))) (g)`, `(+ 1 2)`},
		{`(set g (function () (list unknown-name 1))) (g)`, `(null 1)`},
		{`(set g (function () (unknown-name 1))) (g)`, `(unknown-name 1)`},
		// a parameter named like a builtin is a variable
		{`(set g (function (list get) (get list get))) (g (10 20) 1)`, `20`},
		// no caller's locals, and locals declared in the body
		{`(set g (function () x)) (set f (function (x) (g))) (f 1)`, `null`},
		{`(set f (function (n) (local i "s" => 0) (set i 0) (while (< i n) (set s (+ s i)) (set i (+ i 1))) (list i s))) (f 5)`, `(5 10)`},
		{`(set f (function () (set fresh-global 7))) (f) fresh-global`, `7`},
		// paths
		{`(set f (function (l) (set l/1 9) (list l/0 l/1 (get l 1)))) (f (1 2))`, `(1 9 9)`},
		// the integer paths' edges give what the values functions give
		{`(list (+ 9223372036854775807 1) (- -9223372036854775808 1) (* 4611686018427387904 2))`, `(-9223372036854775808 9223372036854775807 -9223372036854775808)`},
		{`(list (/ 7 2) (/ 6 3) (/ -9223372036854775808 -1) (mod -7 2) (mod 7.5 2))`, `(3.5 2 9.223372036854776E18 -1 1.5)`},
		{`(list (< 1 2.5) (= 1 1.0) (!= 1 2) (>= "b" "a") (= null null) (= 1 null))`, `(true true true true true false)`},
		{`(list (get (1 2) 5) (get (1 2) -1) (get ("a" => 1) "a") (get ("a" => 1) "b") (get null 1) (get (1 2) 1.0))`, `(null null 1 null null 2)`},
		// data lists are fresh copies at every evaluation
		{`(set f (function () (set l ()) (push l 1) l)) (f) (f)`, `(1)`},
		// and/or/not/when
		{`(list (and 1 0) (and) (or 0 "x") (or) (not 0) (when 1 2) (when 0 2))`, `(false true false false true true false)`},
		// functions made by one (function ...) share their compiled body;
		// there are no closures: k is no local of the inner function
		{`(set mk (function (k) (function (x) (+ x k)))) (set a (mk 1)) (set b (mk 2)) (list (a 1) (b 1))`, `(1 1)`},
		{`(set f (function (s) (list (length s) (upcase s) (downcase s) (length "")))) (f "Héllo")`, `(5 "HÉLLO" "héllo" 0)`},
		// code a script holds as data and changes: a function made from
		// it by eval runs what the list holds at each call
		{`(set code (quote (function (x) 1))) (set f (eval code)) (set a (f 0)) (put code 2 2) (list a (f 0))`, `(1 2)`},
		{`(set code (quote (do (set g (function () 1)) (g)))) (set a (eval code)) (put code/1/2 2 2) (list a (g))`, `(1 2)`},
		{`(set i 0) (set code (quote (while (< i 1) (set g (function () 1)) (set i 1)))) (eval code) (set a (g)) (put code/2/2 2 2) (list a (g))`, `(1 2)`},
		{`(set code (quote (for-each (1) x (set g (function () x))))) (eval code) (put code/3/2 2 2) (g)`, `2`},
		{`(set code (quote (function () (set i 0) (while (< i 1) (set g (function () 1)) (set i 1))))) (set h (eval code)) (h) (set a (g)) (put code/3/2/2 2 2) (list a (g))`, `(1 2)`},
		// a loop of top-level code is compiled as it starts
		{`(set i 0) (set s "") (while (< i 3) (set s (concat s i)) (set i (+ i 1))) s`, `"012"`},
		// for-each and size
		{`(set f (function (l) (local n) (set n 0) (for-each l x (set n (+ n x))) (list n (size l) (size "é") (size null)))) (f (1 2 3))`, `(6 3 1 0)`},
		{`(set f (function (l) (set r ()) (for-each l (k x) (push r k) (push r x)) r)) (f ("a" => 1 2))`, `("a" 1 null 2)`},
		{`(set f (function (l) (for-each l x (push l x) x))) (f (1 2))`, `2`},
		{`(set f (function () (for-each null x 1))) (f)`, `null`},
		{`(set f (function () (foreach (1 2) x))) (f)`, `null`},
		// arguments by name and the rest of them
		{`(set f (function (a b) (list a b))) (f b => 1 a => 2)`, `(2 1)`},
		{`(set f (function args args)) (f 1 (+ 1 1) "k" => 3)`, `(1 2 "k" => 3)`},
	})
	checkErrors(t, []errorTest{
		{"(set f (function (x) (+ x \"a\")))\n(f 1)", "InvalidArgument", "+: argument 2 is", 1},
		{"(set f (function (x)\n  (mod x 0)))\n(f 1)", "DivisionByZero", "mod: integer division by zero", 2},
		{"(set f (function (x)\n\n  (/ x 0)))\n(f 1)", "DivisionByZero", "/: integer division by zero", 3},
		{`(set r (function (n) (r n))) (r 1)`, "StackOverflow", "calls nested more than", 1},
		{`(set f (function () (< 1 "a"))) (f)`, "InvalidArgument", "<: cannot compare", 1},
		{`(set f (function () (get 5 1))) (f)`, "InvalidArgument", "get: want a list", 1},
		{`(set f (function () (for-each 5 x 1))) (f)`, "InvalidArgument", "for-each: want a list, got 5", 1},
		{`(set f (function () (for-each (1) 5 1))) (f)`, "InvalidArgument", "for-each: want a variable name", 1},
		{`(set f (function () (size 5))) (f)`, "InvalidArgument", "size: want a list or a string, got 5", 1},
		{`(set f (function () (length 5))) (f)`, "InvalidArgument", "length: argument 1 is 5, want a string", 1},
		{`(set f (function () (upcase))) (f)`, "InvalidArgument", "upcase: want 1 argument", 1},
		{`(set f (function () (system "ls"))) (f)`, "NotImplemented", "system", 1},
	})
}

// TestCompiledExceptionCode checks that an exception names the innermost
// call it was raised in, as its code, in a compiled function too.
func TestCompiledExceptionCode(t *testing.T) {
	in := New(nil)
	_, _, err := run(t, in, "(set f (function (x) (do (list 1 (+ x \"a\")))))\n(f 1)")
	var e *Exception
	if !errors.As(err, &e) || value.Format(e.Code) != `(+ x "a")` {
		t.Fatalf("error %v, code %v; want the code (+ x \"a\")", err, e)
	}
}

// TestCompiledSeesDefine checks that a compiled call of a name that was
// no function when the code was compiled calls the library function
// defined later, and that one defined earlier is called.
func TestCompiledSeesDefine(t *testing.T) {
	in := New(nil)
	ctx := context.Background()
	fn, err := in.Eval(ctx, mustParseT(t, `(function () (list (lib-later 1) lib-later))`))
	if err != nil {
		t.Fatal(err)
	}
	c := fn.(value.Callable)
	v, err := c.Call(ctx, value.NewList())
	if err != nil || value.Format(v) != `((lib-later 1) null)` {
		t.Fatalf("before Define: %v, %v", value.Format(v), err)
	}
	in.Define("lib-later", func(_ context.Context, args *value.List) (any, error) { return args.At(0), nil })
	v, err = c.Call(ctx, value.NewList())
	if err != nil || value.Format(v) != `(1 lib-later)` {
		t.Fatalf("after Define: %v, %v", value.Format(v), err)
	}
}

// TestEvalOfAGlobalIsWalked checks that Eval of the list a global holds
// (as a server module's start code is evaluated) evaluates it as it is,
// and that the functions it makes see changes to it.
func TestEvalOfAGlobalIsWalked(t *testing.T) {
	in := New(nil)
	ctx := context.Background()
	in.SetGlobal("start", mustParseT(t, `(do (set f (function () 1)) (f))`))
	start, _ := in.global("start")
	if v, err := in.Eval(ctx, start); err != nil || v != int64(1) {
		t.Fatalf("Eval(start) = %v, %v; want 1", v, err)
	}
	if _, err := in.Eval(ctx, mustParseT(t, `(put start/1/2 2 2)`)); err != nil {
		t.Fatal(err)
	}
	if v, err := in.Eval(ctx, mustParseT(t, `(f)`)); err != nil || v != int64(2) {
		t.Fatalf("(f) after the change = %v, %v; want 2", v, err)
	}
}

// FuzzCompiled runs arbitrary scripts (FuzzRun's seeds to start with) both
// compiled and by walking the tree: those that end on their own, and use
// no clock, randomness or executors, must give the same value, output and
// exception.
func FuzzCompiled(f *testing.F) {
	for _, s := range runSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if !deterministic(src) {
			return
		}
		type result struct{ v, out, err string }
		runIt := func(walk bool) (result, bool) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			var out strings.Builder
			in := New(&out)
			in.walk = walk
			var last any
			err := in.Run(ctx, "fuzz.bpl", src, func(v any) { last = v })
			var e *Exception
			if ctx.Err() != nil || errors.As(err, &e) && e.Type == "Interrupted" {
				return result{}, false // ended by the clock: where differs
			}
			return result{value.Format(last), out.String(), describeErr(err)}, true
		}
		c, ok1 := runIt(false)
		w, ok2 := runIt(true)
		if ok1 && ok2 && c != w {
			t.Fatalf("%s:\ncompiled %+v\nwalked   %+v", src, c, w)
		}
	})
}
