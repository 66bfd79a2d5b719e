package bpl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/value"
)

// A list may be put into itself, as in brain4it ((put r "me" r) builds a
// cycle there), and everything that follows lists then ends: printing
// (with brain4it's tags), comparing, copying, evaluating, match; what
// cannot hold a cycle (JSON, merge's copy, a library function's argument)
// refuses it. Each script runs with a deadline, so a loop fails the test
// rather than hang it.
func TestCycles(t *testing.T) {
	const r = `(set r (list 1)) (put r "me" r) `
	for _, tt := range []valueTest{
		{r + `r`, `(<#1> 1 "me" => <@1>)`},
		{r + `(=== r (get r "me"))`, `true`},
		{r + `(string r)`, `"(<#1> 1 \"me\" => <@1>)"`},
		{`(set l (list)) (push l l) l`, `(<#1> <@1>)`},
		{`(set l (list)) (insert l l) l`, `(<#1> <@1>)`},
		{`(set l (list)) (append l (list l)) l`, `(<#1> <@1>)`},
		{`(set a (list 1)) (set a/0 a) a`, `(<#1> <@1>)`},
		{`(set l (list (list))) (put l (0 0) l) l`, `(<#1> (<@1>))`},
		{`(set s ()) (eval (quote (set-local me s)) s) s`, `(<#1> "me" => <@1>)`},
		// brain4it's own answer to this one
		{`(set x (list 1 2)) (insert x 0 x) (append x x) x`, `(<#1> <@1> 1 2 <@1> 1 2)`},
		// appending a list to itself makes no cycle
		{`(set x (list 1 2)) (append x x) x`, `(1 2 1 2)`},
		// comparisons end, and find two such lists equal, as brain4it does
		{`(set a (list 1)) (push a a) (set b (list 1)) (push b b) (list (= a b) (== a b) (=== a b))`, `(true true false)`},
		// a cyclic data list evaluates to itself, as in brain4it, and a
		// copied literal keeps it rather than copy it without end
		{r + `(=== (eval r) r)`, `true`},
		{r + `(set d (list 2 r)) (=== (get (eval d) 1) r)`, `true`},
		{r + `(size (clone r true))`, `2`},
		{r + `(set c (clone r true)) (=== c (get c "me"))`, `true`},
		{r + `(match r (quote (2)))`, `false`},
		{r + `(match r (quote (1 x?)))`, `true`},
		{r + `(set n 0) (match r (quote (x...)) (do (set n (+ n 1)) false)) n`, `1`},
		{r + `(set b (parse (string r))) (=== b (get b "me"))`, `true`},
		{r + `(size r)`, `2`},
	} {
		got, err := runWithin(t, tt.src)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
		} else if got != tt.want {
			t.Errorf("%s = %s, want %s", tt.src, got, tt.want)
		}
	}
	for _, tt := range []struct{ src, msg string }{
		{r + `(string r "format" => "json")`, "a list that contains itself cannot be written in JSON"},
		{r + `(match (1) r)`, "match: the pattern is a list that contains itself"},
		{r + `(merge r ())`, "merge: the list contains itself"},
		{r + `(lib r)`, "lib: argument 1 is a list that contains itself"},
	} {
		_, err := runWithin(t, tt.src)
		var e *Exception
		if !errors.As(err, &e) || e.Type != "InvalidArgument" || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%s: %v, want InvalidArgument %q", tt.src, err, tt.msg)
		}
	}
}

// runWithin runs src on a fresh interpreter with a lib function defined,
// for 10 s at most.
func runWithin(t *testing.T, src string) (string, error) {
	t.Helper()
	in := New(nil)
	in.Define("lib", func(context.Context, *value.List) (any, error) { return "called", nil })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last any
	err := in.Run(ctx, "test.bpl", src, func(v any) { last = v })
	return value.Format(last), err
}

// A list marked shared, as put marks one it is put into, compares with
// value.List.Equal and ends.
func TestMarkedCycleEquals(t *testing.T) {
	a, b := value.NewList(int64(1)), value.NewList(int64(1))
	a.MarkShared()
	a.Append(a)
	b.MarkShared()
	b.Append(b)
	if !a.Equal(b) {
		t.Error("two marked cyclic lists of the same shape are not Equal")
	}
	if !value.MayCycle() || !value.Cyclic(a) {
		t.Error("MayCycle or Cyclic is false")
	}
}
