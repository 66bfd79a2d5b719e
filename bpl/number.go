package bpl

import (
	"math"
	"math/rand/v2"
	"reflect"

	"github.com/brain4it/kafkabpl/value"
)

// The number family: arithmetic, comparison, logic and bits.

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

		"div":    biIntDiv,
		"mod":    biMod,
		"random": biRandom,
		"++":     biIncrement,
		"--":     biIncrement,
		"==":     biNameEq,
		"===":    biExactEq,
		"ln":     biLn,
		"log":    biLog,
		"logn":   biLn,
		"log10":  biLog,

		"bit-and":   biBitAnd,
		"bit-or":    biBitOr,
		"bit-xor":   biBitXor,
		"bit-not":   biBitNot,
		"bit-shift": biBitShift,
	})
}

// Arithmetic on int64 stays int64 and wraps around on overflow, as Java's
// long does; with a float64 it is float64.

// numbers evaluates the arguments of call into buf (see evalValues) and
// checks they are numbers.
func (t *task) numbers(f *frame, call *value.List, buf []any) ([]any, error) {
	vs, err := t.evalValues(f, call, 1, buf)
	if err != nil {
		return nil, err
	}
	return t.checkNumbers(f, call, vs)
}

// checkNumbers checks that the evaluated arguments vs of call are numbers.
func (t *task) checkNumbers(f *frame, call *value.List, vs []any) ([]any, error) {
	for i, v := range vs {
		switch v.(type) {
		case int64, float64:
		default:
			return nil, t.errorf(f, "InvalidArgument", "%s: argument %d is %s, want a number", fname(call), i+1, value.Describe(v))
		}
	}
	return vs, nil
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
// float64s: int64s while acc and the numbers so far are, float64s from
// the first float on. It keeps the running value unboxed, so that only
// the result is made an interface (an allocation for most numbers), not
// each step's.
func fold(acc any, ns []any, op func(a, b int64) int64, fop func(a, b float64) float64) any {
	if len(ns) == 0 {
		return acc
	}
	ai, isInt := acc.(int64)
	var af float64
	if !isInt {
		af, _ = toFloat(acc)
	}
	for _, n := range ns {
		if isInt {
			if bi, ok := n.(int64); ok {
				ai = op(ai, bi)
				continue
			}
			af, isInt = float64(ai), false
		}
		bf, _ := toFloat(n)
		af = fop(af, bf)
	}
	if isInt {
		return ai
	}
	return af
}

// (+ a b ...) gives the sum; (+) is 0. A null argument is left out, as
// brain4it leaves it out, so that a function's parameters not passed add
// nothing: (+ 4 null) is 4. Any other argument that is no number is an
// InvalidArgument (brain4it leaves those out too).
func biAdd(t *task, f *frame, call *value.List) (any, error) {
	var buf argBuf
	vs, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return addValues(t, f, call, vs)
}

// addValues is + of the evaluated arguments vs.
func addValues(t *task, f *frame, _ *value.List, vs []any) (any, error) {
	// fold(int64(0), the numbers, +) written out, as + is the commonest
	// arithmetic: an int64 sum until the first float, a float64 one
	// from there on.
	var si int64
	var sf float64
	isInt := true
	for i, v := range vs {
		switch n := v.(type) {
		case nil:
		case int64:
			if isInt {
				si += n
			} else {
				sf += float64(n)
			}
		case float64:
			if isInt {
				sf, isInt = float64(si), false
			}
			sf += n
		default:
			return nil, t.errorf(f, "InvalidArgument", "+: argument %d is %s, want a number", i+1, value.Describe(v))
		}
	}
	if isInt {
		return si, nil
	}
	return sf, nil
}

// (- a b ...) subtracts the others from a; (- a) negates a.
func biSub(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	var buf argBuf
	vs, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return subValues(t, f, call, vs)
}

// subValues is - of the evaluated arguments vs (at least one).
func subValues(t *task, f *frame, call *value.List, vs []any) (any, error) {
	ns, err := t.checkNumbers(f, call, vs)
	if err != nil {
		return nil, err
	}
	if len(ns) == 1 {
		ns = []any{int64(0), ns[0]}
	}
	return fold(ns[0], ns[1:], func(a, b int64) int64 { return a - b }, func(a, b float64) float64 { return a - b }), nil
}

// (* a b ...) gives the product; (*) is 1.
func biMul(t *task, f *frame, call *value.List) (any, error) {
	var buf argBuf
	vs, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return mulValues(t, f, call, vs)
}

// mulValues is * of the evaluated arguments vs.
func mulValues(t *task, f *frame, call *value.List, vs []any) (any, error) {
	ns, err := t.checkNumbers(f, call, vs)
	if err != nil {
		return nil, err
	}
	return fold(int64(1), ns, func(a, b int64) int64 { return a * b }, func(a, b float64) float64 { return a * b }), nil
}

// (/ a b ...) divides a by the others; (/ a) is 1/a. Integers divide to an
// integer when the division is exact and to a float otherwise (7/2 is 3.5,
// not 3); an integer divided by 0 is a DivisionByZero exception, a float
// gives Infinity or NaN.
func biDiv(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, -1); err != nil {
		return nil, err
	}
	var buf argBuf
	vs, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return divValues(t, f, call, vs)
}

// divValues is / of the evaluated arguments vs (at least one).
func divValues(t *task, f *frame, call *value.List, vs []any) (any, error) {
	ns, err := t.checkNumbers(f, call, vs)
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
// (1 = 1.0), lists element by element (not their names: == compares
// those too), functions by their code, as brain4it's, which are lists
// (=== tells one function from another of the same code), other values by
// type and content.
func biEq(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, -1); err != nil {
		return nil, err
	}
	var buf argBuf
	vs, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return eqValues(t, f, call, vs)
}

// eqValues is = of the evaluated arguments vs.
func eqValues(_ *task, _ *frame, _ *value.List, vs []any) (any, error) {
	for i := 1; i < len(vs); i++ {
		if !equal(vs[0], vs[i], false, nil) {
			return false, nil
		}
	}
	return true, nil
}

// neValues is != of the evaluated arguments vs.
func neValues(t *task, f *frame, call *value.List, vs []any) (any, error) {
	eq, _ := eqValues(t, f, call, vs)
	return !eq.(bool), nil
}

// (!= a b ...) is (not (= a b ...)): true when any argument differs from
// the first. brain4it's compares the first two only.
func biNe(t *task, f *frame, call *value.List) (any, error) {
	eq, err := biEq(t, f, call)
	if err != nil {
		return nil, err
	}
	return !eq.(bool), nil
}

// (< a b ...), (> ...), (<= ...) and (>= ...) compare numbers by value and
// strings by their bytes; with more than two arguments each must compare
// so with the next. Anything compared with NaN is false.
func biCompare(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 2, -1); err != nil {
		return nil, err
	}
	var buf argBuf
	vs, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return compareValues(t, f, call, vs)
}

// compareValues is <, >, <= or >= (call's head) of the evaluated
// arguments vs.
func compareValues(t *task, f *frame, call *value.List, vs []any) (any, error) {
	op := fname(call)
	result := true
	for i := 1; i < len(vs); i++ {
		c, ok := compare(vs[i-1], vs[i])
		if !ok {
			return nil, t.errorf(f, "InvalidArgument", "%s: cannot compare %s with %s", op, value.Describe(vs[i-1]), value.Describe(vs[i]))
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
func biAnd(t *task, f *frame, call *value.List) (any, error) {
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
func biOr(t *task, f *frame, call *value.List) (any, error) {
	for i := 1; i < call.Len(); i++ {
		v, err := t.eval(f, call.At(i))
		if err != nil || truthy(v) {
			return err == nil, err
		}
	}
	return false, nil
}

// (not x) is true when x is false.
func biNot(t *task, f *frame, call *value.List) (any, error) {
	v, err := t.onlyArg(f, call)
	if err != nil {
		return nil, err
	}
	return !truthy(v), nil
}

// javaLong converts a number to an integer as Java's (long) cast does:
// floats are truncated toward zero, saturate at the int64 range, and NaN
// is 0.
func javaLong(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		switch {
		case v != v:
			return 0
		case v >= math.MaxInt64:
			return math.MaxInt64
		case v <= math.MinInt64:
			return math.MinInt64
		}
		return int64(v)
	}
	return 0
}

// numArgs checks call's arity and evaluates its arguments into buf (see
// evalValues), which must be numbers.
func (t *task) numArgs(f *frame, call *value.List, min, max int, buf []any) ([]any, error) {
	if err := t.arity(f, call, min, max); err != nil {
		return nil, err
	}
	return t.numbers(f, call, buf)
}

// (div a b) gives the integer quotient of a and b, truncated toward zero
// (7 div 2 is 3, -7 div 2 is -3); floats are first truncated to integers
// (7.9 is 7). A divisor of 0 (or of a float below 1 in size) is a
// DivisionByZero exception.
func biIntDiv(t *task, f *frame, call *value.List) (any, error) {
	var buf argBuf
	ns, err := t.numArgs(f, call, 2, 2, buf[:])
	if err != nil {
		return nil, err
	}
	a, b := javaLong(ns[0]), javaLong(ns[1])
	if b == 0 {
		return nil, t.errorf(f, "DivisionByZero", "div: integer division by zero")
	}
	return a / b, nil // MinInt64 / -1 wraps to MinInt64, as in Java
}

// (mod a b) gives the remainder of a divided by b, with the sign of a
// ((mod 7 3) is 1, (mod -7 3) is -1, (mod 7.5 2) is 1.5). Of two integers
// it is an integer, and a divisor of 0 is a DivisionByZero exception; with
// a float it is a float, and a divisor of 0 gives NaN.
func biMod(t *task, f *frame, call *value.List) (any, error) {
	var buf argBuf
	if err := t.arity(f, call, 2, 2); err != nil {
		return nil, err
	}
	vs, err := t.evalValues(f, call, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return modValues(t, f, call, vs)
}

// modValues is mod of the evaluated arguments vs (two).
func modValues(t *task, f *frame, call *value.List, vs []any) (any, error) {
	ns, err := t.checkNumbers(f, call, vs)
	if err != nil {
		return nil, err
	}
	a, aok := ns[0].(int64)
	b, bok := ns[1].(int64)
	if aok && bok {
		if b == 0 {
			return nil, t.errorf(f, "DivisionByZero", "mod: integer division by zero")
		}
		return a % b, nil
	}
	af, _ := toFloat(ns[0])
	bf, _ := toFloat(ns[1])
	return math.Mod(af, bf), nil
}

// (random) gives a random float in [0, 1); (random n) one in [0, n) (in
// (n, 0] for a negative n), always a float: (random 10) may give
// 8.836184088394907.
func biRandom(t *task, f *frame, call *value.List) (any, error) {
	var buf argBuf
	ns, err := t.numArgs(f, call, 0, 1, buf[:])
	if err != nil {
		return nil, err
	}
	r := rand.Float64()
	if len(ns) == 1 {
		n, _ := toFloat(ns[0])
		r *= n
	}
	return r, nil
}

// (++ x) adds 1 to the variable x and gives its new value; (++ x n) adds
// n. (-- x) and (-- x n) subtract. x is not evaluated: it is a variable
// name or a path (a/b/0), or else an expression that gives a reference,
// such as (quote x). An unset (null) variable counts as 0; the sum of two
// integers is an integer (wrapping around like +), else a float. The
// variable is set as set sets it: the local one if there is one, else the
// global.
func biIncrement(t *task, f *frame, call *value.List) (any, error) {
	name := fname(call)
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	target := call.At(1)
	if l, ok := target.(*value.List); ok {
		v, err := t.eval(f, l)
		if err != nil {
			return nil, err
		}
		target = v
	}
	ref, ok := target.(value.Reference)
	if !ok || ref == "" {
		return nil, t.errorf(f, "InvalidArgument", "%s: want a variable name, got %s", name, value.Describe(target))
	}
	var step any = int64(1)
	if call.Len() > 2 {
		v, err := t.eval(f, call.At(2))
		if err != nil {
			return nil, err
		}
		if _, ok := toFloat(v); !ok {
			return nil, t.errorf(f, "InvalidArgument", "%s: argument 2 is %s, want a number", name, value.Describe(v))
		}
		step = v
	}
	cur := t.lookup(f, string(ref))
	if cur == nil {
		cur = int64(0)
	}
	if _, ok := toFloat(cur); !ok {
		return nil, t.errorf(f, "InvalidArgument", "%s: %s is %s, want a number", name, ref, value.Describe(cur))
	}
	var v any
	if name == "++" {
		v = fold(cur, []any{step}, func(a, b int64) int64 { return a + b }, func(a, b float64) float64 { return a + b })
	} else {
		v = fold(cur, []any{step}, func(a, b int64) int64 { return a - b }, func(a, b float64) float64 { return a - b })
	}
	if err := t.set(f, string(ref), v); err != nil {
		return nil, err
	}
	return v, nil
}

// chainEq evaluates the arguments of call in order until one is not eq to
// the first: how == and === compare.
func (t *task) chainEq(f *frame, call *value.List, eq func(a, b any) bool) (any, error) {
	if err := t.arity(f, call, 2, -1); err != nil {
		return nil, err
	}
	first, err := t.eval(f, call.At(1))
	if err != nil {
		return nil, err
	}
	for i := 2; i < call.Len(); i++ {
		v, err := t.eval(f, call.At(i))
		if err != nil {
			return nil, err
		}
		if !eq(first, v) {
			return false, nil
		}
	}
	return true, nil
}

// (== a b ...) is true when all its arguments are equal as = has it, names
// of list elements included: (== (1 2) ("a" => 1 2)) is false. It stops
// evaluating its arguments at the first that differs.
func biNameEq(t *task, f *frame, call *value.List) (any, error) {
	return t.chainEq(f, call, func(a, b any) bool { return equal(a, b, true, nil) })
}

// (=== a b ...) is true when all its arguments are the same: lists and
// functions only when they are the very same (a list is === only to
// itself, not to a copy); numbers of the same kind and value (3 and 3.0
// differ; NaN is === NaN, 0.0 is not -0.0); strings, byte arrays,
// booleans and references by content. It stops evaluating its arguments at
// the first that differs.
func biExactEq(t *task, f *frame, call *value.List) (any, error) {
	return t.chainEq(f, call, exactEqual)
}

// exactEqual is ===.
func exactEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case float64:
		y, ok := b.(float64)
		return ok && (math.Float64bits(x) == math.Float64bits(y) || x != x && y != y)
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	case *value.List:
		y, ok := b.(*value.List)
		return ok && x == y
	}
	if b == nil || reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b // bool, int64, string, Reference, *Function and other comparable values
}

// logarithm is ln and log: one number, a float result.
func (t *task) logarithm(f *frame, call *value.List, log func(float64) float64) (any, error) {
	var buf argBuf
	ns, err := t.numArgs(f, call, 1, 1, buf[:])
	if err != nil {
		return nil, err
	}
	x, _ := toFloat(ns[0])
	return log(x), nil
}

// (ln x) gives the natural logarithm of x, a float: (ln 1) is 0, (ln 0)
// -Infinity, and a negative x gives NaN. logn is brain4it's name for it.
// The result is Java's StrictMath.log, to the last bit.
func biLn(t *task, f *frame, call *value.List) (any, error) {
	return t.logarithm(f, call, javaLog)
}

// (log x) gives the base-10 logarithm of x, a float: (log 1000) is 3,
// (log 0) -Infinity, and a negative x gives NaN. log10 is brain4it's name
// for it.
// The result is Java's StrictMath.log10, to the last bit: (log 5) is
// 0.6989700043360189, and a power of ten gives its exact exponent.
func biLog(t *task, f *frame, call *value.List) (any, error) {
	return t.logarithm(f, call, javaLog10)
}

// The bit functions work on 64-bit integers (brain4it's on 32-bit ones);
// floats are first truncated to integers, as div does.

// bits evaluates the arguments of a bit function as integers.
func (t *task) bits(f *frame, call *value.List, min, max int) ([]int64, error) {
	var buf argBuf
	ns, err := t.numArgs(f, call, min, max, buf[:])
	if err != nil {
		return nil, err
	}
	is := make([]int64, len(ns))
	for i, n := range ns {
		is[i] = javaLong(n)
	}
	return is, nil
}

// (bit-and a b ...) gives the bitwise and of its arguments; (bit-and) is
// -1, all bits set. (bit-and 0xff 0xf4) is 244.
func biBitAnd(t *task, f *frame, call *value.List) (any, error) {
	is, err := t.bits(f, call, 0, -1)
	if err != nil {
		return nil, err
	}
	r := int64(-1)
	for _, i := range is {
		r &= i
	}
	return r, nil
}

// (bit-or a b ...) gives the bitwise or of its arguments; (bit-or) is 0.
func biBitOr(t *task, f *frame, call *value.List) (any, error) {
	is, err := t.bits(f, call, 0, -1)
	if err != nil {
		return nil, err
	}
	var r int64
	for _, i := range is {
		r |= i
	}
	return r, nil
}

// (bit-xor a b ...) gives the bitwise exclusive or of its arguments;
// (bit-xor) is 0.
func biBitXor(t *task, f *frame, call *value.List) (any, error) {
	is, err := t.bits(f, call, 0, -1)
	if err != nil {
		return nil, err
	}
	var r int64
	for _, i := range is {
		r ^= i
	}
	return r, nil
}

// (bit-not a) gives a with every bit flipped: (bit-not 0xff) is -256.
func biBitNot(t *task, f *frame, call *value.List) (any, error) {
	is, err := t.bits(f, call, 1, 1)
	if err != nil {
		return nil, err
	}
	return ^is[0], nil
}

// (bit-shift a n) shifts a right by n bits, keeping its sign ((bit-shift
// 16 4) is 1, (bit-shift -16 2) is -4), or left by -n bits when n is
// negative ((bit-shift 1 -4) is 16). Shifting by 64 bits or more gives 0,
// or -1 for a negative a shifted right.
func biBitShift(t *task, f *frame, call *value.List) (any, error) {
	is, err := t.bits(f, call, 2, 2)
	if err != nil {
		return nil, err
	}
	a, n := is[0], is[1]
	switch {
	case n >= 0:
		return a >> min(uint64(n), 63), nil
	case n >= -63:
		return a << uint64(-n), nil
	}
	return int64(0), nil
}
