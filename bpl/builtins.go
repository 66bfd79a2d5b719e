package bpl

import (
	"fmt"
	"strconv"
	"strings"

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

// onlyArg checks that call has exactly one argument and evaluates it: how
// most one-argument builtins start.
func (t *task) onlyArg(f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	return t.eval(f, call.At(1))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// fname is the name a call was made with, for messages.
func fname(call *kafkabpl.List) string { return kafkabpl.Format(call.At(0)) }

// coreNames are the functions of brain4it's core library (CoreLibrary),
// with the old names it has under its skynet-names setting. A call whose
// head is one of them and that is not a builtin here raises NotImplemented
// (with the reason, from notImplemented) rather than evaluate to itself as
// data, which would let a script run on with wrong values.
var coreNames = strings.Fields(`
	### != * + ++ - -- / < <= = == === > >= abs acos and append apply asin
	assert atan bit-and bit-not bit-or bit-shift bit-xor boolean call ceil
	clear clone concat cond cos date delete div do downcase empty eval
	executors exists find findstr first for floor for-each foreach
	format-date function functions get get-name getname global-scope has
	help http if indexof insert kill last length list ln local local-scope
	locate locate-string log log10 logn match match-string merge mod
	name-index names not notify number or parse parse-date pop pow push put
	put-name putname quote random reference reference-list remove
	replace-string reverse round seq set set-local sin size sleep sort
	spawn split sqrt string sublist substr substring subtype-of sync system
	tan throw timer-cancel timer-schedule timer-tasks trim try type-of
	typeof upcase wait watch when while`)

// notImplemented says why a brain4it core function is left out.
var notImplemented = map[string]string{
	"system": "it runs operating-system commands, which kafkabpl's scripts may not do",
}

// isCore reports whether name is a function of brain4it's core library.
var isCore = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range coreNames {
		m[n] = true
	}
	return m
}()
