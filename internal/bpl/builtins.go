package bpl

import (
	"fmt"
	"strconv"

	"github.com/brain4it/kafkabpl"
)

// builtin is a core function. It gets its call unevaluated, so that
// special forms (if, while, set, ...) choose what to evaluate.
type builtin func(t *task, f *frame, call *kafkabpl.List) (any, error)

// builtins holds the core functions by name. Each family's file (base.go,
// list.go, number.go, ...) registers its own in an init function: the
// functions call eval, which reads this map, so it cannot be a variable
// initializer.
var builtins = map[string]builtin{}

// register adds a family's functions; a name registered twice is a
// programming error.
func register(family map[string]builtin) {
	for name, b := range family {
		if _, dup := builtins[name]; dup {
			panic(fmt.Sprintf("bpl: builtin %q registered twice", name))
		}
		builtins[name] = b
	}
}

// arity checks that call has between min and max arguments (max < 0: no
// upper bound).
func (t *task) arity(f *frame, call *kafkabpl.List, min, max int) error {
	n := call.Len() - 1
	if n >= min && (max < 0 || n <= max) {
		return nil
	}
	var want string
	switch {
	case min == max:
		want = plural(min, "argument")
	case max < 0:
		want = "at least " + plural(min, "argument")
	default:
		want = strconv.Itoa(min) + " to " + plural(max, "argument")
	}
	return t.errorf(f, "InvalidArgument", "%s: want %s, got %d", fname(call), want, n)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// fname is the name a call was made with, for messages.
func fname(call *kafkabpl.List) string { return kafkabpl.Format(call.At(0)) }
