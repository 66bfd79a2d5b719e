package bpl

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
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
		// brain4it's when gives whether its body ran
		{`(when true 1 2)`, `true`},
		{`(when false 1 2)`, `false`},
		{`(when (> 2 1))`, `true`},
		{`(set n 0) (list (when (> n -1) (++ n) null) n)`, `(true 1)`},
		{`(set n 0) (list (when null (++ n)) n)`, `(false 0)`},
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
		{`(set)`, "MissingArgument", "want a variable name or a reference as argument 1", 1},
		{`(set 1 2)`, "InvalidReference", "set: want a variable name or a reference, got 1", 1},
		{`(set x 1) (set x/y 2)`, "InvalidArgument", "set: x is 1, not a list", 1},
		{`(local 1)`, "InvalidArgument", "local: argument 1 is 1, want a variable name", 1},
		{`(function 1)`, "InvalidArgument", "function: want a parameter list", 1},
		{`(function (a 1) a)`, "InvalidArgument", "function: parameter 2 is 1, want a name", 1},
		{`(call nope 1)`, "UnknownFunction", "call: nope is not a function", 1},
		{`(call 5)`, "UnknownFunction", "call: 5 is not a function", 1},
		{`(number "abc")`, "InvalidArgument", `number: the string "abc" is not a number`, 1},
		{`(number "1 2")`, "InvalidArgument", "is not a number", 1},
		{`(number "")`, "InvalidArgument", "is not a number", 1},
		{`(number true)`, "InvalidArgument", "number: want a string, got true", 1},
		{`(sleep "x")`, "InvalidArgument", "sleep: want milliseconds", 1},
		{`(assert (= 1 2))`, "AssertFailed", "(= 1 2)", 1},
		{`(assert false "boom")`, "AssertFailed", "boom", 1},
		// shared sublists double the printed size with each level
		{"(set a (list \"x\")) (set i 0)\n(while (< i 64) (set a (list a a)) (set i (+ i 1)))\n(print a)", "InvalidArgument", "print: the list ((<#1> (<#2> (<#3> (<#4> (<#5> (<#6> (<#... is too large to write as text", 3},
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

func TestControl(t *testing.T) {
	checkValues(t, []valueTest{
		// cond stops at the first clause with a true value, and gives null
		{`(set a 1) (set b 0)
(cond (when (= a 1) (set b -1)) (when (= a 2) (set b 1)) (when true (set b 9)))
b`, `-1`},
		{`(set a 2) (set b 0) (cond (when (= a 1) (set b -1)) (when (= a 2) (set b 1))) b`, `1`},
		{`(cond (when false 1) (when true 2))`, `null`},
		{`(cond)`, `null`},
		{`(set n 0) (cond (when true (set n 1)) (set n 2)) n`, `1`},
		// a when clause whose test holds stops cond, as in brain4it, where when gives true
		{`(set b 5) (cond (when true (set b 0)) (when true (set b 7))) b`, `0`},
		{`(set a 3) (cond (when (= a 1) (set b "A")) (when (= a 3) (set b "C")) (when true (set b "E"))) b`, `"C"`},
		{`(set b 1) (cond (when false (set b 2)) (= 1 1) (set b 3)) b`, `1`},
		// another clause whose value is false does not stop it, as in brain4it
		{`(set n 0) (cond null () "no" (set n 3) (set n 4)) n`, `3`},

		{`(set l (list)) (for (set i 0) (< i 5) (set i (+ i 1)) (push l i)) l`, `(0 1 2 3 4)`},
		{`(for (set i 0) (< i 3) (set i (+ i 1)) (* i 10))`, `20`},
		{`(for (set i 0) (< i 3) (set i (+ i 1)) 1 (* i 10))`, `20`},
		{`(for (set i 0) false (set i 1) 5)`, `null`},
		{`(for (set i 0) false (set i 1) 5) i`, `0`},
		{`(for (set i 0) (< i 3) (set i (+ i 1)))`, `null`},
		{`(for (set i 0) (< i 3) (set i (+ i 1))) i`, `3`},
		// the step runs after the body
		{`(set s "") (for (set i 0) (< i 2) (do (set i (+ i 1)) (set s (concat s "s"))) (set s (concat s "b"))) s`, `"bsbs"`},
		{`(set f (function (n) (local i s) (set s 0) (for (set i 1) (<= i n) (set i (+ i 1)) (set s (+ s i))) s)) (list (f 10) i s)`, `(55 null null)`},
		{`(for null null null 1)`, `null`},

		{`(eval (quote (+ 4 5)))`, `9`},
		{`(set code (list (reference "+") 2 4)) (eval code)`, `6`},
		{`(eval (quote (+ x 2)) ("x" => 3))`, `5`},
		{`(set x 1) (eval (quote x))`, `1`},
		{`(set y 2) (eval (reference "y"))`, `2`},
		{`(eval 5)`, `5`},
		{`(eval "s")`, `"s"`},
		{`(eval null)`, `null`},
		{`(eval (quote (1 (+ 1 1))))`, `(1 (+ 1 1))`},
		{`(eval (parse "(+ 1 2)"))`, `3`},
		// the first evaluation is in the current scope
		{`(local q "c" => (quote (* 2 3))) (eval c ("x" => 1))`, `6`},
		{`(set x 4) (eval (quote (+ x 2)) null)`, `6`},
		// a scope of its own: the current locals are not seen, globals are
		{`(set f (function (x) (eval (quote x) ()))) (f 5)`, `null`},
		{`(set g 7) (eval (quote (+ g y)) ("y" => 1))`, `8`},
		{`(eval (quote x) (1 "x" => 2 "x" => 3))`, `2`},
		// what the evaluation does to its locals goes back into the scope
		{`(set s ("x" => 1)) (eval (quote (set x 2)) s) s`, `("x" => 2)`},
		{`(set s ("x" => 1 "x" => 5)) (eval (quote (set x 2)) s) s`, `("x" => 2 "x" => 5)`},
		{`(set s ("x" => 1)) (eval (quote (local z "y" => 3)) s) s`, `("x" => 1 "y" => 3 "z" => null)`},
		{`(set s ()) (eval (quote (set w 4)) s) (list s w)`, `(() 4)`},
		{`(set s ("x" => 1)) (eval (quote (put s "x" 9)) s) s`, `("x" => 9)`},
		{`(set s ("x" => 1)) (try (eval (quote (do (set x 2) (throw "E"))) s) (e "*" => null)) s`, `("x" => 2)`},
		{`(set s ("x" => 1 "y" => 2)) (eval (quote (delete x)) s) s`, `("y" => 2)`},
		{`(set s ("x" => 1 "x" => 2)) (eval (quote (do (delete x) (set-local x 3))) s) s`, `("x" => 3 "x" => 2)`},

		{`(seq 1 2 3)`, `3`},
		{`(seq)`, `null`},
	})
}

func TestControlErrors(t *testing.T) {
	checkErrors(t, []errorTest{
		{`(cond (when true (throw "E" "in a clause")))`, "E", "in a clause", 1},
		{`(for (set i 0) (< i 1))`, "InvalidArgument", "for: want at least 3 arguments, got 2", 1},
		{`(for)`, "InvalidArgument", "for: want at least 3 arguments, got 0", 1},
		{"(for (set i 0)\n (< i 5)\n (set i (+ i 1))\n (if (= i 3) (throw \"E\" \"three\")))", "E", "three", 4},
		{`(for (set i 0) (< i 5) (throw "E" "step") 1)`, "E", "step", 1},
		{`(eval)`, "InvalidArgument", "eval: want 1 to 2 arguments, got 0", 1},
		{`(eval 1 2 3)`, "InvalidArgument", "eval: want 1 to 2 arguments, got 3", 1},
		{`(eval 1 2)`, "InvalidArgument", "eval: want a list as the scope, got 2", 1},
		{`(eval (quote (+ 1 "a")))`, "InvalidArgument", "+:", 1},
		{`(set e (quote (eval e))) (eval e)`, "StackOverflow", "", 1},
		{`(seq (quote))`, "InvalidArgument", "quote: want 1 argument", 1},
	})
}

func TestForIsInterrupted(t *testing.T) {
	_, _, err := runTimeout(t, `(for null true null)`, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "Interrupted") {
		t.Errorf("err = %v, want Interrupted", err)
	}
	_, _, err = runTimeout(t, `(for (set i 0) true (set i (+ i 1)) (try (sleep 1000) (ex "*" => 1)))`, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "Interrupted") {
		t.Errorf("err = %v, want Interrupted", err)
	}
}

func TestTypes(t *testing.T) {
	checkValues(t, []valueTest{
		{`(boolean "false")`, `false`},
		{`(boolean "true")`, `true`},
		{`(boolean "TRUE")`, `true`},
		{`(boolean "")`, `false`},
		{`(boolean "yes")`, `false`},
		{`(boolean 0)`, `false`},
		{`(boolean 0.0)`, `false`},
		{`(boolean -0.5)`, `true`},
		{`(boolean 7)`, `true`},
		{`(boolean (1 2))`, `true`},
		{`(boolean ())`, `false`},
		{`(boolean null)`, `false`},
		{`(boolean false)`, `false`},
		{`(boolean (quote x))`, `true`},
		{`(boolean (function () 1))`, `true`},

		{`(type-of "Brain4it")`, `"string"`},
		{`(type-of "")`, `"string"`},
		{`(type-of 45)`, `"number"`},
		{`(type-of 4.5)`, `"number"`},
		{`(type-of NaN)`, `"number"`},
		{`(type-of (quote alfa))`, `"reference"`},
		{`(type-of (quote a/b/0))`, `"reference"`},
		{`(type-of null)`, `"null"`},
		{`(type-of undefined-variable)`, `"null"`},
		{`(type-of true)`, `"boolean"`},
		{`(type-of (1 2))`, `"list"`},
		{`(type-of ())`, `"list"`},
		{`(type-of ("a" => 1))`, `"list"`},
		{`(type-of (function (x) x))`, `"list"`},
		{`(typeof 1)`, `"number"`},

		{`(subtype-of 7.4)`, `"double"`},
		{`(subtype-of 1.0)`, `"double"`},
		{`(subtype-of 1)`, `"integer"`},
		{`(subtype-of 0)`, `"integer"`},
		{`(subtype-of 2147483647)`, `"integer"`},
		{`(subtype-of -2147483648)`, `"integer"`},
		{`(subtype-of 2147483648)`, `"long"`},
		{`(subtype-of -2147483649)`, `"long"`},
		{`(subtype-of (* 65536 65536))`, `"long"`},
		{`(subtype-of "s")`, `"string"`},
		{`(subtype-of null)`, `"null"`},
		{`(subtype-of false)`, `"boolean"`},
		{`(subtype-of (quote +))`, `"hard-reference"`},
		{`(subtype-of (quote print))`, `"hard-reference"`},
		{`(subtype-of (quote seq))`, `"hard-reference"`},
		{`(subtype-of (reference "do"))`, `"hard-reference"`},
		{`(subtype-of (quote x))`, `"soft-reference"`},
		{`(subtype-of (quote a/b))`, `"soft-reference"`},
		{`(set f (function (x) x)) (subtype-of (quote f))`, `"soft-reference"`},
		{`(subtype-of (function (x) x))`, `"function-list"`},
		{`(subtype-of (quote (function (x) x)))`, `"function-list"`},
		{`(subtype-of (quote (+ 1 2)))`, `"code-list"`},
		{`(subtype-of (quote (function)))`, `"function-list"`},
		{`(subtype-of (1 2))`, `"data-list"`},
		{`(subtype-of ())`, `"data-list"`},
		{`(subtype-of (quote (x 1)))`, `"data-list"`},
		{`(subtype-of ((1 2) +))`, `"data-list"`},
		{`(subtype-of (quote ("a" => + 1)))`, `"code-list"`},
		{`(subtype-of ((quote +) 1))`, `"data-list"`},
	})
	checkErrors(t, []errorTest{
		{`(boolean)`, "InvalidArgument", "boolean: want 1 argument, got 0", 1},
		{`(boolean 1 2)`, "InvalidArgument", "boolean: want 1 argument, got 2", 1},
		{`(type-of)`, "InvalidArgument", "type-of: want 1 argument, got 0", 1},
		{`(typeof 1 2)`, "InvalidArgument", "typeof: want 1 argument, got 2", 1},
		{`(subtype-of)`, "InvalidArgument", "subtype-of: want 1 argument, got 0", 1},
		{`(type-of (throw "E" "m"))`, "E", "m", 1},
	})
}

// TestTypesOfForeignValues covers values only Go puts in: byte arrays,
// which brain4it has no type name for, and library functions.
func TestTypesOfForeignValues(t *testing.T) {
	in := New(nil)
	in.SetGlobal("b", []byte("xy"))
	in.Define("kafka-x", func(context.Context, *value.List) (any, error) { return nil, nil })
	got, _, err := run(t, in, `(list (type-of b) (subtype-of b) (boolean b)
 (subtype-of (quote kafka-x)) (subtype-of (quote (kafka-x 1))) (subtype-of (reference "kafka-x")))`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `(null null true "hard-reference" "code-list" "hard-reference")`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestVariables(t *testing.T) {
	checkValues(t, []valueTest{
		{`(exists counter)`, `false`},
		{`(set counter null) (exists counter)`, `true`},
		{`(local a) (exists a)`, `true`},
		{`(set a ("b" => (10 20))) (list (exists a/b) (exists a/b/0) (exists a/b/1) (exists a/b/2) (exists a/c) (exists a/c/0) (exists a/b/x) (exists a/b/99999999999999999999))`,
			`(true true true false false false false false)`},
		{`(set a ("b" => (10 null))) (exists a/b/1)`, `true`},
		{`(set x 1) (exists x/0)`, `false`},
		{`(exists x/0)`, `false`},
		{`(exists (reference "x"))`, `false`},
		{`(set x 1) (exists (reference "x"))`, `true`},
		{`(set a ("b" => 1)) (exists (reference ("a" "b")))`, `true`},
		{`(set f (function (p) (list (exists p) (exists q)))) (f null)`, `(true false)`},
		{`(set q 1) (set f (function () (exists q))) (f)`, `true`},
		{`(local z) (set f (function () (exists z))) (f)`, `false`},

		{`(set x 1) (list (delete x) (exists x) (delete x) x)`, `(true false false null)`},
		{`(delete nothing)`, `false`},
		{`(local a) (list (delete a) (exists a))`, `(true false)`},
		// the local first, then the global
		{`(set x 1) (set f (function (x) (delete x) x)) (list (f 2) x)`, `(1 1)`},
		{`(set x 1) (set f (function (x) (list (delete x) (delete x) (delete x)))) (list (f 2) (exists x))`, `((true true false) false)`},
		{`(set a ("b" => (10 20 30) "c" => 1)) (list (delete a/b/1) a)`, `(true ("b" => (10 30) "c" => 1))`},
		{`(set a ("b" => (10 20 30) "c" => 1)) (list (delete a/c) a)`, `(true ("b" => (10 20 30)))`},
		{`(set a ("k" => 1 "k" => 2)) (delete a/k) a`, `("k" => 2)`},
		{`(set a (1 2)) (list (delete a/2) a)`, `(false (1 2))`},
		{`(set a (1 2)) (list (delete a/z) a)`, `(false (1 2))`},
		{`(set a (1 2)) (list (delete a/z/0) a)`, `(false (1 2))`},
		{`(set x 1) (list (delete x/0) x)`, `(false 1)`},
		{`(set a (1 2)) (delete (reference ("a" 0))) a`, `(2)`},

		// brain4it's example: set-local shadows the global in the function
		{`(set y 23) (set fn (function (x) (set-local y (+ x 23)))) (list (fn 7) y)`, `(30 23)`},
		{`(set-local z 4) z`, `4`},
		{`(set-local z 4) (set f (function () z)) (f)`, `null`},
		{`(set z 1) (set-local z 4) (list z (delete z) z)`, `(4 true 1)`},
		{`(set-local (reference "w") 5) w`, `5`},
		{`(set f (function () (set-local v 1) (set v 2) v)) (list (f) v)`, `(2 null)`},

		{`(reference "persons")`, `persons`},
		{`(reference (quote alfa))`, `alfa`},
		{`(reference "persons/5/name")`, `persons/5/name`},
		{`(reference ("persons" 5 "name"))`, `persons/5/name`},
		{`(reference ("persons" 5.0 0))`, `persons/5/0`},
		{`(reference ("x"))`, `/x`},
		{`(reference "+")`, `+`},
		{`(set a ("b" => (10 20))) (eval (reference ("a" "b" 1)))`, `20`},
		{`(type-of (reference "x"))`, `"reference"`},
	})
}

func TestVariablesErrors(t *testing.T) {
	checkErrors(t, []errorTest{
		{`(exists)`, "MissingArgument", "want a variable name or a reference as argument 1", 1},
		{`(exists a b)`, "InvalidArgument", "exists: want 1 argument, got 2", 1},
		{`(exists 1)`, "InvalidReference", "exists: want a variable name or a reference, got 1", 1},
		{`(exists "x")`, "InvalidReference", `exists: want a variable name or a reference, got the string "x"`, 1},
		{`(exists (list 1))`, "InvalidReference", "got the list (1)", 1},
		{`(exists null)`, "InvalidReference", "got null", 1},
		{`(exists (throw "E" "m"))`, "E", "m", 1},
		{`(delete)`, "MissingArgument", "want a variable name or a reference as argument 1", 1},
		{`(delete 5)`, "InvalidReference", "delete: want a variable name or a reference, got 5", 1},
		{`(set-local x)`, "InvalidArgument", "set-local: want 2 arguments, got 1", 1},
		{`(set-local 1 2)`, "InvalidReference", "set-local: want a variable name or a reference, got 1", 1},
		{`(set-local a/b 1)`, "InvalidArgument", "set-local: a/b is a path, want a variable name", 1},
		{`(reference)`, "InvalidArgument", "reference: want 1 argument, got 0", 1},
		{`(reference 5)`, "InvalidReference", "reference: want a string, a list or a reference, got 5", 1},
		{`(reference null)`, "InvalidReference", "got null", 1},
		{`(reference "")`, "InvalidReference", `reference: the string "" is not a reference`, 1},
		{`(reference "a b")`, "InvalidReference", "is not a reference", 1},
		{`(reference "12")`, "InvalidReference", "is not a reference", 1},
		{`(reference "true")`, "InvalidReference", "is not a reference", 1},
		{`(reference "(x)")`, "InvalidReference", "is not a reference", 1},
		{`(reference ())`, "InvalidReference", "reference: an empty list is no path", 1},
		{`(reference (5 "x"))`, "InvalidReference", "reference: path part 1 is 5, want a variable name", 1},
		{`(reference ("a" -1))`, "InvalidReference", "reference: path part 2 is -1, want a name or an index from 0", 1},
		{`(reference ("a" 1.5))`, "InvalidReference", "path part 2 is 1.5", 1},
		{`(reference ("a" "1"))`, "InvalidReference", "path part 2", 1},
		{`(reference ("a" ""))`, "InvalidReference", "path part 2", 1},
		{`(reference ("a" null))`, "InvalidReference", "path part 2 is null", 1},
		{`(reference ("a" (1)))`, "InvalidReference", "path part 2 is the list (1)", 1},
	})
}

func TestParse(t *testing.T) {
	checkValues(t, []valueTest{
		{`(parse "(1 2 3)")`, `(1 2 3)`},
		{`(parse "(+ 1 2)")`, `(+ 1 2)`},
		{`(parse "42")`, `42`},
		{`(parse " x ")`, `x`},
		{`(parse "\"s\"")`, `"s"`},
		{`(parse "(\"a\" => 1 b => (2))")`, `("a" => 1 "b" => (2))`},
		{`(parse "")`, `null`},
		{"(parse \"  \\n \")", `null`},
		{`(parse null)`, `null`},
		{`(parse "null")`, `null`},
		{`(parse "(1)" null)`, `(1)`},
		{`(parse "(1)" "bpl")`, `(1)`},
		{`(parse "(1)" "other")`, `(1)`},
		{`(set l (parse "(1)")) (push l 2) (list l (parse "(1)"))`, `((1 2) (1))`},

		{`(parse "[2, 4, 6]" "json")`, `(2 4 6)`},
		{`(parse "{\"a\": 1, \"b\": [true, null, 2.5, \"s\", {}]}" "json")`, `("a" => 1 "b" => (true null 2.5 "s" ()))`},
		{`(parse "{\"a\":1,\"b\":2,\"a\":3}" "json")`, `("a" => 3 "b" => 2)`},
		{`(parse "{\"\": 1}" "json")`, `(1)`},
		{`(parse "[]" "json")`, `()`},
		{`(parse "5" "json")`, `5`},
		{`(parse "-5.0" "json")`, `-5`},
		{`(subtype-of (parse "-5.0" "json"))`, `"double"`},
		{`(parse "1e400" "json")`, `Infinity`},
		{`(parse "12345678901234567890" "json")`, `1.2345678901234567E19`},
		{`(parse " \"x\\n\" " "json")`, `"x\n"`},
		{`(parse "" "json")`, `null`},
		{`(parse "null" "json")`, `null`},
		{`(parse "[[[1]]]" "json")`, `(((1)))`},
	})
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	checkErrors(t, []errorTest{
		{`(parse)`, "InvalidArgument", "parse: want 1 to 2 arguments, got 0", 1},
		{`(parse "(1")`, "InvalidArgument", "parse: line 1, column", 1},
		{`(parse ")")`, "InvalidArgument", "parse: line 1, column 1: unexpected )", 1},
		{`(parse "1 2")`, "InvalidArgument", "parse: want one expression, got 2", 1},
		{`(parse 5)`, "InvalidArgument", "parse: want a string, got 5", 1},
		{`(parse (1))`, "InvalidArgument", "parse: want a string, got the list (1)", 1},
		{`(parse "1" 2)`, "InvalidArgument", `parse: want a format such as "json", got 2`, 1},
		{`(parse "<a/>" "xml")`, "InvalidArgument", "parse: the xml format is not supported", 1},
		{`(parse "[1," "json")`, "InvalidArgument", "parse: JSON: the text ends too soon", 1},
		{`(parse "[1] 2" "json")`, "InvalidArgument", "parse: JSON: text after the value", 1},
		{`(parse "{\"a\" 1}" "json")`, "InvalidArgument", "parse: JSON:", 1},
		{`(parse "]" "json")`, "InvalidArgument", "parse: JSON:", 1},
		{`(parse "(1)" "json")`, "InvalidArgument", "parse: JSON:", 1},
		{`(parse "` + deep + `" "json")`, "InvalidArgument", "parse: JSON: arrays and objects nest too deep", 1},
	})
}

func TestScopes(t *testing.T) {
	checkValues(t, []valueTest{
		{`(global-scope)`, `()`},
		{`(set b 2) (set a 1) (global-scope)`, `("a" => 1 "b" => 2)`},
		{`(set a 1) (local x) (set-local y 1) (global-scope)`, `("a" => 1)`},
		// a copy: changing it changes no variable
		{`(set a 1) (put (global-scope) "a" 5) (put (global-scope) "n" 5) (list a n)`, `(1 null)`},
		// but its values are the variables' own
		{`(set l (list 1)) (push (get (global-scope) "l") 2) l`, `(1 2)`},
		{`(set f (function () (global-scope))) (set a 1) (f)`, `("a" => 1 "f" => (function () (global-scope)))`},

		{`(local-scope)`, `()`},
		{`(local a b) (set a 8) (set b 6) (local-scope)`, `("a" => 8 "b" => 6)`},
		{`(local b a) (set g 1) (local-scope 0)`, `("a" => null "b" => null)`},
		{`(set f (function (x y) (local-scope))) (f 1)`, `("x" => 1 "y" => null)`},
		{`(set f (function args (local-scope))) (f 1 2)`, `("args" => (1 2))`},
		{`(local a) (set f (function () (local-scope))) (f)`, `()`},
		{`(local a) (set a 1) (put (local-scope) "a" 2) a`, `1`},
		{`(local-scope -1)`, `null`},
		{`(local-scope -0.5)`, `()`},
		{`(local-scope 0.5)`, `()`},
	})
	checkErrors(t, []errorTest{
		{`(global-scope 1)`, "InvalidArgument", "global-scope: want 0 arguments, got 1", 1},
		{`(local-scope 1 2)`, "InvalidArgument", "local-scope: want 0 to 1 argument, got 2", 1},
		{`(local-scope 1)`, "InvalidArgument", "local-scope: depth 1: a function cannot see its callers' scopes", 1},
		{`(local-scope "x")`, "InvalidArgument", `local-scope: want a depth, got the string "x"`, 1},
		{`(local-scope null)`, "InvalidArgument", "local-scope: want a depth, got null", 1},
	})
}

func TestFunctions(t *testing.T) {
	checkValues(t, []valueTest{
		{`(functions "do|seq")`, `(do seq)`},
		{`(functions "type.*")`, `(type-of typeof)`},
		{`(functions "ty")`, `()`},
		{`(functions "nothing-matches-this")`, `()`},
		{`(functions "se[qt]|if")`, `(if seq set)`},
		{`(type-of (get (functions "do") 0))`, `"reference"`},
		{`(= (functions) (functions null) (functions ".*"))`, `true`},
	})
	checkErrors(t, []errorTest{
		{`(functions "(")`, "InvalidArgument", `functions: pattern the string "("`, 1},
		{`(functions "a)|(b")`, "InvalidArgument", "functions: pattern", 1},
		{`(functions 1)`, "InvalidArgument", "functions: want a pattern string, got 1", 1},
		{`(functions "a" "b")`, "InvalidArgument", "functions: want 0 to 1 argument, got 2", 1},
	})
}

// TestFunctionsListsWhatIsRegistered checks that functions reads the
// builtins and library functions at run time: every one, once, in order.
func TestFunctionsListsWhatIsRegistered(t *testing.T) {
	in := New(nil)
	nop := func(context.Context, *value.List) (any, error) { return nil, nil }
	in.Define("kafka-b", nop)
	in.Define("kafka-a", nop)
	in.Define("print", nop) // a builtin's name: listed once
	got, _, err := run(t, in, `(functions)`)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"kafka-a", "kafka-b"}
	for name := range builtins {
		names = append(names, name)
	}
	slices.Sort(names)
	want := "(" + strings.Join(names, " ") + ")"
	if got != want {
		t.Errorf("(functions) = %s, want %s", got, want)
	}
	for _, name := range []string{"cond", "for", "eval", "functions", "seq", "typeof", "do", "+", "list"} {
		if !slices.Contains(names, name) {
			t.Errorf("%s is not a builtin", name)
		}
	}
	if got, _, err := run(t, in, `(functions "kafka-.*|print")`); err != nil || got != `(kafka-a kafka-b print)` {
		t.Errorf(`(functions "kafka-.*|print") = %s, %v`, got, err)
	}
}

func TestReferenceList(t *testing.T) {
	checkValues(t, []valueTest{
		{`(reference-list alfa)`, `("alfa")`},
		{`(reference-list persons/5/name)`, `("persons" 5 "name")`},
		{`(reference-list (reference "a/b"))`, `("a" "b")`},
		{`(reference-list (reference ("persons" 5 "name")))`, `("persons" 5 "name")`},
	})
	checkErrors(t, []errorTest{
		{`(reference-list)`, "MissingArgument", "want a variable name or a reference as argument 1", 1},
		{`(reference-list 5)`, "InvalidReference", "reference-list: want a variable name or a reference, got 5", 1},
		{`(reference-list "x")`, "InvalidReference", "want a variable name or a reference", 1},
	})
}

func TestHelp(t *testing.T) {
	in := New(nil)
	in.Define("kafka-send", func(context.Context, *value.List) (any, error) { return nil, nil })
	for src, want := range map[string]string{
		`(help first)`:         `"(first list) gives the first element of list, null when it is empty or\nnull."`,
		`(help (quote first))`: `"(first list) gives the first element of list, null when it is empty or\nnull."`,
		`(help "first")`:       `"(first list) gives the first element of list, null when it is empty or\nnull."`,
		`(help "no-such")`:     `null`,
		`(help kafka-send)`:    `"kafka-send is a library function: its reference is docs/functions.md, and the kafkabpl package's documentation (go doc github.com/brain4it/kafkabpl) has the rest."`,
	} {
		got, _, err := run(t, in, src)
		if err != nil || got != want {
			t.Errorf("%s = %s, %v; want %s", src, got, err, want)
		}
	}
	checkErrors(t, []errorTest{
		{`(help 5)`, "InvalidReference", "help: want a function name, got 5", 1},
		{`(help)`, "MissingArgument", "help: want a function name as argument 1", 1},
		{`(help sin format => "html")`, "InvalidArgument", `help: format "html" is not "string" or "list"`, 1},
		{`(help sin colour => "red")`, "InvalidArgument", `help: unknown argument "colour"`, 1},
		{`(help sin 2)`, "InvalidArgument", "help: want 0 arguments besides the named ones, got 1", 1},
	})
}

// help works for every builtin, with brain4it's named arguments.
func TestHelpEveryBuiltin(t *testing.T) {
	for name := range builtins {
		got, _, err := run(t, nil, `(help "`+name+`")`)
		if err != nil || len(got) < 10 || got[0] != '"' {
			t.Errorf("(help %q) = %s, %v", name, got, err)
		}
	}
	checkValues(t, []valueTest{
		{`(type-of (help sin))`, `"string"`},
		{`(= (help sin) (help sin format => "string" language => "en"))`, `true`},
		{`(get (help sin format => "list") "name")`, `"sin"`},
		{`(= (get (help sin format => "list" language => "en") "description") (help sin))`, `true`},
		{`(help system)`, `"system is a function of brain4it's core library that is not available here: it runs operating-system commands, which kafkabpl's scripts may not do."`},
		{`(help "no-such" format => "list")`, `null`},
	})
}

// TestEqual checks Equal, exported for test drivers such as streamtest's
// assert-equal: it compares as = does.
func TestEqual(t *testing.T) {
	named := value.NewList(int64(1))
	named.SetName(0, "a")
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{3.0, int64(3), true},
		{int64(3), 3.5, false},
		{value.NewList(int64(1)), named, true}, // = does not compare names
		{"3", int64(3), false},
		{nil, nil, true},
	} {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", value.Format(c.a), value.Format(c.b), got, c.want)
		}
	}
}
