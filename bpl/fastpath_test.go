package bpl

import "testing"

// The tests of the evaluator's fast paths (lookupBuiltin's table, ...):
// each gives what the plain way would.

// TestLookupBuiltin checks that the table finds every builtin, as the map
// does, and nothing else.
func TestLookupBuiltin(t *testing.T) {
	for name, b := range builtins {
		if got := lookupBuiltin(name); got == nil {
			t.Errorf("lookupBuiltin(%q) = nil, want %p", name, b)
		}
	}
	for _, name := range []string{"", "x", "gett", "ge", "kafka-send", "null?", "system", "acc/count"} {
		if lookupBuiltin(name) != nil {
			t.Errorf("lookupBuiltin(%q) is not nil", name)
		}
	}
}

// TestBindingByPosition checks that a function whose parameters all take
// arguments by position binds as the general rule does, with and without
// named arguments, too few and too many, and that those it leaves to the
// general rule (a parameter twice, named parameters) still bind by it.
func TestBindingByPosition(t *testing.T) {
	checkValues(t, []valueTest{
		{`(set f (function (a b) (list a b))) (f)`, `(null null)`},
		{`(set f (function (a b) (list a b))) (f 1)`, `(1 null)`},
		{`(set f (function (a b) (list a b))) (f 1 2 3)`, `(1 2)`},
		{`(set f (function (a b) (list a b))) (f b => 1 2)`, `(2 1)`},
		{`(set f (function (a b) (list a b))) (f z => 1 2)`, `(1 2)`},
		{`(set f (function (a b) (list a b))) (call f 1 2)`, `(1 2)`},
		{`(set f (function (a a) a)) (f 1 2)`, `1`},
		{`(set f (function (a b a) (list a b))) (f 1 2 3)`, `(1 2)`},
		{`(set f (function (a "b") (list a b))) (f 1 2)`, `(1 null)`},
		{`(set f (function (a "k" => b) (list a b))) (f 1 k => 2)`, `(1 2)`},
		{`(set f (function (a) (set a (+ a 1)) a)) (list (f 1) (f 5))`, `(2 6)`},
		{`(set f (function () 7)) (f 1)`, `7`},
		{`(set f (function (a b c d e) (list a e))) (f 1 2 3 4 5)`, `(1 5)`},
		{`(set f (function (a) (local-scope))) (f 1)`, `("a" => 1)`},
	})
}
