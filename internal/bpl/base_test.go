package bpl

import (
	"strings"
	"testing"
	"time"
)

func TestEvaluation(t *testing.T) {
	checkValues(t, []valueTest{
		// atoms evaluate to themselves, references to their variables
		{`1`, `1`},
		{`"s"`, `"s"`},
		{`null`, `null`},
		{`x`, `null`},
		{`(set x 3) x`, `3`},
		// lists that are not calls are data, their elements unevaluated
		{`()`, `()`},
		{`(1 2 (+ 1 2))`, `(1 2 (+ 1 2))`},
		{`("a" => x "b" => (y))`, `("a" => x "b" => (y))`},
		{`(x 1)`, `(x 1)`},
		{`(set x 5) (x 1)`, `(x 1)`},
		{`((print 1) 2)`, `((print 1) 2)`},
		// paths
		{`(set a ("b" => (10 20))) a/b/1`, `20`},
		{`(set a ("b" => (10 20))) a/b`, `(10 20)`},
		{`(set a ("b" => (10 20))) a/b/5`, `null`},
		{`(set a ("b" => (10 20))) a/c/0`, `null`},
		{`(set a ("b" => (10 20))) a/b/x`, `null`},
		{`(set a ("b" => (10 20))) a/b/99999999999999999999`, `null`},
		{`(set a ("b" => (10 20))) (set a/b/0 7) a`, `("b" => (7 20))`},
		{`(set a ("b" => (10 20))) (set a/b/2 30) a`, `("b" => (10 20 30))`},
		{`(set a ("b" => (10 20))) (set a/c 1) a`, `("b" => (10 20) "c" => 1)`},
		{`(set f (function (l) l/0)) (f (list 4))`, `4`},
	})
}

func TestBase(t *testing.T) {
	checkValues(t, []valueTest{
		{`(### "a comment" (throw "E"))`, `null`},
		{`(do 1 2 3)`, `3`},
		{`(do)`, `null`},
		{`(quote x)`, `x`},
		{`(quote (+ 1 2))`, `(+ 1 2)`},
		{`(quote "a" )`, `"a"`},
		{`(set x 2)`, `2`},
		{`(local a "b" => (+ 1 1)) (list a b)`, `(null 2)`},
		{`(local a b) a`, `null`},

		{`(if true 1 2)`, `1`},
		{`(if false 1 2)`, `2`},
		{`(if false 1)`, `null`},
		{`(if null 1 2)`, `2`},
		{`(if 0 1 2)`, `2`},
		{`(if 0.0 1 2)`, `2`},
		{`(if 2.5 1 2)`, `1`},
		{`(if "true" 1 2)`, `1`},
		{`(if "TRUE" 1 2)`, `1`},
		{`(if "yes" 1 2)`, `2`},
		{`(if () 1 2)`, `2`},
		{`(if (0) 1 2)`, `1`},
		{`(if (function () 1) 1 2)`, `1`},
		{`(when true 1 2)`, `2`},
		{`(when false 1 2)`, `null`},
		{`(set i 0) (while (< i 5) (set i (+ i 1)))`, `5`},
		{`(while false 1)`, `null`},
		{`(set add (function (a b) (+ a b))) (add 1 2)`, `3`},
		{`(set add (function (a b) (+ a b))) (call add 1 2)`, `3`},
		{`(set sub (function (a b) (- a b))) (sub "b" => 1 5)`, `4`},
		{`(set f (function (a b) b)) (f 1)`, `null`},
		{`(set f (function (a) a)) (f 1 2 3)`, `1`},
		{`(set f (function () 7)) (f)`, `7`},
		{`(set f (function ())) (f)`, `null`},
		{`(set f (function args args)) (f 1 "k" => (+ 1 1))`, `(1 "k" => 2)`},
		{`(set f (function (a) (* a 2))) (string f)`, `"(function (a) (* a 2))"`},
		{`(set f (function (a) (* a 2))) (list f)`, `((function (a) (* a 2)))`},
		{`(set fact (function (n) (if (<= n 1) 1 (* n (fact (- n 1)))))) (fact 20)`, `2432902008176640000`},
		{`(set fib (function (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))) (fib 15)`, `610`},
		{`(set twice (function (g x) (g (g x)))) (twice (function (y) (* y 3)) 2)`, `18`},
		{`(string "a\n")`, `"a\n"`},
		{`(string 3.0)`, `"3"`},
		{`(string 1e-5)`, `"1.0E-5"`},
		{`(string (1 "a" "k" => x))`, `"(1 \"a\" \"k\" => x)"`},
		{`(string null)`, `"null"`},
		{`(string true)`, `"true"`},
		{`(number "12")`, `12`},
		{`(number " 2.5\n")`, `2.5`},
		{`(number "0x1F")`, `31`},
		{`(number "-1e3")`, `-1000`},
		{`(number "NaN")`, `NaN`},
		{`(number 7)`, `7`},
		{`(number null)`, `null`},
		{`(sleep 1)`, `null`},
		{`(sleep -5)`, `null`},
		{`(assert (= 1 1))`, `true`},
		{`(print "x")`, `null`},
	})
}

func TestBaseErrors(t *testing.T) {
	checkErrors(t, []errorTest{
		{`(quote)`, "InvalidArgument", "quote: want 1 argument, got 0", 1},
		{`(if 1)`, "InvalidArgument", "if: want 2 to 3 arguments, got 1", 1},
		{`(set)`, "InvalidArgument", "set: want 2 arguments, got 0", 1},
		{`(set 1 2)`, "InvalidArgument", "set: want a variable name, got 1", 1},
		{`(set x 1) (set x/y 2)`, "InvalidArgument", "set: x is 1, not a list", 1},
		{`(local 1)`, "InvalidArgument", "local: argument 1 is 1, want a variable name", 1},
		{`(function 1)`, "InvalidArgument", "function: want a parameter list", 1},
		{`(function (a 1) a)`, "InvalidArgument", "function: parameter 2 is 1, want a name", 1},
		{`(call nope 1)`, "UnknownFunction", "call: nope is not a function", 1},
		{`(call 5)`, "UnknownFunction", "call: 5 is not a function", 1},
		{`(set a (list 1)) (set a/0 a)`, "InvalidArgument", "set: a list cannot contain itself", 1},
		{`(number "abc")`, "InvalidArgument", `number: the string "abc" is not a number`, 1},
		{`(number "1 2")`, "InvalidArgument", "is not a number", 1},
		{`(number "")`, "InvalidArgument", "is not a number", 1},
		{`(number true)`, "InvalidArgument", "number: want a string, got true", 1},
		{`(sleep "x")`, "InvalidArgument", "sleep: want milliseconds", 1},
		{`(assert (= 1 2))`, "AssertionError", "assert (= 1 2)", 1},
		{`(assert false "boom")`, "AssertionError", "boom", 1},
		// shared sublists double the printed size with each level
		{"(set a (list \"x\")) (set i 0)\n(while (< i 64) (set a (list a a)) (set i (+ i 1)))\n(print a)", "InvalidArgument", "print: a list of 2 elements is too large to write as text", 3},
		{"(set a (list 1)) (set i 0) (while (< i 64) (set a (list a a)) (set i (+ i 1))) (string a)", "InvalidArgument", "string:", 1},
	})
}

func TestPrint(t *testing.T) {
	_, out, err := run(t, nil, `(print "a" 1 2.5 "b\n" (1 "x" "k" => 3.0) null true 1e7)
(print)
(print "a" => 1)`)
	if err != nil {
		t.Fatal(err)
	}
	want := "a 1 2.5 b\n (1 \"x\" \"k\" => 3) null true 1.0E7\n\n1\n"
	if out != want {
		t.Errorf("printed %q, want %q", out, want)
	}
}

func TestPrintFunction(t *testing.T) {
	_, out, err := run(t, nil, "(set f (function (a b)\n  (+ a b)))\n(print f)")
	if err != nil {
		t.Fatal(err)
	}
	if want := "(function (a b) (+ a b))\n"; out != want {
		t.Errorf("printed %q, want %q", out, want)
	}
}

// TestCodeUnchanged checks that data literals and quote give copies, so a
// function that fills a list it starts as () starts empty every time.
func TestCodeUnchanged(t *testing.T) {
	checkValues(t, []valueTest{
		{`(set f (function () (local l) (set l ()) (push l 1) l)) (f) (f)`, `(1)`},
		{`(set f (function () (push (quote ()) 1))) (f) (f)`, `(1)`},
		{`(set f (function () (push ("a" => ()) 1))) (f) (f)`, `("a" => () 1)`},
		{`(set f (function () (local l) (set l ("a" => (1))) (push (get l "a") 2) l)) (f) (f)`, `("a" => (1 2))`},
	})
}

func TestSleepIsInterrupted(t *testing.T) {
	start := time.Now()
	_, _, err := runTimeout(t, `(sleep 100000)`, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "Interrupted") {
		t.Errorf("err = %v, want Interrupted", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sleep took %v after the context ended", d)
	}
}
