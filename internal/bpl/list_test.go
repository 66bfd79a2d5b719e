package bpl

import "testing"

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
		{`(set l (list 1 2)) (put l 0 9)`, `(9 2)`},
		{`(set l (list 1 2)) (put l 2 3)`, `(1 2 3)`},
		{`(set l (list "a" => 1)) (put l "a" 2) (put l "b" 3)`, `("a" => 2 "b" => 3)`},
		{`(set l (list "a" => 1 "a" => 2)) (put l "a" 9)`, `("a" => 9 "a" => 2)`},
		{`(size (1 2 3))`, `3`},
		{`(size "héllo")`, `5`},
		{`(size null)`, `0`},
		{`(size ())`, `0`},
		{`(push (list 1) 2 "k" => 3)`, `(1 2 "k" => 3)`},
		{`(set l (list)) (push l (list 1)) (push l (list 1)) l`, `((1) (1))`},
		{`(set a (list 1)) (push (list) a a)`, `((1) (1))`},
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
		{`(put (1) 2 0)`, "InvalidArgument", "put: index out of range: the list has 1 element", 1},
		{`(put null 0 0)`, "InvalidArgument", "put: want a list, got null", 1},
		{`(set l (list)) (put l 0 l)`, "InvalidArgument", "put: a list cannot contain itself", 1},
		{`(set l (list)) (put l "k" (list l))`, "InvalidArgument", "put: a list cannot contain itself", 1},
		{`(set l (list)) (push l l)`, "InvalidArgument", "push: a list cannot contain itself", 1},
		{`(set a (list)) (set b (list (list a))) (push a b)`, "InvalidArgument", "push: a list cannot contain itself", 1},
		{`(push "s" 1)`, "InvalidArgument", "push: want a list, got the string \"s\"", 1},
		{`(size 5)`, "InvalidArgument", "size: want a list or a string, got 5", 1},
		{`(concat (1) 2)`, "InvalidArgument", "concat: argument 2 is 2", 1},
		{"(set s \"aaaaaaaaaaaaaaaa\")\n(while true (set s (concat s s)))", "InvalidArgument", "concat: result longer than", 2},
		{"(set l (list 1))\n(while true (set l (concat l l)))", "InvalidArgument", "concat: result longer than", 2},
	})
}
