package bpl

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

func TestList(t *testing.T) {
	checkValues(t, []valueTest{
		{`(set s 0) (for-each (1 2 3) x (set s (+ s x))) s`, `6`},
		{`(for-each (1 2 3) x (* x 10))`, `30`},
		{`(set r (list)) (for-each ("a" => 1 2) (k v) (push r k v)) r`, `("a" 1 null 2)`},
		{`(for-each null x 1)`, `null`},
		{`(for-each () x 1)`, `null`},
		{`(set l (list 1 2)) (for-each l x (push l x)) l`, `(1 2 1 2)`},
		{`(list)`, `()`},
		{`(list 1 (+ 1 1) "k" => (* 2 2) x ("d"))`, `(1 2 "k" => 4 null ("d"))`},
		{`(get (10 20 30) 1)`, `20`},
		{`(get (10 20 30) 1.0)`, `20`},
		{`(get (10 20 30) 3)`, `null`},
		{`(get (10 20 30) -1)`, `null`},
		{`(get (10 20 30) 1e300)`, `null`},
		{`(get ("a" => 1 "b" => 2 "b" => 3) "b")`, `2`},
		{`(get ("a" => 1) "z")`, `null`},
		{`(get null 0)`, `null`},
		{`(get 5)`, `5`},
		{`(set l (list 1 2)) (put l 0 9)`, `1`},
		{`(set l (list 1 2)) (put l 0 9) l`, `(9 2)`},
		{`(set l (list 1 2)) (put l 2 3) l`, `(1 2 3)`},
		{`(set l (list 1 2)) (put l 4 3) l`, `(1 2 null null 3)`},
		{`(set l (list 1 2)) (put l 4 3)`, `null`},
		{`(set l (list "a" => 1)) (put l "a" 2) (put l "b" 3) l`, `("a" => 2 "b" => 3)`},
		{`(set l (list "a" => 1)) (put l "a" 2)`, `1`},
		{`(set l (list "a" => 1 "a" => 2)) (put l "a" 9) l`, `("a" => 9 "a" => 2)`},
		{`(size (1 2 3))`, `3`},
		{`(size "héllo")`, `5`},
		{`(size null)`, `0`},
		{`(size ())`, `0`},
		{`(push (list 1) 2 "k" => 3)`, `(1 2 "k" => 3)`},
		{`(set l (list)) (push l (list 1)) (push l (list 1)) l`, `((1) (1))`},
		{`(set a (list 1)) (push (list) a a)`, `((<#1> 1) <@1>)`},
		{`(concat "a" 1 2.5 null (1 "b"))`, `"a12.5null(1 \"b\")"`},
		{`(concat)`, `""`},
		{`(concat (1) ("k" => 2) null ())`, `(1 "k" => 2)`},
	})
}

func TestListErrors(t *testing.T) {
	checkErrors(t, []errorTest{
		{`(for-each 5 x 1)`, "InvalidArgument", "for-each: want a list, got 5", 1},
		{`(for-each (1) 5 1)`, "InvalidArgument", "want a variable name or (name value)", 1},
		{`(get 5 1)`, "InvalidArgument", "get: want a list, got 5", 1},
		{`(get (1) true)`, "InvalidArgument", "get: want an index or a name, got true", 1},
		{`(get (1) 0.5)`, "InvalidArgument", "get: want an index or a name", 1},
		{`(get (1) "")`, "InvalidArgument", "get: want an index or a name", 1},
		{`(put (1) -1 0)`, "InvalidArgument", "put: index out of range: the list has 1 element", 1},
		{`(put (1) 1048578 0)`, "InvalidArgument", "put: index out of range: the list has 1 element (at most 1048576 nulls", 1},
		{`(put null 0 0)`, "InvalidArgument", "put: want a list, got null", 1},
		{`(push "s" 1)`, "InvalidArgument", "push: want a list, got the string \"s\"", 1},
		{`(size 5)`, "InvalidArgument", "size: want a list or a string, got 5", 1},
		{`(concat (1) 2)`, "InvalidArgument", "concat: argument 2 is 2", 1},
		{"(set s \"aaaaaaaaaaaaaaaa\")\n(while true (set s (concat s s)))", "InvalidArgument", "concat: result longer than", 2},
		{"(set l (list 1))\n(while true (set l (concat l l)))", "InvalidArgument", "concat: result longer than", 2},
	})
}

func TestListAccess(t *testing.T) {
	checkValues(t, []valueTest{
		// first, last
		{`(first (1 2 3))`, `1`},
		{`(first ())`, `null`},
		{`(first null)`, `null`},
		{`(first ("a" => (1) 2))`, `(1)`},
		{`(last (1 2 3))`, `3`},
		{`(last ())`, `null`},
		{`(last null)`, `null`},
		// pop
		{`(set l (list 1 "k" => 2)) (list (pop l) l)`, `(2 (1))`},
		{`(set l (list)) (list (pop l) l)`, `(null ())`},
		// get with paths
		{`(get (1 (2 3)) (1 0))`, `2`},
		{`(get (1 ("a" => (5 6))) (1 "a" 1))`, `6`},
		{`(get (1 2) ())`, `(1 2)`},
		{`(get (1 2) (5 0))`, `null`},
		{`(get (1 2) (0 0))`, `null`},
		{`(get (1 2) ("z"))`, `null`},
		{`(get (1 2) (-1))`, `null`},
		// put with paths
		{`(set l (list 1 (list 2 3))) (put l (1 0) 9) l`, `(1 (9 3))`},
		{`(set l (list 1 (list 2 3))) (put l (1 2) 4) l`, `(1 (2 3 4))`},
		{`(put (1 (2 3)) (1 0) 9)`, `2`},
		{`(set l (list "a" => (list))) (put l ("a" "b") 1) l`, `("a" => ("b" => 1))`},
		{`(set l (list 1)) (put l (0.0) 7) l`, `(7)`},
		// has
		{`(has (1 2 3) 0)`, `true`},
		{`(has (1 2 3) 2.0)`, `true`},
		{`(has (1 2 3) 3)`, `false`},
		{`(has (1 2 3) -1)`, `false`},
		{`(has (1 2 3) 0.5)`, `false`},
		{`(has (1 "x" => 2 3) "x")`, `true`},
		{`(has (1 "x" => 2 3) "y")`, `false`},
		{`(has (1 "x" => 2 3) "")`, `false`},
		{`(has (1 (2 3)) (1 1))`, `true`},
		{`(has (1 (2 3)) (1 2))`, `false`},
		{`(has (1 (2 3)) (0 0))`, `false`},
		{`(has (1 (2 3)) ())`, `false`},
		{`(has (1 (2 3)) (true))`, `false`},
		{`(has (1) null)`, `false`},
		{`(has (1) true)`, `false`},
		{`(has null 0)`, `false`},
		// names, name-index, get-name, put-name
		{`(names ("a" => 5 8 9 "b" => 3))`, `("a" "b")`},
		{`(names (1 2))`, `()`},
		{`(names null)`, `()`},
		{`(name-index ("a" => 4 "b" => 6) "b")`, `1`},
		{`(name-index ("a" => 4 "a" => 6) "a")`, `0`},
		{`(name-index ("a" => 4) "z")`, `-1`},
		{`(name-index ("a" => 4) "")`, `-1`},
		{`(name-index ("a" => 4) null)`, `-1`},
		{`(name-index null "a")`, `-1`},
		{`(get-name ("a" => 2 "b" => 5) 1)`, `"b"`},
		{`(get-name (3 "a" => 2 "b" => 5) 0)`, `null`},
		{`(get-name ("a" => 2) 1.0)`, `null`},
		{`(get-name ("a" => 2) 0.0)`, `"a"`},
		{`(get-name ("a" => 2) -1)`, `null`},
		{`(get-name null 0)`, `null`},
		{`(getname ("a" => 2) 0)`, `"a"`},
		{`(put-name (1 2 3) 1 "a")`, `(1 "a" => 2 3)`},
		{`(put-name (1 "a" => 2 3) 1 null)`, `(1 2 3)`},
		{`(put-name (1 "a" => 2 3) 1 "")`, `(1 2 3)`},
		{`(put-name (1 "a" => 2 3) 2 "a")`, `(1 2 "a" => 3)`},
		{`(put-name ("a" => 1 "a" => 2 3) 2 "a")`, `(1 2 "a" => 3)`},
		{`(put-name ("a" => 1) 0 "a")`, `("a" => 1)`},
		{`(putname (1) 0.0 "b")`, `("b" => 1)`},
		// empty
		{`(empty (1 2 4))`, `false`},
		{`(empty ())`, `true`},
		{`(empty null)`, `true`},
		// clone
		{`(clone (1 "a" => (2 4)))`, `(1 "a" => (2 4))`},
		{`(set a (list 1 (list 2))) (set c (clone a)) (push c 3) (push (get c 1) 9) (list a c)`, `((1 (<#1> 2 9)) (1 <@1> 3))`},
		{`(set a (list 1 (list 2))) (set c (clone a true)) (push (get c 1) 9) (list a c)`, `((1 (2)) (1 (2 9)))`},
		{`(set s (list 1)) (set a (list s s)) (set c (clone a true)) (push (get c 0) 2) (list a c)`, `(((<#1> 1) <@1>) ((<#2> 1 2) <@2>))`},
		{`(set a (list 1)) (set i 0) (while (< i 70) (set a (list a a)) (set i (+ i 1))) (size (clone a true))`, `2`},
		{`(clone 5)`, `5`},
		{`(clone null true)`, `null`},
		{`(clone "s")`, `"s"`},
		{`(set f (function (x) x)) (= f (clone f true))`, `true`},
		// a cloned function is another function of the same code
		{`(list (= (function (x) x) (function (x) x)) (= (function (x) x) (function (y) y)))`, `(true false)`},
		{`(set double (function (n) (* 2 n))) (=== double (clone double true))`, `false`},
		{`(set double (function (n) (* 2 n))) (=== double (clone double))`, `false`},
		{`(set double (function (n) (* 2 n))) (set twice (clone double true)) (twice 21)`, `42`},
		{`(set double (function (n) (* 2 n))) (set fs (list double double)) (set c (clone fs true)) (list (=== (get c 0) double) (=== (get c 0) (get c 1)))`, `(false true)`},
		{`(set double (function (n) (* 2 n))) (set c (clone (list double))) (=== (get c 0) double)`, `true`},
		{`(clone ())`, `()`},
	})
}

func TestListChange(t *testing.T) {
	checkValues(t, []valueTest{
		// insert
		{`(insert (1 2 4) 2 3)`, `(1 2 3 4)`},
		{`(insert (1 2) 9)`, `(9 1 2)`},
		{`(insert (1 2) 2 3)`, `(1 2 3)`},
		{`(insert (1 2) 1.0 "k" => 3)`, `(1 "k" => 3 2)`},
		{`(insert ("a" => 1) "b" => 0)`, `("b" => 0 "a" => 1)`},
		{`(insert () 0 1)`, `(1)`},
		{`(insert 5 0 1)`, `null`},
		{`(insert null 1)`, `null`},
		{`(set l (list 1)) (insert l (list 2)) l`, `((2) 1)`},
		// remove
		{`(remove (1 2 3) 1)`, `2`},
		{`(set l (list "a" => 1 "b" => 2)) (remove l "a") l`, `("b" => 2)`},
		{`(set l (list "a" => 1 "b" => 2)) (list (remove l "z") l)`, `(null ("a" => 1 "b" => 2))`},
		{`(set l (list 1 2)) (list (remove l) l)`, `(null ())`},
		{`(set l (list 1 (list 2 "x" => 3))) (list (remove l (1 "x")) l)`, `(3 (1 (2)))`},
		{`(set l (list 1 (list 2 3))) (list (remove l (1 0.0)) l)`, `(2 (1 (3)))`},
		{`(set l (list 1 2)) (remove l 1.0) l`, `(1)`},
		// clear, an old name brain4it gave to delete, empties a list here
		{`(set l (list 1 "a" => 2)) (list (clear l) l)`, `(null ())`},
		{`(set l (list)) (clear l) (push l 1)`, `(1)`},
		// append
		{`(append (1 2 3) (4 5 6))`, `(1 2 3 4 5 6)`},
		{`(append (1 "a" => 2) (3 "a" => 8 9))`, `(1 "a" => 8 3 9)`},
		{`(append (1) null)`, `(1)`},
		{`(append (1) ())`, `(1)`},
		{`(append () (1) ("k" => 2))`, `(1 "k" => 2)`},
		{`(set l (list 1 "a" => 2)) (append l l) l`, `(1 "a" => 2 1)`},
		{`(set l (list 1)) (set m (list 2)) (append l m) (push m 3) (list l m)`, `((1 2) (2 3))`},
		// reverse
		{`(reverse (1 2 3))`, `(3 2 1)`},
		{`(reverse ())`, `()`},
		{`(reverse (1))`, `(1)`},
		{`(reverse ("a" => 1 2 "b" => 3 4))`, `(4 "b" => 3 2 "a" => 1)`},
		{`(set l (list 1 2)) (reverse l) l`, `(2 1)`},
		// sublist
		{`(sublist (1 2 3 4 5) 2)`, `(3 4 5)`},
		{`(sublist (1 2 3 4 5) 2 4)`, `(3 4)`},
		{`(sublist (1 "a" => 2 3) 1 2)`, `("a" => 2)`},
		{`(sublist (1 2 3) 3)`, `()`},
		{`(sublist (1 2 3) 0 null)`, `(1 2 3)`},
		{`(sublist (1 2 3) 2 1)`, `()`},
		{`(sublist (1 2 3) 9 2)`, `()`},
		{`(sublist (1 2 3) -1 -2)`, `()`},
		{`(sublist (1 2 3) 1.0 2.0)`, `(2)`},
		{`(sublist null 0)`, `()`},
		{`(set l (list 1 (list 2))) (set s (sublist l 1)) (push (get s 0) 3) l`, `(1 (2 3))`},
	})
}

func TestListWalk(t *testing.T) {
	checkValues(t, []valueTest{
		// foreach is for-each's old name
		{`(set s 0) (foreach (1 2 3) x (set s (+ s x))) s`, `6`},
		// apply
		{`(apply (1 2 3) x (* 2 x))`, `(2 4 6)`},
		{`(apply ("a" => 2 3 "b" => 7) x (* x x))`, `("a" => 4 9 "b" => 49)`},
		{`(apply () x (* 2 x))`, `()`},
		{`(apply null x (* 2 x))`, `()`},
		{`(apply (1 2) (function (x) (* 10 x)))`, `(10 20)`},
		{`(set double (function (x) (* 2 x))) (apply (1 2) double)`, `(2 4)`},
		{`(apply (1 2) (quote y) (+ y 1))`, `(2 3)`},
		{`(set l (list 1 2)) (apply l x (size (push l x)))`, `(3 4)`},
		{`(set l (list 1 2 3)) (apply l x (pop l))`, `(3 2)`},
		{`(apply (1) x x) x`, `1`},
		// find
		{`(find (2 4 7) x (= (- x (* 2 (/ x 2))) 0))`, `(2 4 7)`},
		{`(find (2 4 7) x (< x 5))`, `(2 4)`},
		{`(find ("a" => 2 "b" => 3 4) x (!= x 3))`, `("a" => 2 4)`},
		{`(find (1 2) x "yes")`, `()`},
		{`(find null x true)`, `()`},
		{`(find (1 2 3) (function (x) (> x 1)))`, `(2 3)`},
		// locate, and its old name indexof
		{`(locate (2 5 7) x (= x 5))`, `1`},
		{`(locate (2 5 5) x (= x 5) 2)`, `2`},
		{`(locate (2 5 5) x (= x 5) 3)`, `-1`},
		{`(locate (2 5 5) x (= x 5) 99)`, `-1`},
		{`(locate (2 5 5) x (= x 5) null)`, `1`},
		{`(locate (2 5 5) x (= x 5) 2.0)`, `2`},
		{`(locate (2 5 7) x (= x 9))`, `-1`},
		{`(locate () x true)`, `-1`},
		{`(locate null x true)`, `-1`},
		{`(locate (2 5 7) (function (x) (> x 2)))`, `1`},
		{`(locate (2 5 7) (function (x) (> x 2)) 2)`, `2`},
		{`(indexof (2 5 7) x (= x 7))`, `2`},
		// sort
		{`(sort (7 4 6))`, `(4 6 7)`},
		{`(sort (2.5 1 -3 1.5 2))`, `(-3 1 1.5 2 2.5)`},
		{`(sort ("a" => 1.0 "b" => 1 "c" => 0.5 "d" => 1.0))`, `("c" => 0.5 "a" => 1 "b" => 1 "d" => 1)`},
		{`(sort ("b" => 3 1 "a" => 2))`, `(1 "a" => 2 "b" => 3)`},
		{`(sort ("b" "a" "B" "" "ab"))`, `("" "B" "a" "ab" "b")`},
		{"(sort (\"\uffff\" \"\U0001F600\" \"a\"))", "(\"a\" \"\U0001F600\" \"\uffff\")"},
		{`(sort (list (quote b) (quote a)))`, `(a b)`},
		{`(sort ())`, `()`},
		{`(sort null)`, `()`},
		{`(sort ((1 2)))`, `((1 2))`},
		{`(sort (9223372036854775807 9.3e18 9223372036854775806))`, `(9223372036854775806 9223372036854775807 9.3E18)`},
		{`(sort (3 2 1) null)`, `(1 2 3)`},
		{`(sort ("x" => 9007199254740993 "y" => 9007199254740992.0))`, `("y" => 9.007199254740992E15 "x" => 9007199254740993)`},
		{`(set l (list 3 1 2)) (sort l) l`, `(3 1 2)`},
		{`(sort ((7) (4) (2)) (function (a b) (- (first a) (first b))))`, `((2) (4) (7))`},
		{`(sort (1 2 3) (function (a b) (- b a)))`, `(3 2 1)`},
		{`(sort (0.2 0.1 0.3) (function (a b) (- a b)))`, `(0.1 0.2 0.3)`},
		{`(sort ((1 "a") (0 "b") (1 "c") (0 "d")) (function (a b) (- (first a) (first b))))`, `((0 "b") (0 "d") (1 "a") (1 "c"))`},
		{`(sort (3 1 2 5 4) (function (a b) 0))`, `(3 1 2 5 4)`},
		{`(size (sort (3 1 2 5 4) (function (a b) 1)))`, `5`},
		{`(size (sort (3 1 2 5 4 9 8) (function (a b) (if (= a 2) -1 1))))`, `7`},
	})
}

func TestListMatch(t *testing.T) {
	checkValues(t, []valueTest{
		{`(match (quote (* a (+ a 3) c)) (quote (+ a? b?)) (= b? 3))`, `true`},
		{`(match (quote (* a (+ a 3) c)) (quote (+ a? b?)) (= b? 4))`, `false`},
		{`(match (quote (* a (+ a 3) c)) (quote (+ a? b?))) (list a? b? match$ match_parent$ match_position$ match_map$)`,
			`(a 3 (<#1> + a 3) (* a <@1> c) 2 ("a?" => a "b?" => 3))`},
		{`(match (1 2) (x? y?)) (list x? y? match_parent$ match_position$)`, `(1 2 null -1)`},
		{`(match (1 2) (1 2))`, `true`},
		{`(match (1 2) (1))`, `false`},
		{`(match (1 2) (1 2 3))`, `false`},
		{`(match (1 2) ())`, `false`},
		{`(match () ())`, `true`},
		{`(match null ())`, `true`},
		{`(match (1 ()) ())`, `true`},
		{`(match (1 2.0) (1.0 2))`, `true`},
		{`(match ("a" => 1 2) (1 "b" => 2))`, `true`},
		{`(match (1 (2 3)) (x? (y? z?))) (list x? y? z?)`, `(1 2 3)`},
		{`(match (1 (2 3)) (x? y?)) y?`, `(2 3)`},
		{`(match (1 (2 3)) (x? (y?)))`, `false`},
		{`(match (1 2) (x? x?))`, `false`},
		{`(match (2 2.0) (x? x?))`, `true`},
		{`(match ((1 2) ("k" => 1 2)) (x? x?))`, `true`},
		{`(match (1 2 3) (a... 3)) a...`, `(1 2)`},
		{`(match (1 2 3) (1 a... b...)) (list a... b...)`, `((2 3) ())`},
		{`(set r (list)) (match (1 2 3) (x... y...) (do (push r (list x... y...)) false)) r`,
			`(((1 2 3) ()) ((1 2) (3)) ((1) (2 3)) (() (1 2 3)))`},
		{`(match (1 2 1 2) (x... x...)) x...`, `(1 2)`},
		{`(match (1 2 1 3) (x... x...))`, `false`},
		{`(match (1 "k" => 2) (x...)) x...`, `(1 "k" => 2)`},
		{`(set r (list)) (match (1 (2 (3)) ((4))) (x?) (do (push r x?) false)) r`, `(3 (4) 4)`},
		{`(set r (list)) (match (1 (2 (3)) ((4))) (x?) (do (push r match_position$) false)) r`, `(1 2 0)`},
		// the action may replace what matched, through its parent
		{`(set code (quote (+ 1 (+ 2 3)))) (match code (quote (+ 2 3)) (do (put match_parent$ match_position$ 5) true)) code`, `(+ 1 5)`},
		{`(set l (list (list 1) (list 1))) (match l (1) (do (clear match$) false)) l`, `(() ())`},
		{`(set l (list 1 2 3)) (match l (x... y...) (do (clear l) false))`, `false`},
		{`(set a (list 1)) (set i 0) (while (< i 20) (set a (list a a)) (set i (+ i 1))) (match a (1))`, `true`},
	})
}

func TestListMerge(t *testing.T) {
	checkValues(t, []valueTest{
		{`(merge (quote (+ 2 3 x (* x y))) ("x" => 4 "y" => 5))`, `(+ 2 3 4 (* 4 5))`},
		{`(merge (quote (f a... 9)) ("a..." => (1 2 3)))`, `(f 1 2 3 9)`},
		{`(merge (quote (f a... 9)) ("a..." => ("k" => 1 2)))`, `(f "k" => 1 2 9)`},
		{`(merge (quote ("k" => 0 a...)) ("a..." => ("k" => 1 2)))`, `("k" => 1 2)`},
		{`(merge (quote (f "n" => a...)) ("a..." => (1 2)))`, `(f "n" => (1 2))`},
		{`(merge (quote (f a...)) ("a..." => 7))`, `(f 7)`},
		{`(merge (quote (f x?)) ("x?" => (1)))`, `(f (1))`},
		{`(merge (quote (f z)) ("x" => 1))`, `(f z)`},
		{`(merge (quote ("k" => x)) ("x" => 1))`, `("k" => 1)`},
		{`(merge (quote (f x)) null)`, `(f x)`},
		{`(merge (quote (f x)))`, `(f x)`},
		{`(merge (quote x) ("x" => 1))`, `1`},
		{`(merge (quote y) ("x" => 1))`, `y`},
		{`(merge 5 ("x" => 1))`, `5`},
		{`(merge null)`, `null`},
		{`(set l (list 1 (list 2))) (set m (merge l ())) (push (get m 1) 3) l`, `(1 (2))`},
		{`(set v (list 1)) (set m (merge (quote (x)) (list "x" => v))) (push v 2) m`, `((1 2))`},
	})
}

func TestListFamilyErrors(t *testing.T) {
	checkErrors(t, []errorTest{
		{`(first 5)`, "InvalidArgument", "first: want a list, got 5", 1},
		{`(first)`, "InvalidArgument", "first: want 1 argument, got 0", 1},
		{`(last "s")`, "InvalidArgument", "last: want a list, got the string", 1},
		{`(pop null)`, "InvalidArgument", "pop: want a list, got null", 1},
		{`(pop (1) 2)`, "InvalidArgument", "pop: want 1 argument, got 2", 1},
		{`(get (1) (0 true))`, "InvalidArgument", "get: path element 2 is true, want an index or a name", 1},
		{`(get (1) (0.5))`, "InvalidArgument", "get: path element 1 is 0.5", 1},
		{`(put (1) () 2)`, "InvalidArgument", "put: the path is empty", 1},
		{`(put (1) (0 0) 2)`, "InvalidArgument", "put: the path leads to 1, not a list", 1},
		{`(put (1) (5 0) 2)`, "InvalidArgument", "put: the path leads to null, not a list", 1},
		{`(put (1 (2)) (1 -5) 2)`, "InvalidArgument", "put: index out of range: the list has 1 element", 1},
		{`(insert (1) 5 2)`, "InvalidArgument", "insert: index 5 is out of range: the list has 1 element", 1},
		{`(insert (1) -1 2)`, "InvalidArgument", "insert: index -1 is out of range", 1},
		{`(insert (1) 0.5 2)`, "InvalidArgument", "insert: the index is 0.5, want an integer", 1},
		{`(insert (1) "a" 2)`, "InvalidArgument", "insert: the index is the string \"a\", want an index", 1},
		{`(insert (1) null 2)`, "InvalidArgument", "insert: the index is null, want an index", 1},
		{`(insert (1))`, "InvalidArgument", "insert: want 2 to 3 arguments, got 1", 1},
		{`(remove (1) 1)`, "InvalidArgument", "remove: index 1 is out of range: the list has 1 element", 1},
		{`(remove (1) -1)`, "InvalidArgument", "remove: index -1 is out of range", 1},
		{`(remove (1) true)`, "InvalidArgument", "remove: want an index or a name, got true", 1},
		{`(remove (1) ())`, "InvalidArgument", "remove: the path is empty", 1},
		{`(remove (1) (0 0))`, "InvalidArgument", "remove: the path leads to 1, not a list", 1},
		{`(remove null 0)`, "InvalidArgument", "remove: want a list, got null", 1},
		{`(clear null)`, "InvalidArgument", "clear: want a list, got null", 1},
		{`(clear (1) 2)`, "InvalidArgument", "clear: want 1 argument, got 2", 1},
		{`(name-index (1) 0)`, "InvalidArgument", "name-index: the name is 0, want a string", 1},
		{`(name-index 5 "a")`, "InvalidArgument", "name-index: want a list, got 5", 1},
		{`(names 5)`, "InvalidArgument", "names: want a list, got 5", 1},
		{`(get-name 5 0)`, "InvalidArgument", "get-name: want a list, got 5", 1},
		{`(getname 5 0)`, "InvalidArgument", "getname: want a list, got 5", 1},
		{`(get-name (1) "a")`, "InvalidArgument", "get-name: the index is the string \"a\", want an index", 1},
		{`(put-name (1) 1 "a")`, "InvalidArgument", "put-name: index 1 is out of range: the list has 1 element", 1},
		{`(put-name (1) -1 "a")`, "InvalidArgument", "put-name: index -1 is out of range", 1},
		{`(put-name (1) 0 5)`, "InvalidArgument", "put-name: the name is 5, want a string", 1},
		{`(put-name null 0 "a")`, "InvalidArgument", "put-name: want a list, got null", 1},
		{`(putname (1) 0 5)`, "InvalidArgument", "putname: the name is 5, want a string", 1},
		{`(has 5 0)`, "InvalidArgument", "has: want a list, got 5", 1},
		{`(empty 5)`, "InvalidArgument", "empty: want a list, got 5", 1},
		{`(empty "")`, "InvalidArgument", "empty: want a list, got the string", 1},
		{`(clone)`, "InvalidArgument", "clone: want 1 to 2 arguments, got 0", 1},
		{`(append null (1))`, "InvalidArgument", "append: want a list, got null", 1},
		{`(append (1) 2)`, "InvalidArgument", "append: argument 2 is 2, want a list", 1},
		{`(append (1))`, "InvalidArgument", "append: want at least 2 arguments, got 1", 1},
		{"(set l (list 1))\n(while true (append l l))", "InvalidArgument", "append: result longer than", 2},
		{`(reverse null)`, "InvalidArgument", "reverse: want a list, got null", 1},
		{`(reverse "ab")`, "InvalidArgument", "reverse: want a list, got the string", 1},
		{`(sublist (1 2 3) -1 2)`, "InvalidArgument", "sublist: index -1 is out of range: the list has 3 elements", 1},
		{`(sublist (1 2 3) 0 4)`, "InvalidArgument", "sublist: index 4 is out of range", 1},
		{`(sublist (1 2 3) null)`, "InvalidArgument", "sublist: from is null, want an index", 1},
		{`(sublist (1 2 3) 0.5)`, "InvalidArgument", "sublist: from is 0.5, want an integer", 1},
		{`(sublist (1 2 3) 0 "x")`, "InvalidArgument", "sublist: to is the string \"x\", want an index", 1},
		{`(sublist 5 0)`, "InvalidArgument", "sublist: want a list, got 5", 1},
		{`(apply 5 x x)`, "InvalidArgument", "apply: want a list, got 5", 1},
		{`(apply (1) x)`, "InvalidArgument", "apply: want a variable name and code, or a function, after the list; got null", 1},
		{`(apply (1) 5)`, "InvalidArgument", "apply: want a variable name and code, or a function, after the list; got 5", 1},
		{`(apply (1) (quote y))`, "InvalidArgument", "apply: want a variable name and code, or a function, after the list; got the reference y", 1},
		{`(apply (1) 5 6)`, "InvalidArgument", "apply: want a variable name and code, or a function, after the list; got 5", 1},
		{`(apply (1) a/b 6)`, "InvalidArgument", "apply: want a variable name, got the path a/b", 1},
		{`(apply (1) (function (x) x) 6)`, "InvalidArgument", "apply: want 2 arguments, got 3", 1},
		{`(apply (1))`, "InvalidArgument", "apply: want 2 to 3 arguments, got 1", 1},
		{`(apply (1 2) x (throw "E" "m"))`, "E", "m", 1},
		{"(apply (1 2)\n(function (x) (/ x 0)))", "DivisionByZero", "", 2},
		{`(find "s" x x)`, "InvalidArgument", "find: want a list, got the string", 1},
		{`(find (1) 5 6)`, "InvalidArgument", "find: want a variable name and code, or a function", 1},
		{`(find (1) (function (x) x) 6)`, "InvalidArgument", "find: want 2 arguments, got 3", 1},
		{`(locate (1) x true -1)`, "InvalidArgument", "locate: index -1 is out of range: the list has 1 element", 1},
		{`(locate (1) x true "0")`, "InvalidArgument", "locate: from is the string \"0\", want an index", 1},
		{`(locate (1) (function (x) x) 0 1)`, "InvalidArgument", "locate: want 2 to 3 arguments, got 4", 1},
		{`(indexof (1) x true -1)`, "InvalidArgument", "indexof: index -1 is out of range", 1},
		{`(locate (1) x true 0 1)`, "InvalidArgument", "locate: want 2 to 4 arguments, got 5", 1},
		{`(sort 5)`, "InvalidArgument", "sort: want a list, got 5", 1},
		{`(sort (1 "a"))`, "InvalidArgument", "sort: cannot compare 1 with the string \"a\"", 1},
		{`(sort (1 null))`, "InvalidArgument", "sort: cannot compare 1 with null", 1},
		{`(sort (true false))`, "InvalidArgument", "sort: cannot compare true with false", 1},
		{`(sort ((1) (2)))`, "InvalidArgument", "sort: cannot compare the list (1) with the list (2)", 1},
		{`(sort (1 2) 5)`, "InvalidArgument", "sort: the comparator is 5, want a function", 1},
		{`(sort (1 2) (function (a b) "1"))`, "InvalidArgument", "sort: the comparator gave the string \"1\", want a number", 1},
		{`(sort (1 2) (function (a b) null))`, "InvalidArgument", "sort: the comparator gave null, want a number", 1},
		{"(sort (1 2)\n(function (a b) (throw \"E\" \"m\")))", "E", "m", 2},
		{`(set f (function (l) (sort l (function (a b) (f (list 2 1)))))) (f (list 2 1))`, "StackOverflow", "", 1},
		{`(match 5 ())`, "InvalidArgument", "match: want a list, got 5", 1},
		{`(match (1) 5)`, "InvalidArgument", "match: the pattern is 5, want a list", 1},
		{`(match (1) null)`, "InvalidArgument", "match: the pattern is null, want a list", 1},
		{`(match (1))`, "InvalidArgument", "match: want 2 to 3 arguments, got 1", 1},
		{`(match (1) (x?) (throw "E" "m"))`, "E", "m", 1},
		{`(merge (1) 5)`, "InvalidArgument", "merge: want a list, got 5", 1},
		{`(merge)`, "InvalidArgument", "merge: want 1 to 2 arguments, got 0", 1},
		{`(set a (list 1)) (set i 0) (while (< i 30) (set a (list a a)) (set i (+ i 1))) (merge a)`, "InvalidArgument", "merge: result longer than", 1},
	})
}

// TestListStops checks that the functions that call code or functions
// stop, with Interrupted, once the run is cancelled: here by the script
// itself, through the library function stop.
func TestListStops(t *testing.T) {
	for _, src := range []string{
		`(sort (3 2 1 5 4) (function (a b) (do (stop) (- a b))))`,
		`(apply (1 2 3) x (stop))`,
		`(apply (1 2 3) (function (x) (stop)))`,
		`(find (1 2 3) x (stop))`,
		`(locate (1 2 3) x (stop))`,
		`(locate (1 2 3) (function (x) (stop)) 1)`,
		`(match (1 2 3 4 5 6 7 8 9 10) (a... b... c... d... e... f...) (do (stop) false))`,
		`(match (1 (2) (3 (4))) (x?) (do (stop) false))`,
		`(set l (list 1 2 3)) (match l (x...) (do (stop) (push l 4) false))`,
	} {
		ctx, cancel := context.WithCancel(context.Background())
		in := New(nil)
		in.Define("stop", func(context.Context, *value.List) (any, error) { cancel(); return nil, nil })
		err := in.Run(ctx, "test.bpl", src, nil)
		cancel()
		var e *Exception
		if !errors.As(err, &e) || e.Type != "Interrupted" || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want Interrupted wrapping the cancellation", src, err)
		}
	}
	// a search that would take 2^60 steps ends with its deadline
	src := `(set a (list 1)) (set i 0) (while (< i 60) (set a (list a a)) (set i (+ i 1))) (match a (2))`
	_, _, err := runTimeout(t, src, 30*time.Millisecond)
	var e *Exception
	if !errors.As(err, &e) || e.Type != "Interrupted" {
		t.Errorf("%s: err = %v, want Interrupted", src, err)
	}
}

// goNeg is a function value made in Go: it negates an integer, and fails
// on anything else.
type goNeg struct{}

func (goNeg) Call(_ context.Context, args *value.List) (any, error) {
	n, ok := args.At(0).(int64)
	if !ok {
		return nil, errors.New("neg: want an integer")
	}
	return -n, nil
}

// TestListGoFunction checks apply, find, locate and sort with a function
// value that is not a BPL function.
func TestListGoFunction(t *testing.T) {
	for _, tt := range []valueTest{
		{`(apply (1 2) neg)`, `(-1 -2)`},
		{`(find (1 -2) neg)`, `(1 -2)`},
		{`(locate (0 -2) neg)`, `1`},
		{`(sort (1 3 2) neg)`, `(1 3 2)`},
		{`(try (apply (1 "a") neg) (ex "*" => (get ex "message")))`, `"neg: want an integer"`},
	} {
		in := New(nil)
		in.SetGlobal("neg", value.Callable(goNeg{}))
		got, _, err := run(t, in, tt.src)
		if err != nil || got != tt.want {
			t.Errorf("%s = %s, %v; want %s", tt.src, got, err, tt.want)
		}
	}
}

// TestListOrder checks sort's order where scripts can hardly reach it.
func TestListOrder(t *testing.T) {
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	for _, tt := range []struct {
		a, b any
		want int
	}{
		{nan, 1.0, 1}, {1.0, nan, -1}, {nan, nan, 0}, {nan, int64(5), 1}, {int64(5), nan, -1},
		{negZero, 0.0, -1}, {0.0, negZero, 1}, {negZero, int64(0), 0},
		{math.Inf(1), int64(math.MaxInt64), 1}, {math.Inf(-1), int64(math.MinInt64), -1},
		{-0.5, int64(0), -1}, {int64(-1), -1.5, 1}, {float64(1 << 62), int64(1<<62 + 1), -1},
		{"a", "b", -1}, {"\uffff", "\U0001F600", 1}, {"\U0001F600", "\U0001F601", -1}, {"ab", "a", 1},
		{value.Reference("b"), value.Reference("a"), 1},
	} {
		if got, ok := listOrder(tt.a, tt.b); !ok || got != tt.want {
			t.Errorf("listOrder(%v, %v) = %d, %v; want %d", tt.a, tt.b, got, ok, tt.want)
		}
	}
	for _, p := range [][2]any{{int64(1), "1"}, {nil, nil}, {true, true}, {value.Reference("a"), "a"}, {[]byte("a"), []byte("a")}} {
		if _, ok := listOrder(p[0], p[1]); ok {
			t.Errorf("listOrder(%v, %v) ordered them", p[0], p[1])
		}
	}
}
