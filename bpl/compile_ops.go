package bpl

import (
	"math"

	"github.com/brain4it/kafkabpl/value"
)

// Calls of two arguments of the commonest strict builtins, compiled with
// a path for the values they mostly get (two integers; a list and an
// index or a name for get) that gives what their valuesFn gives, and the
// valuesFn for any others.

// intOp is a builtin's result for two integers, or false when its
// valuesFn is to decide (an integer division by 0, an inexact one).
type intOp func(x, y int64) (any, bool)

var intOps = map[string]intOp{
	"+":  func(x, y int64) (any, bool) { return x + y, true },
	"-":  func(x, y int64) (any, bool) { return x - y, true },
	"*":  func(x, y int64) (any, bool) { return x * y, true },
	"<":  func(x, y int64) (any, bool) { return x < y, true },
	">":  func(x, y int64) (any, bool) { return x > y, true },
	"<=": func(x, y int64) (any, bool) { return x <= y, true },
	">=": func(x, y int64) (any, bool) { return x >= y, true },
	"=":  func(x, y int64) (any, bool) { return x == y, true },
	"!=": func(x, y int64) (any, bool) { return x != y, true },
	"mod": func(x, y int64) (any, bool) {
		if y == 0 {
			return nil, false
		}
		return x % y, true
	},
	"/": func(x, y int64) (any, bool) {
		if y == 0 || x%y != 0 || x == math.MinInt64 && y == -1 {
			return nil, false
		}
		return x / y, true
	},
}

// binary compiles the body of a call of two arguments of the strict
// builtin name, whose valuesFn is fn.
func (c *compiler) binary(l *value.List, name string, fn valuesFn) code {
	a, b := c.expr(l.At(1)), c.expr(l.At(2))
	slow := byValues2[name]
	if slow == nil {
		return nil
	}
	if name == "get" {
		return func(t *task, f *frame) (any, error) {
			x, err := a(t, f)
			if err != nil {
				return nil, err
			}
			y, err := b(t, f)
			if err != nil {
				return nil, err
			}
			if l, ok := x.(*value.List); ok && l != nil {
				switch k := y.(type) {
				case int64:
					if k >= 0 && k < int64(l.Len()) {
						return l.At(int(k)), nil
					}
				case string:
					if k != "" {
						v, _ := l.Get(k)
						return v, nil
					}
				}
			}
			return slow(t, f, l, x, y)
		}
	}
	op := intOps[name]
	if op == nil {
		return nil
	}
	return func(t *task, f *frame) (any, error) {
		x, err := a(t, f)
		if err != nil {
			return nil, err
		}
		y, err := b(t, f)
		if err != nil {
			return nil, err
		}
		if xi, ok := x.(int64); ok {
			if yi, ok := y.(int64); ok {
				if v, ok := op(xi, yi); ok {
					return v, nil
				}
			}
		}
		return slow(t, f, l, x, y)
	}
}

// values2 is a valuesFn of two arguments, which it gets as they are, not
// on the task's stack.
type values2 func(t *task, f *frame, call *value.List, x, y any) (any, error)

// byValues2 holds the valuesFns of the builtins compiled by binary, each
// called directly with its arguments in an array on the Go stack: the
// call of a function value would make the array escape to the heap.
var byValues2 = map[string]values2{
	"+": func(t *task, f *frame, call *value.List, x, y any) (any, error) {
		vs := [2]any{x, y}
		return addValues(t, f, call, vs[:])
	},
	"-": func(t *task, f *frame, call *value.List, x, y any) (any, error) {
		vs := [2]any{x, y}
		return subValues(t, f, call, vs[:])
	},
	"*": func(t *task, f *frame, call *value.List, x, y any) (any, error) {
		vs := [2]any{x, y}
		return mulValues(t, f, call, vs[:])
	},
	"/": func(t *task, f *frame, call *value.List, x, y any) (any, error) {
		vs := [2]any{x, y}
		return divValues(t, f, call, vs[:])
	},
	"mod": func(t *task, f *frame, call *value.List, x, y any) (any, error) {
		vs := [2]any{x, y}
		return modValues(t, f, call, vs[:])
	},
	"=": func(t *task, f *frame, call *value.List, x, y any) (any, error) {
		vs := [2]any{x, y}
		return eqValues(t, f, call, vs[:])
	},
	"!=": func(t *task, f *frame, call *value.List, x, y any) (any, error) {
		vs := [2]any{x, y}
		return neValues(t, f, call, vs[:])
	},
	"<":  compare2,
	">":  compare2,
	"<=": compare2,
	">=": compare2,
	"get": func(t *task, f *frame, call *value.List, x, y any) (any, error) {
		vs := [2]any{x, y}
		return getValues(t, f, call, vs[:])
	},
}

func compare2(t *task, f *frame, call *value.List, x, y any) (any, error) {
	vs := [2]any{x, y}
	return compareValues(t, f, call, vs[:])
}
