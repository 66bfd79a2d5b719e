package bpl

import (
	"context"
	"sync"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// TestGlobalCache checks that a compiled reference, which remembers where
// its global was in the scope list, reads and sets the right variable
// after every change that moves the variables: a delete (of an earlier
// variable, and of the variable itself), a re-set, DeletePath, PutPath,
// ReplaceScope, and another interpreter evaluating the same code.
func TestGlobalCache(t *testing.T) {
	ctx := context.Background()
	in := New(nil)
	for _, name := range []string{"a", "b", "c"} {
		in.SetGlobal(name, name+"0")
	}
	// one function, compiled once: it reads c, sets c, and gives both
	fn, err := in.Eval(ctx, mustParseT(t, `(function (v) (local was) (set was c) (set c v) (list was c))`))
	if err != nil {
		t.Fatal(err)
	}
	call := func(v string) string {
		t.Helper()
		got, err := fn.(value.Callable).Call(ctx, value.NewList(v))
		if err != nil {
			t.Fatal(err)
		}
		return value.Format(got)
	}
	steps := []struct {
		change func()
		arg    string
		want   string
	}{
		{func() {}, "c1", `("c0" "c1")`},
		{func() {}, "c2", `("c1" "c2")`}, // the cached hit, read and set
		{func() { in.DeleteGlobal("a") }, "c3", `("c2" "c3")`},
		{func() { in.DeleteGlobal("c") }, "c4", `(null "c4")`},
		{func() { in.SetGlobal("a", "a1") }, "c5", `("c4" "c5")`},
		{func() { in.DeletePath(ctx, []any{"b"}) }, "c6", `("c5" "c6")`},
		{func() {
			in.PutPath(ctx, []any{"b"}, "b1")
			in.DeletePath(ctx, []any{"c"})
			in.PutPath(ctx, []any{"c"}, "c9")
		}, "c7", `("c9" "c7")`},
		{func() { in.ReplaceScope(value.NewList().AppendNamed("x", 1).AppendNamed("c", "r")) }, "c8", `("r" "c8")`},
		{func() { in.ReplaceScope(nil) }, "c9", `(null "c9")`},
	}
	for i, s := range steps {
		s.change()
		if got := call(s.arg); got != s.want {
			t.Errorf("step %d: %s, want %s", i, got, s.want)
		}
		if v, _ := in.Global("c"); v != s.arg {
			t.Errorf("step %d: the global c is %v after the call, want %s", i, v, s.arg)
		}
	}
	if v, ok := in.Global("x"); ok {
		t.Errorf("x is %v: ReplaceScope(nil) left it", v)
	}

	// The same parsed code in two interpreters whose scopes differ.
	code := mustParseT(t, `(do (set n (+ n 1)) n)`)
	one, two := New(nil), New(nil)
	one.SetGlobal("n", int64(10))
	two.SetGlobal("pad", true)
	two.SetGlobal("n", int64(20))
	for range 3 {
		for _, c := range []struct {
			in   *Interp
			name string
		}{{one, "one"}, {two, "two"}} {
			if _, err := c.in.Eval(ctx, code); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a, b := value.Format(one.Scope()), value.Format(two.Scope()); a != `("n" => 13)` || b != `("pad" => true "n" => 23)` {
		t.Errorf("two interpreters of one code: %s and %s", a, b)
	}
}

// TestGlobalCacheConcurrent has tasks set a global through one compiled
// reference, shared, while the host adds and deletes other globals (which
// moves it in the scope list), for the race detector, and checks that no
// set was lost.
func TestGlobalCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	in := New(nil)
	in.SetGlobal("first", int64(0))
	in.SetGlobal("total", int64(0))
	code := mustParseT(t, `(sync "total" (set total (+ total 1)))`) // one code, its caches shared
	var host sync.WaitGroup
	stop := make(chan struct{})
	host.Add(1)
	go func() {
		defer host.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			in.DeleteGlobal("first")
			in.SetGlobal("first", int64(i))
		}
	}()
	var callers sync.WaitGroup
	for range 4 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			for range 200 {
				if _, err := in.Eval(ctx, code); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	callers.Wait()
	close(stop)
	host.Wait()
	if v, _ := in.Global("total"); v != int64(800) {
		t.Errorf("total is %v after 800 synchronized increments", v)
	}
}
