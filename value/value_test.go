package value

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestTags checks brain4it's tags: read into shared and cyclic lists,
// written back where a list appears more than once, and not otherwise.
func TestTags(t *testing.T) {
	vs, err := Parse(`((<#1> 8 9) <@1> (<#2> x <@2>))`)
	if err != nil {
		t.Fatal(err)
	}
	l := vs[0].(*List)
	shared, again, cyc := l.At(0).(*List), l.At(1).(*List), l.At(2).(*List)
	if shared != again || !shared.Tagged() || l.Tagged() {
		t.Errorf("<@1> is not the list tagged <#1>, or the wrong lists are tagged")
	}
	if cyc.At(1) != any(cyc) || !Cyclic(cyc) || !Cyclic(l) || Cyclic(shared) {
		t.Errorf("(<#2> x <@2>) does not contain itself, or Cyclic says otherwise")
	}
	if got, want := Format(l), `((<#1> 8 9) <@1> (<#2> x <@2>))`; got != want {
		t.Errorf("Format = %s, want %s", got, want)
	}
	if !l.Equal(l) || l.Equal(NewList(shared, shared, NewList(Reference("x")))) {
		t.Error("Equal of lists that contain themselves is wrong, or does not end")
	}

	// Shared without tags (a list put twice) is written with them too,
	// and a list that appears once is never tagged.
	c := NewList(int64(1))
	for _, tt := range []struct {
		v    any
		want string
	}{
		{NewList(c, c), `((<#1> 1) <@1>)`},
		{NewList(c, "k", NewList(c)), `((<#1> 1) "k" (<@1>))`},
		{NewList(NewList(int64(1)), NewList(int64(1))), `((1) (1))`},
		{NewList(), `()`},
	} {
		if got := Format(tt.v); got != tt.want {
			t.Errorf("Format = %s, want %s", got, tt.want)
		}
	}

	for _, src := range []string{"(<@3>)", "(1 <#3>)", "<#1>"} {
		var se *SyntaxError
		if _, err := Parse(src); !errors.As(err, &se) || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Parse(%q) = %v, want a SyntaxError", src, err)
		}
	}
	if _, err := ParseLines("(1)\n\n(x (<@7>))", nil); err == nil || !strings.HasPrefix(err.Error(), "line 3,") {
		t.Errorf("a bad link on line 3: %v", err)
	}
	if !MayCycle() {
		t.Error("MayCycle is false after reading tags")
	}
}

func TestListOf(t *testing.T) {
	l := ListOf([]any{int64(1), "v"}, []string{"", "k"})
	if got := Format(l); got != `(1 "k" => "v")` {
		t.Errorf("ListOf = %s", got)
	}
	if v, _ := l.Get("k"); v != "v" || l.Names()[1] != "k" {
		t.Errorf("Get(k) = %v, names %q", v, l.Names())
	}
	var inner List
	inner.Reset([]any{true}, nil)
	if inner.Len() != 1 || inner.Names() != nil || inner.Named() {
		t.Errorf("Reset: %s", inner.String())
	}
	inner.Grow(10)
	inner.AppendNamed("n", nil)
	if got := inner.String(); got != `(true "n" => null)` {
		t.Errorf("after Grow and AppendNamed: %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("ListOf with fewer names than values did not panic")
		}
	}()
	ListOf([]any{1, 2}, []string{"a"})
}

func TestDescribe(t *testing.T) {
	long := NewList()
	for i := range 30 {
		long.Append(int64(i))
	}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{int64(3), "3"},
		{2.5, "2.5"},
		{"hot", `the string "hot"`},
		{Reference("a/b"), "the reference a/b"},
		{[]byte("abc"), "a byte array of 3 bytes"},
		{NewList(int64(1), "x"), `the list (1 "x")`},
		{long, "the list (0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 1..."},
		{fnValue{}, "a function"},
	} {
		if got := Describe(tt.v); got != tt.want {
			t.Errorf("Describe(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// fnValue is a Callable for the tests.
type fnValue struct{}

func (fnValue) Call(context.Context, *List) (any, error) { return nil, nil }

// typed is an error with its own exception type.
type typed struct{ error }

func (typed) ExceptionType() string { return "Mine" }

func TestErrorType(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{errors.New("x"), "Exception"},
		{fmt.Errorf("wrapped: %w", typed{errors.New("x")}), "Mine"},
		{fmt.Errorf("%w: bad", ErrInvalidArgument), "InvalidArgument"},
		{&SyntaxError{Line: 1, Column: 1, Msg: "m"}, "InvalidArgument"},
		{fmt.Errorf("late: %w", context.DeadlineExceeded), "Timeout"},
		{context.Canceled, "Interrupted"},
	} {
		if got := ErrorType(tt.err); got != tt.want {
			t.Errorf("ErrorType(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

// lazyFn is a callee that takes lazy arguments.
type lazyFn struct{ fnValue }

func (lazyFn) TakesLazy() bool { return true }

func TestLazy(t *testing.T) {
	made := 0
	lz := &Lazy{Arg: 2, Make: func(a any) any { made++; return a.(int) * 21 }}
	if TakesLazy(fnValue{}) || !TakesLazy(lazyFn{}) {
		t.Error("TakesLazy is wrong")
	}
	if made != 0 {
		t.Error("a Lazy was made before it was forced")
	}
	if v := Force(lz); v != 42 || made != 1 {
		t.Errorf("Force = %v after %d makes", v, made)
	}
	if v := Force("as is"); v != "as is" {
		t.Errorf("Force of a value = %v", v)
	}
}
