package bpl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// builtin is a core function. It gets its call unevaluated, so that
// special forms (if, while, set, ...) choose what to evaluate.
type builtin func(t *task, f *frame, call *value.List) (any, error)

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
	builtinSlots = slotsOf(builtins)
}

// builtinSlots holds builtins again as an open-addressing hash table, for
// lookupBuiltin: every call the evaluator runs looks up its head there
// first, and a Go map's lookup of a short string was a tenth of the time
// of a function value's call. register rebuilds it with each family, so
// that it always holds what builtins holds whatever order the families'
// init functions run in; nothing changes either after the package's
// initialisation, so reading them needs no lock.
var builtinSlots []builtinSlot

type builtinSlot struct {
	name string
	fn   builtin // nil for an empty slot
}

// slotsOf builds the table of m: a power of two at least four times the
// number of functions, so that a probe sequence is short and ends at an
// empty slot.
func slotsOf(m map[string]builtin) []builtinSlot {
	n := 16
	for n < 4*len(m) {
		n *= 2
	}
	slots := make([]builtinSlot, n)
	for name, b := range m {
		i := hashName(name) & uint32(n-1)
		for slots[i].fn != nil {
			i = (i + 1) & uint32(n-1)
		}
		slots[i] = builtinSlot{name, b}
	}
	return slots
}

// lookupBuiltin returns the builtin named name, or nil: builtins[name].
func lookupBuiltin(name string) builtin {
	if len(builtinSlots) == 0 {
		return nil // before any family registered
	}
	mask := uint32(len(builtinSlots) - 1)
	for i := hashName(name) & mask; ; i = (i + 1) & mask {
		s := &builtinSlots[i]
		if s.fn == nil || s.name == name {
			return s.fn
		}
	}
}

// hashName is the 32-bit FNV-1a hash of name: quick for the short names
// of functions.
func hashName(name string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h ^= uint32(name[i])
		h *= 16777619
	}
	return h
}

// arity checks that call has between min and max arguments (max < 0: no
// upper bound).
func (t *task) arity(f *frame, call *value.List, min, max int) error {
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
func (t *task) onlyArg(f *frame, call *value.List) (any, error) {
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
func fname(call *value.List) string { return value.Format(call.At(0)) }

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
