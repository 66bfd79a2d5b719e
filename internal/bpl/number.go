package bpl

import (
	"math"

	"github.com/brain4it/kafkabpl"
)

// The number family: arithmetic, comparison and logic.

func init() {
	register(map[string]builtin{
		"+":   biAdd,
		"-":   biSub,
		"*":   biMul,
		"/":   biDiv,
		"=":   biEq,
		"!=":  biNe,
		"<":   biCompare,
		">":   biCompare,
		"<=":  biCompare,
		">=":  biCompare,
		"and": biAnd,
		"or":  biOr,
		"not": biNot,
	})
}

// Arithmetic on int64 stays int64 and wraps around on overflow, as Java's
// long does; with a float64 it is float64.

// numbers evaluates the arguments of call and checks they are numbers.
func (t *task) numbers(f *frame, call *kafkabpl.List) ([]any, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	for i, v := range args.Values() {
		switch v.(type) {
		case int64, float64:
		default:
			return nil, t.errorf(f, "InvalidArgument", "%s: argument %d is %s, want a number", fname(call), i+1, describe(v))
		}
	}
	return args.Values(), nil
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// fold combines numbers left to right with op on int64s and fop on
// float64s.
func fold(acc any, ns []any, op func(a, b int64) int64, fop func(a, b float64) float64) any {
	for _, n := range ns {
		ai, aok := acc.(int64)
		bi, bok := n.(int64)
		if aok && bok {
			acc = op(ai, bi)
			continue
		}
		af, _ := toFloat(acc)
		bf, _ := toFloat(n)
		acc = fop(af, bf)
	}
	return acc
}

// (+ a b ...) gives the sum; (+) is 0.
func biAdd(t *task, f *frame, call *kafkabpl.List) (any, error) {
	ns, err := t.numbers(f, call)
	if err != nil {
		return nil, err
	}
	return fold(int64(0), ns, func(a, b int64) int64 { return a + b }, func(a, b float64) float64 { return a + b }), nil
}

// (- a b ...) subtracts the others from a; (- a) negates a.
func biSub(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	ns, err := t.numbers(f, call)
	if err != nil {
		return nil, err
	}
	if len(ns) == 1 {
		ns = []any{int64(0), ns[0]}
	}
	return fold(ns[0], ns[1:], func(a, b int64) int64 { return a - b }, func(a, b float64) float64 { return a - b }), nil
}

// (* a b ...) gives the product; (*) is 1.
func biMul(t *task, f *frame, call *kafkabpl.List) (any, error) {
	ns, err := t.numbers(f, call)
	if err != nil {
		return nil, err
	}
	return fold(int64(1), ns, func(a, b int64) int64 { return a * b }, func(a, b float64) float64 { return a * b }), nil
}

// (/ a b ...) divides a by the others; (/ a) is 1/a. Integers divide to an
// integer when the division is exact and to a float otherwise (7/2 is 3.5,
// not 3); an integer divided by 0 is a DivisionByZero exception, a float
// gives Infinity or NaN.
func biDiv(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	ns, err := t.numbers(f, call)
	if err != nil {
		return nil, err
	}
	if len(ns) == 1 {
		ns = []any{int64(1), ns[0]}
	}
	acc := ns[0]
	for _, n := range ns[1:] {
		ai, aok := acc.(int64)
		bi, bok := n.(int64)
		switch {
		case aok && bok && bi == 0:
			return nil, t.errorf(f, "DivisionByZero", "/: integer division by zero")
		case aok && bok && ai%bi == 0 && !(ai == math.MinInt64 && bi == -1):
			acc = ai / bi
		default:
			af, _ := toFloat(acc)
			bf, _ := toFloat(n)
			acc = af / bf
		}
	}
	return acc, nil
}

// (= a b ...) is true when all its arguments are equal: numbers by value
// (1 = 1.0), lists element by element with their names, other values by
// type and content.
func biEq(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, -1); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	vs := args.Values()
	for i := 1; i < len(vs); i++ {
		if !equal(vs[0], vs[i], map[pair]bool{}) {
			return false, nil
		}
	}
	return true, nil
}

// (!= a b) is (not (= a b)).
func biNe(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	return !equal(args.At(0), args.At(1), map[pair]bool{}), nil
}

// (< a b ...), (> ...), (<= ...) and (>= ...) compare numbers by value and
// strings by their bytes; with more than two arguments each must compare
// so with the next. Anything compared with NaN is false.
func biCompare(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 2, -1); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	op := fname(call)
	vs := args.Values()
	result := true
	for i := 1; i < len(vs); i++ {
		c, ok := compare(vs[i-1], vs[i])
		if !ok {
			return nil, t.errorf(f, "InvalidArgument", "%s: cannot compare %s with %s", op, describe(vs[i-1]), describe(vs[i]))
		}
		if c == unordered {
			result = false
			continue
		}
		switch op {
		case "<":
			result = result && c < 0
		case ">":
			result = result && c > 0
		case "<=":
			result = result && c <= 0
		case ">=":
			result = result && c >= 0
		}
	}
	return result, nil
}

// unordered is compare's result when a NaN is involved.
const unordered = 2

// compare orders two numbers or two strings: -1, 0, 1 or unordered; ok is
// false for other values.
func compare(a, b any) (int, bool) {
	if as, ok := a.(string); ok {
		bs, ok := b.(string)
		switch {
		case !ok:
			return 0, false
		case as < bs:
			return -1, true
		case as > bs:
			return 1, true
		}
		return 0, true
	}
	ai, aok := a.(int64)
	bi, bok := b.(int64)
	if aok && bok {
		switch {
		case ai < bi:
			return -1, true
		case ai > bi:
			return 1, true
		}
		return 0, true
	}
	af, aok := toFloat(a)
	bf, bok := toFloat(b)
	switch {
	case !aok || !bok:
		return 0, false
	case af < bf:
		return -1, true
	case af > bf:
		return 1, true
	case af == bf:
		return 0, true
	}
	return unordered, true
}

// (and a b ...) is true when all its arguments are true, evaluating them
// only until one is false; (and) is true.
func biAnd(t *task, f *frame, call *kafkabpl.List) (any, error) {
	for i := 1; i < call.Len(); i++ {
		v, err := t.eval(f, call.At(i))
		if err != nil || !truthy(v) {
			return false, err
		}
	}
	return true, nil
}

// (or a b ...) is true when any argument is true, evaluating them only
// until one is; (or) is false.
func biOr(t *task, f *frame, call *kafkabpl.List) (any, error) {
	for i := 1; i < call.Len(); i++ {
		v, err := t.eval(f, call.At(i))
		if err != nil || truthy(v) {
			return err == nil, err
		}
	}
	return false, nil
}

// (not x) is true when x is false.
func biNot(t *task, f *frame, call *kafkabpl.List) (any, error) {
	if err := t.arity(f, call, 1, 1); err != nil {
		return nil, err
	}
	v, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	return !truthy(v), nil
}
