package bpl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/value"
	"github.com/google/go-cmp/cmp"
)

// runTimeout runs src with a context that ends after d.
func runTimeout(t *testing.T, src string, d time.Duration) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out strings.Builder
	var last any
	err := New(&out).Run(ctx, "test.bpl", src, func(v any) { last = v })
	return value.Format(last), out.String(), err
}

func TestScoping(t *testing.T) {
	checkValues(t, []valueTest{
		// set without a local assigns the global
		{`(set g 1) (set f (function () (set g 2))) (f) g`, `2`},
		// a local shadows the global, which stays
		{`(set g 1) (set f (function () (local g) (set g 2) g)) (list (f) g)`, `(2 1)`},
		// parameters are locals
		{`(set a 1) (set f (function (a) (set a 5) a)) (list (f 0) a)`, `(5 1)`},
		// a function sees the globals but not its caller's locals
		{`(set f (function () x)) (set g (function () (local x) (set x 1) (f))) (g)`, `null`},
		{`(set x 9) (set f (function () x)) (set g (function () (local x) (set x 1) (f))) (g)`, `9`},
		// the top level has locals of its own, which functions do not see
		{`(local x) (set x 1) (set f (function () x)) (list x (f))`, `(1 null)`},
		// a for-each variable is a local of the function running it
		{`(set f (function () (for-each (1 2) v v))) (list (f) v)`, `(2 null)`},
		// a try handler's variable is a local too
		{`(set f (function () (try (throw "E") (ex "E" => 1)) ex)) (list (f) ex)`, `(("E") null)`},
		// recursion gets fresh locals at each level
		{`(set f (function (n) (local m) (set m n) (when (> n 0) (f (- n 1))) m)) (f 3)`, `3`},
	})
}

func TestGlobalsAcrossRuns(t *testing.T) {
	in := New(nil)
	in.SetGlobal("g", int64(4))
	if got, _, err := run(t, in, `(set h (+ g 1))`); err != nil || got != "5" {
		t.Fatalf("first run = %s, %v", got, err)
	}
	if got, _, err := run(t, in, `(list g h)`); err != nil || got != "(4 5)" {
		t.Errorf("second run = %s, %v; want (4 5)", got, err)
	}
	// Top-level locals belong to one run.
	if _, _, err := run(t, in, `(local z) (set z 1)`); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := run(t, in, `z`); got != "null" {
		t.Errorf("z = %s after the run that declared it local, want null", got)
	}
}

func TestRunEach(t *testing.T) {
	var got []any
	var out strings.Builder
	err := New(&out).Run(context.Background(), "f", "1 (print \"x\")\n\"s\" (1 2)", func(v any) { got = append(got, v) })
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(1), nil, "s", value.NewList(int64(1), int64(2))}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b *value.List) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("each got (-want +got):\n%s", diff)
	}
	if out.String() != "x\n" {
		t.Errorf("printed %q", out.String())
	}
	if err := New(nil).Run(context.Background(), "f", "1 2", nil); err != nil {
		t.Errorf("Run with a nil each: %v", err)
	}
}

func TestRunStopsAtException(t *testing.T) {
	var n int
	var out strings.Builder
	err := New(&out).Run(context.Background(), "s.bpl", "(print 1)\n(throw \"E\" \"m\")\n(print 2)", func(any) { n++ })
	var e *Exception
	if !errors.As(err, &e) || e.Type != "E" || e.Message != "m" || e.Line != 2 || e.File != "s.bpl" {
		t.Fatalf("err = %#v", err)
	}
	if got, want := err.Error(), "E: m (s.bpl:2)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if n != 1 || out.String() != "1\n" {
		t.Errorf("each called %d times, printed %q; want 1 and \"1\\n\"", n, out.String())
	}
}

func TestRunSyntaxError(t *testing.T) {
	var out strings.Builder
	err := New(&out).Run(context.Background(), "s.bpl", "(print \"a\")\n  )", nil)
	var se *value.SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || se.Column != 3 {
		t.Fatalf("err = %v, want a SyntaxError at line 2, column 3", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q: nothing should run when the source does not parse", out.String())
	}
}

func TestEval(t *testing.T) {
	in := New(nil)
	vs, err := value.Parse(`(+ 1 2) (set x 4) (throw "E" "m")`)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := in.Eval(context.Background(), vs[0]); err != nil || v != int64(3) {
		t.Errorf("Eval(+ 1 2) = %v, %v", v, err)
	}
	if _, err := in.Eval(context.Background(), vs[1]); err != nil {
		t.Fatal(err)
	}
	if v, _ := in.Eval(context.Background(), value.Reference("x")); v != int64(4) {
		t.Errorf("x = %v after Eval(set x 4), want 4", v)
	}
	_, err = in.Eval(context.Background(), vs[2])
	if err == nil || err.Error() != "E: m" {
		t.Errorf("Eval(throw) error = %v, want E: m", err)
	}
}

func TestExceptionLines(t *testing.T) {
	checkErrors(t, []errorTest{
		{"(do\n  1\n  (throw \"E\" \"m\"))", "E", "m", 3},
		// the innermost call that failed
		{"(print\n  (+ 1\n     \"a\"))", "InvalidArgument", "+: argument 2", 2},
		// inside a function, the line in its body
		{"(set f (function ()\n  (throw \"E\")))\n\n(f)", "E", "", 2},
		// a data list has no line of its own: the enclosing call's
		{"(do\n (get\n (1\n 2) true))", "InvalidArgument", "get:", 2},
		{"\n\n(call nope)", "UnknownFunction", "nope", 3},
	})
}

func TestTryThrow(t *testing.T) {
	checkValues(t, []valueTest{
		{`(try (throw "E" "m") (ex "E" => (get ex "message")))`, `"m"`},
		{`(try (throw "E" "m") (ex "E" => ex))`, `("E" "message" => "m")`},
		{`(try (throw "E") (ex "E" => ex))`, `("E")`},
		{`(try (throw "X" "m") (ex "E" => 1 "*" => 2))`, `2`},
		{`(try (throw "E") (ex "*" => 1 "E" => 2))`, `2`},
		{`(try 5 (ex "*" => 1))`, `5`},
		{`(try 5)`, `5`},
		{`(set log (list)) (try (throw "E") (ex "E" => (push log "h")) (push log "f")) log`, `("h" "f")`},
		{`(set log (list)) (try 1 null (push log "f")) log`, `("f")`},
		{`(set log (list)) (try (try (throw "X") (ex "E" => 1) (push log "f")) (ex "X" => log))`, `("f")`},
		{`(try (try (throw "E" "m") (ex "E" => (throw ex))) (e2 "E" => (get e2 "message")))`, `"m"`},
		{`(try (throw ("T" "msg")) (ex "T" => ex))`, `("T" "msg")`},
		{`(try (throw 404 "nf") (ex "404" => (get ex "message")))`, `"nf"`},
		{`(try (/ 1 0) (ex "DivisionByZero" => "div"))`, `"div"`},
		{`(try (+ 1 "a") (ex "InvalidArgument" => (get ex "message")))`, `"+: argument 2 is the string \"a\", want a number"`},
		{`(try (assert false) (ex "AssertionError" => 1))`, `1`},
		{`(try (call nope) (ex "UnknownFunction" => 1))`, `1`},
		{`(set f (function (n) (f n))) (try (f 1) (ex "StackOverflow" => "deep"))`, `"deep"`},
		// the handler's exception replaces the first one
		{`(try (try (throw "A") (ex "A" => (throw "B"))) (ex "B" => "b"))`, `"b"`},
	})
	checkErrors(t, []errorTest{
		{`(try (throw "X" "m") (ex "E" => 1))`, "X", "m", 1},
		{`(throw ("T" "msg"))`, "T", "msg", 1},
		{`(throw ("T" "message" => "m2"))`, "T", "m2", 1},
		{`(try 1 5)`, "InvalidArgument", "try: want a catch list", 1},
		{`(try 1 ("E" => 1))`, "InvalidArgument", "try: want a catch list", 1},
		{`(try 1 (a/b "E" => 1))`, "InvalidArgument", "try: want a catch list", 1},
		{`(throw)`, "InvalidArgument", "throw: want 1 to 2 arguments", 1},
		{`(throw (1 2))`, "InvalidArgument", "throw: want an exception type or value", 1},
		{`(throw "")`, "InvalidArgument", "throw: want an exception type or value", 1},
		{`(try 1 (ex "*" => 2) (throw "F"))`, "F", "", 1},
		{`(set f (function (n) (f n))) (f 1)`, "StackOverflow", "nested more than 10000 deep", 1},
	})
}

func TestInterrupted(t *testing.T) {
	for _, src := range []string{
		`(while true 1)`,
		`(while true (try (sleep 1000) (ex "*" => 1)))`,
		`(while true (try (while true 1) (ex "Interrupted" => 1)))`,
		`(set f (function () (try (f) (ex "*" => (f))))) (f)`,
		`(for-each (1 2 3) x (while true x))`,
		`(sleep 1e300)`,
	} {
		start := time.Now()
		_, _, err := runTimeout(t, src, 30*time.Millisecond)
		var e *Exception
		if !errors.As(err, &e) || e.Type != "Interrupted" || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v, want Interrupted wrapping the deadline", src, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: stopped %v after the deadline", src, d)
		}
	}
}

// libTest is an interpreter with fake library functions.
func libTest(t *testing.T) (*Interp, *strings.Builder) {
	t.Helper()
	var out strings.Builder
	in := New(&out)
	// lib-echo returns its arguments, as the library received them.
	in.Define("lib-echo", func(_ context.Context, args *value.List) (any, error) { return args, nil })
	in.Define("lib-ctx", func(ctx context.Context, _ *value.List) (any, error) {
		return ctx.Value(ctxKey{}), nil
	})
	in.Define("kafka-fail", func(context.Context, *value.List) (any, error) {
		return nil, &kafkabpl.Error{Func: "kafka-fail", Err: kafkabpl.ErrTimeout}
	})
	in.Define("lib-plain-error", func(context.Context, *value.List) (any, error) {
		return nil, errors.New("broker said no")
	})
	// lib-call calls its first argument with the rest.
	in.Define("lib-call", func(ctx context.Context, args *value.List) (any, error) {
		c, ok := args.At(0).(value.Callable)
		if !ok {
			return nil, fmt.Errorf("lib-call: %w: want a function", value.ErrInvalidArgument)
		}
		rest := &value.List{}
		for i := 1; i < args.Len(); i++ {
			rest.AppendNamed(args.Name(i), args.At(i))
		}
		return c.Call(ctx, rest)
	})
	in.Define("lib-wrap", func(ctx context.Context, args *value.List) (any, error) {
		_, err := args.At(0).(value.Callable).Call(ctx, nil)
		return nil, fmt.Errorf("lib-wrap: %w", err)
	})
	in.Define("print", func(context.Context, *value.List) (any, error) { return "shadowed", nil })
	return in, &out
}

type ctxKey struct{}

func TestLibraryFunctions(t *testing.T) {
	in, _ := libTest(t)
	for _, tt := range []valueTest{
		// positional and named arguments, evaluated, names kept
		{`(set v 5) (lib-echo a v ("t") "partitions" => 3 "n" => (+ 1 1))`, `(null 5 ("t") "partitions" => 3 "n" => 2)`},
		{`(lib-echo)`, `()`},
		// library functions can be called through call, by name
		{`(call lib-echo 1)`, `(1)`},
		{`(call "lib-echo" 1)`, `(1)`},
		// function values are Callables the library can call
		{`(lib-call (function (x) (* x 2)) 21)`, `42`},
		{`(lib-call (function (a b) (- a b)) "b" => 1 5)`, `4`},
		{`(lib-call (function (x) (lib-call (function (y) (+ y 1)) x)) 1)`, `2`},
		// a builtin is not shadowed by a library function of its name
		{`(print 1)`, `null`},
		{`(try (kafka-fail) (ex "Timeout" => (get ex "message")))`, `"kafka-fail: timeout"`},
		{`(try (lib-plain-error) (ex "Exception" => (get ex "message")))`, `"broker said no"`},
	} {
		got, _, err := run(t, in, tt.src)
		if err != nil || got != tt.want {
			t.Errorf("%s = %s, %v; want %s", tt.src, got, err, tt.want)
		}
	}
}

func TestLibraryContext(t *testing.T) {
	in, _ := libTest(t)
	ctx := context.WithValue(context.Background(), ctxKey{}, "mine")
	var got any
	if err := in.Run(ctx, "f", `(lib-ctx)`, func(v any) { got = v }); err != nil || got != "mine" {
		t.Errorf("the library got a context holding %v (%v), want the Run's", got, err)
	}
}

// TestLibraryContextDepths checks the contexts a task keeps for its
// library calls (libCtx): calls nested three deep, more than the two it
// keeps, each get their own depth, the same every round of a loop, and
// as far apart as in a task that made none before.
func TestLibraryContextDepths(t *testing.T) {
	in := New(io.Discard)
	defer in.Close()
	// (lib-depth args...) gives (depth args...), depth the caller's.
	in.Define("lib-depth", func(ctx context.Context, args *value.List) (any, error) {
		return value.NewList(int64(callerOf(ctx).depth)).Append(args), nil
	})
	const call = `(lib-depth (lib-depth (lib-depth)) (lib-depth))`
	// depths reads the depths of call's value: outer, middle, inner, and
	// the outer's second argument's.
	depths := func(v any) [4]int64 {
		d := func(v any) int64 { return v.(*value.List).At(0).(int64) }
		args := func(v any) *value.List { return v.(*value.List).At(1).(*value.List) }
		middle := args(v).At(0)
		return [4]int64{d(v), d(middle), d(args(middle).At(0)), d(args(v).At(1))}
	}
	var once any
	if err := in.Run(context.Background(), "once.bpl", call, func(v any) { once = v }); err != nil {
		t.Fatal(err)
	}
	var rounds any
	src := `(set r ()) (set i 0) (while (< i 3) (push r ` + call + `) (set i (+ i 1))) r`
	if err := in.Run(context.Background(), "rounds.bpl", src, func(v any) { rounds = v }); err != nil {
		t.Fatal(err)
	}
	lone := depths(once)
	if !(lone[0] < lone[1] && lone[1] < lone[2] && lone[3] == lone[1]) {
		t.Fatalf("depths %v: want nested calls deeper, and siblings alike", lone)
	}
	l := rounds.(*value.List)
	for i := range l.Len() {
		got := depths(l.At(i))
		for k := range got {
			if got[k]-got[0] != lone[k]-lone[0] || got[0] != depths(l.At(0))[0] {
				t.Fatalf("round %d: depths %v, want as %v (a lone call's) apart and as round 0's", i, got, lone)
			}
		}
	}
}

// TestLibraryCallAllocs checks what a compiled call of a library function
// allocates, as a script's poll loop makes one a poll: its argument list
// (one allocation for up to four arguments), and not the context naming
// the task, which the task keeps from call to call, nor the function's
// name formatted for an error that is not raised.
func TestLibraryCallAllocs(t *testing.T) {
	in := New(io.Discard)
	defer in.Close()
	in.Define("lib-nop", func(context.Context, *value.List) (any, error) { return nil, nil })
	// Lists may contain themselves from now on: every call checks its
	// arguments. i stays below 256: its boxing allocates nothing.
	value.NewList().MarkShared()
	loop := func(n int) float64 {
		src := fmt.Sprintf(`(set i 0) (while (< i %d) (lib-nop i "x") (set i (+ i 1)))`, n)
		return testing.AllocsPerRun(5, func() {
			if err := in.Run(context.Background(), "allocs.bpl", src, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Other tests' goroutines may allocate meanwhile, never the other way
	// round: the least of a few tries.
	perCall := math.Inf(1)
	for range 5 {
		perCall = min(perCall, (loop(250)-loop(50))/200)
	}
	if perCall > 1 {
		t.Errorf("a library call made %.2f allocations, want at most 1", perCall)
	}
}

func TestLibraryErrors(t *testing.T) {
	in, _ := libTest(t)
	_, _, err := run(t, in, "(do\n  (kafka-fail))")
	var e *Exception
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an exception", err)
	}
	if e.Type != "Timeout" || e.Message != "kafka-fail: timeout" || e.Line != 2 || e.File != "test.bpl" {
		t.Errorf("got %#v", e)
	}
	if !errors.Is(err, kafkabpl.ErrTimeout) {
		t.Errorf("errors.Is(err, ErrTimeout) is false")
	}
	if got, want := err.Error(), "Timeout: kafka-fail: timeout (test.bpl:2)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}

	// A function value's exception comes back through the library as it
	// was raised.
	_, _, err = run(t, in, "(lib-call (function ()\n  (throw \"MyErr\" \"x\")))")
	if !errors.As(err, &e) || e.Type != "MyErr" || e.Message != "x" || e.Line != 2 {
		t.Errorf("through lib-call: %v", err)
	}
	// Wrapped, it keeps its type.
	_, _, err = run(t, in, `(try (lib-wrap (function () (throw "MyErr" "x"))) (ex "MyErr" => (get ex "message")))`)
	if err != nil {
		t.Errorf("wrapped exception not caught by its type: %v", err)
	}
	// Recursion through the library is bounded too.
	_, _, err = run(t, in, `(set f (function () (lib-call f))) (f)`)
	if !errors.As(err, &e) || e.Type != "StackOverflow" {
		t.Errorf("recursion through the library: %v, want StackOverflow", err)
	}
}

func TestFunctionCallFromGo(t *testing.T) {
	in := New(nil)
	var fn any
	if err := in.Run(context.Background(), "f", `(set k 10) (function (a 5) (+ a k))`, func(v any) { fn = v }); err == nil {
		t.Fatal("a parameter that is a number should fail")
	}
	if err := in.Run(context.Background(), "f", `(set k 10) (function (a) (+ a k))`, func(v any) { fn = v }); err != nil {
		t.Fatal(err)
	}
	c, ok := fn.(value.Callable)
	if !ok {
		t.Fatalf("function value %T is not a value.Callable", fn)
	}
	v, err := c.Call(context.Background(), value.NewList(int64(5)))
	if err != nil || v != int64(15) {
		t.Errorf("Call(5) = %v, %v; want 15", v, err)
	}
	if s := fmt.Sprint(fn); s != "(function (a) (+ a k))" {
		t.Errorf("String() = %q", s)
	}
	if _, err := (*Function)(nil).Call(context.Background(), nil); err == nil {
		t.Error("a nil *Function's Call succeeded")
	}
}

// TestConcurrentRuns runs scripts at once on one interpreter (run it with
// -race).
func TestConcurrentRuns(t *testing.T) {
	in, _ := libTest(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			src := fmt.Sprintf(`(set g%d 0) (while (< g%d 200) (set g%d (+ g%d 1)) (lib-echo g%d) (print g%d))`, i, i, i, i, i, i)
			if err := in.Run(context.Background(), "c", src, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// TestTryJavaNames checks that brain4it's scripts, which name Java
// exception classes in try, catch the types that stand for them here, and
// that a handler naming the type itself comes first.
func TestTryJavaNames(t *testing.T) {
	checkValues(t, []valueTest{
		{`(try (/ 1 0) (ex "ArithmeticException" => "arith"))`, `"arith"`},
		{`(try (+ 1 "a") (ex "ClassCastException" => "cast"))`, `"cast"`},
		{`(try (+ 1 "a") (ex "IllegalArgumentException" => "illegal"))`, `"illegal"`},
		{`(try (+ 1 "a") (ex "RuntimeException" => "runtime"))`, `"runtime"`},
		{`(try (+ 1 "a") (ex "InvalidArgument" => "ours" "IllegalArgumentException" => "java"))`, `"ours"`},
		{`(try (+ 1 "a") (ex "ArithmeticException" => 1 "*" => "any"))`, `"any"`},
		{`(try (throw "UnknownHandle" "x") (ex "Exception" => (get ex "message")))`, `"x"`},
		{`(try (throw "NotSubscribed" "x") (ex "IllegalStateException" => 1))`, `1`},
		// the exception keeps its own type
		{`(try (/ 1 0) (ex "ArithmeticException" => (get ex 0)))`, `"DivisionByZero"`},
	})
	checkErrors(t, []errorTest{
		// no subclassing, as in brain4it: Exception is not every exception
		{`(try (/ 1 0) (ex "Exception" => 1))`, "DivisionByZero", "", 1},
		{`(try (/ 1 0) (ex "IllegalArgumentException" => 1))`, "DivisionByZero", "", 1},
	})
}

// TestCoreNames checks that every function of brain4it's core library is
// a builtin, except those left out on purpose, and that calling one of
// those is an exception rather than data.
func TestCoreNames(t *testing.T) {
	var missing []string
	for _, name := range coreNames {
		if builtins[name] == nil && notImplemented[name] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("brain4it core functions neither implemented nor explained: %v", missing)
	}
	for name := range notImplemented {
		if builtins[name] != nil {
			t.Errorf("%s is implemented but listed in notImplemented", name)
		}
	}
	checkErrors(t, []errorTest{
		{`(system "ls")`, "NotImplemented", "system: brain4it's core function is not available here: it runs operating-system commands", 1},
		{"1\n(set x (system \"ls\"))", "NotImplemented", "system:", 2},
	})
	// a name brain4it's core does not have is still data
	checkValues(t, []valueTest{{`(no-such-function 1)`, `(no-such-function 1)`}})
}

// fieldsErr is a library error that says more than its message.
type fieldsErr struct{}

func (fieldsErr) Error() string { return "delivered 1 of 2 records" }
func (fieldsErr) ExceptionFields() *value.List {
	return value.NewList().AppendNamed("delivered", int64(1))
}

// TestExceptionFields checks that what a library error says beyond its
// message reaches the handler's exception value.
func TestExceptionFields(t *testing.T) {
	in := New(nil)
	in.Define("partial", func(context.Context, *value.List) (any, error) { return nil, fieldsErr{} })
	got, _, err := run(t, in, `(try (partial) (ex "*" => ex))`)
	if err != nil || got != `("Exception" "message" => "delivered 1 of 2 records" "delivered" => 1)` {
		t.Errorf("got %s, %v", got, err)
	}
}
