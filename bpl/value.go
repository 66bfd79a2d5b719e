package bpl

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// copyData returns a deep copy of a data list, so that changing what a
// script got from a literal never changes the code.
// A list read with a brain4it tag is kept, not copied (see value.Parse).
func copyData(l *value.List) *value.List {
	c := &value.List{}
	for i := range l.Len() {
		v := l.At(i)
		if sub, ok := v.(*value.List); ok && !sub.Tagged() {
			v = copyData(sub)
		}
		c.AppendNamed(l.Name(i), v)
	}
	return c
}

// noteCycle is called before v is put into l: when v is l or holds it, l
// is about to contain itself, which brain4it allows ((put r "me" r)). l
// is then marked (value.List.MarkShared), so that every cycle passes
// through a marked list, where the printer, comparisons and copyData
// stop, and library functions look for cycles in their arguments.
func noteCycle(v any, l *value.List) {
	if !l.Tagged() && contains(v, l) {
		l.MarkShared()
	}
}

// contains reports whether v is target or holds it at any depth.
func contains(v any, target *value.List) bool {
	l, ok := v.(*value.List)
	if !ok {
		return false
	}
	seen := map[*value.List]bool{}
	stack := []*value.List{l}
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if l == target {
			return true
		}
		if seen[l] {
			continue
		}
		seen[l] = true
		for _, e := range l.Values() {
			if sub, ok := e.(*value.List); ok {
				stack = append(stack, sub)
			}
		}
	}
	return false
}

// truthy is brain4it's truth: null, false, 0, the empty list and any
// string but "true" (in any case) are false; everything else is true.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	case float64:
		return v != 0
	case string:
		return strings.EqualFold(v, "true")
	case *value.List:
		return v.Len() > 0
	}
	return true
}

// maxText bounds the text print, string, concat and throw make of a
// value. Lists that share sublists, as (set a (list a a)) in a loop makes
// them, double their printed size with each level: printing one must fail
// rather than exhaust memory.
const maxText = 1 << 26

// text is toText for builtins: an InvalidArgument exception when the text
// would be longer than maxText.
func (t *task) text(f *frame, fn string, v any) (string, error) {
	if l, ok := v.(*value.List); ok && textSize(l, map[*value.List]int{}) > maxText {
		return "", t.errorf(f, "InvalidArgument", "%s: %s is too large to write as text (over %d bytes)", fn, value.Describe(v), maxText)
	}
	return toText(v), nil
}

// textSize is a lower bound of the length of l in BPL text, computed once
// per shared sublist; it saturates above maxText.
func textSize(l *value.List, memo map[*value.List]int) int {
	if n, ok := memo[l]; ok {
		return n
	}
	n := 2      // ()
	memo[l] = n // while l is being measured: a list within itself adds a tag
	for name, v := range l.All() {
		n++ // a space
		if name != "" {
			n += len(name) + 6 // "name" =>
		}
		switch v := v.(type) {
		case *value.List:
			n += textSize(v, memo)
		case string:
			n += len(v) + 2
		case []byte:
			n += len(v) + 2
		default:
			n++
		}
		if n > maxText {
			n = maxText + 1
			break
		}
	}
	memo[l] = n
	return n
}

// toText is a value as text: strings (and byte arrays) as they are,
// anything else in BPL text.
func toText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int64:
		return strconv.FormatInt(v, 10) // as Format writes it, without its buffer
	}
	return value.Format(v)
}

// atomText is toText for values that are not lists or functions.
func atomText(v any) (string, bool) {
	switch v.(type) {
	case *value.List, value.Callable:
		return "", false
	}
	return toText(v), true
}

// pair is two lists being compared.
type pair struct{ a, b *value.List }

// Equal reports whether a and b are equal as BPL's = compares them:
// numbers by value (3 equals 3.0), lists element by element without
// their names (== compares those too), functions by their code, other
// values by type and content.
func Equal(a, b any) bool { return equal(a, b, false, nil) }

// equal compares values as brain4it does: numbers by value (1 = 1.0; NaN
// = NaN, as Java's Double.equals has it), lists element by element (and
// their elements' names too when names is true: == compares them, = does
// not), functions by their code (as brain4it's, which are lists), other
// values by type and content. seen
// holds the list pairs already being compared, so that shared sublists
// are compared once; nil makes a new one.
func equal(a, b any, names bool, seen map[pair]bool) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		switch y := b.(type) {
		case int64:
			return x == y
		case float64:
			return intEqFloat(x, y)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return x == y || x != x && y != y
		case int64:
			return intEqFloat(y, x)
		}
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case value.Reference:
		y, ok := b.(value.Reference)
		return ok && x == y
	case *Function:
		y, ok := b.(*Function)
		return ok && (x == y || equal(x.def, y.def, names, seen))
	case *value.List:
		y, ok := b.(*value.List)
		if !ok || x.Len() != y.Len() {
			return false
		}
		if x == y || seen[pair{x, y}] {
			return true
		}
		if seen == nil {
			seen = map[pair]bool{}
		}
		seen[pair{x, y}] = true
		for i := range x.Len() {
			if names && x.Name(i) != y.Name(i) || !equal(x.At(i), y.At(i), names, seen) {
				return false
			}
		}
		return true
	}
	return false // other Go values may not even be comparable
}

// intEqFloat reports whether f is exactly the integer i.
func intEqFloat(i int64, f float64) bool {
	return f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 && int64(f) == i
}
