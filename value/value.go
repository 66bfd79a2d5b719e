// Package value is BPL's values in Go, below everything else of kafkabpl:
// the [List], [Reference]s, functions as a runtime hands them over
// ([Func], [Callable]), BPL text read by [Parse] and written by [Format]
// with brain4it's tags for shared lists, and the exception types errors
// carry into a script ([ErrorType]).
//
// It imports nothing of the project and nothing outside the standard
// library, so that the evaluator (package bpl) embeds without Kafka:
//
//	value  ←  bpl (the evaluator)
//	value  ←  kafkabpl (the clients)  ←  server, cmd/kafkabpl
//
// A BPL value in Go is one of nil, bool, int64, float64, string, []byte,
// *List, [Reference] or a [Callable]. Library inputs may also be other Go
// values that [FromGo] converts (int, []string, map[string]any, ...).
package value

import (
	"context"
	"errors"
	"fmt"
)

// ErrInvalidArgument is wrapped by the errors of bad input: text that does
// not parse (*[SyntaxError]), a Go value [FromGo] cannot convert. Package
// kafkabpl's ErrInvalidArgument is this same error.
var ErrInvalidArgument = errors.New("invalid argument")

// Func is a BPL function as a runtime registers it: it takes the evaluated
// arguments, positional ones unnamed and in order, named ones ("partitions"
// => 3) carrying their names, and returns a BPL value or an error.
type Func func(ctx context.Context, args *List) (any, error)

// Callable is a BPL function value that a runtime hands to a library as an
// argument, such as a user-defined (function (x) ...).
type Callable interface {
	Call(ctx context.Context, args *List) (any, error)
}

// Lazy is an argument made only if the function it is passed to reads it:
// a windowed count's aggregate, (function (in acc) (+ acc 1)), never reads
// its input, whose record list costs more to build than the call. Pass a
// *Lazy only to a callee for which [TakesLazy] is true; that callee calls
// [Force] on first read, so that no script ever sees a *Lazy.
type Lazy struct {
	Make func(arg any) any // makes the value from Arg
	Arg  any
}

// Force returns the value v stands for: a *[Lazy]'s value, made now, or v
// itself.
func Force(v any) any {
	if l, ok := v.(*Lazy); ok {
		return l.Make(l.Arg)
	}
	return v
}

// TakesLazy reports whether callee takes *[Lazy] arguments: whether it has
// a method TakesLazy() bool that returns true (package bpl's functions
// do).
func TakesLazy(callee any) bool {
	t, ok := callee.(interface{ TakesLazy() bool })
	return ok && t.TakesLazy()
}

// ErrorType returns the BPL exception type of err, the type a try handler
// matches ("Type" => handler): the ExceptionType() of the first error in
// err's chain that has such a method (package kafkabpl's errors do, and
// so do a runtime's own exceptions); else "InvalidArgument" for an error
// wrapping [ErrInvalidArgument], "Timeout" for a passed deadline,
// "Interrupted" for a cancelled context; else "Exception".
func ErrorType(err error) string {
	var typed interface{ ExceptionType() string }
	switch {
	case errors.As(err, &typed):
		return typed.ExceptionType()
	case errors.Is(err, ErrInvalidArgument):
		return "InvalidArgument"
	case errors.Is(err, context.DeadlineExceeded):
		return "Timeout"
	case errors.Is(err, context.Canceled):
		return "Interrupted"
	}
	return "Exception"
}

// Describe names v in an error message, briefly, in the words the
// project's messages use: "null", a number or boolean as BPL text, the
// string "..." and the reference x and the list (...) (each cut to 40
// characters, "..." marking a cut), a byte array of N bytes, a function.
func Describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case *List:
		s, _ := formatShort(v, 4*40) // 40 characters take 160 bytes at most
		return "the list " + Short(s)
	case Callable:
		return "a function"
	case Reference:
		return "the reference " + Short(string(v))
	case string:
		return "the string " + Short(Format(v))
	case []byte:
		return fmt.Sprintf("a byte array of %d bytes", len(v))
	}
	return Short(Format(v))
}

// Short cuts s to at most 40 characters, "..." marking a cut: how the
// project's messages quote text that may be long.
func Short(s string) string {
	n := 0
	for i := range s {
		if n == 40 {
			return s[:i] + "..."
		}
		n++
	}
	return s
}
