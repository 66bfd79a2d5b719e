package bpl

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

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

// TestPathLookup checks that lookup walks a plain path to what splitting
// it with pathOf names, for paths good and bad.
func TestPathLookup(t *testing.T) {
	in := New(nil)
	exprs, err := value.Parse(`("b" => (10 "c" => 11) "b c" => 12 "0" => 13 14)`)
	if err != nil {
		t.Fatal(err)
	}
	in.SetGlobal("a", exprs[0])
	in.SetGlobal("n", int64(1))
	tk := in.task(context.Background(), 0)
	f := &frame{src: &source{}}
	f.locals.set("loc", exprs[0])
	if got, got2 := tk.lookup(f, "loc/b/c"), tk.lookup(f, `a/"b c"`); got != int64(11) || got2 != int64(12) {
		t.Errorf("loc/b/c = %v, a/\"b c\" = %v; want 11 and 12", got, got2)
	}
	for _, name := range []string{
		"a", "a/b", "a/b/c", "a/b/0", "a/b/1", "a/b/c/d", "a/0", "a/0/1", "a/3", "a/4",
		"a/99999999999999999999", "/a", "/", "//", "a//b", "a/", "/a/b", "a/b/", `a/"b c"`,
		`a/"b`, "n/0", "x/y", "loc/b/c", "/loc", "a/b//c",
	} {
		want := tk.walk(f, pathOf(name))
		if pathOf(name) == nil {
			want, _ = f.locals.get(name)
			if want == nil {
				want, _ = in.global(name)
			}
		}
		if got := tk.lookup(f, name); !value.NewList(got).Equal(value.NewList(want)) {
			t.Errorf("lookup(%s) = %v, want %v", name, got, want)
		}
	}
}

// TestFold checks that arithmetic keeps integers while all its numbers
// are, goes to floats from the first float on, and keeps the type of one
// operand, as fold did when it made each step's value an interface.
func TestFold(t *testing.T) {
	checkValues(t, []valueTest{
		{`(list (subtype-of (* 2 0.5)) (subtype-of (+ 1 2)) (subtype-of (- 2.0)) (subtype-of (+ 2.0)))`, `("double" "integer" "double" "double")`},
		{`(list (+ 1 2.5 3) (- 10 2.5 1) (* 3 0.5 4) (+ 1000 2000 3000))`, `(6.5 6.5 6 6000)`},
		{`(list (+ 9007199254740993 1) (+ 9007199254740993 1 0.0) (+ 0.0 9007199254740993 1))`, `(9007199254740994 9.007199254740994E15 9.007199254740992E15)`},
		{`(list (+) (*) (+ null 300) (- 300) (+ 300) (- 1000 1))`, `(0 1 300 -300 300 999)`},
		{`(set i 1000) (++ i) (-- i) (-- i)`, `999`},
	})
}

// TestConcurrentCalls calls one function value from several goroutines
// while library functions are defined and globals set (run it with
// -race): each call sees its own arguments, and a library function once
// defined.
func TestConcurrentCalls(t *testing.T) {
	in := New(nil)
	in.Define("lib-one", func(context.Context, *value.List) (any, error) { return int64(1), nil })
	fn, err := in.Eval(context.Background(), mustParseT(t, `(function (in acc) (+ (get in "value") acc (lib-one) g))`))
	if err != nil {
		t.Fatal(err)
	}
	in.SetGlobal("g", int64(0))
	c := fn.(value.Callable)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			in.Define(fmt.Sprintf("lib-%d", i), func(context.Context, *value.List) (any, error) { return nil, nil })
			in.SetGlobal("other", int64(i))
		}
	})
	for i := range 8 {
		wg.Go(func() {
			rec := value.NewList()
			rec.AppendNamed("value", int64(i*1000))
			for n := range int64(200) {
				v, err := c.Call(context.Background(), value.NewList(rec, n))
				if want := int64(i*1000) + n + 1; err != nil || v != want {
					t.Errorf("call %d of goroutine %d = %v, %v; want %d", n, i, v, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	// a library function defined after the first calls is called
	in.Define("lib-one", func(context.Context, *value.List) (any, error) { return int64(2), nil })
	if v, err := c.Call(context.Background(), value.NewList(value.NewList(), int64(0))); err != nil || v != int64(2) {
		t.Errorf("after redefining lib-one: %v, %v; want 2", v, err)
	}
}

// mustParseT returns the one expression of src.
func mustParseT(t *testing.T, src string) any {
	t.Helper()
	exprs, err := value.Parse(src)
	if err != nil || len(exprs) != 1 {
		t.Fatal(len(exprs), err)
	}
	return exprs[0]
}
