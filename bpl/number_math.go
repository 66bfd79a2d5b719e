package bpl

import (
	"math"

	"github.com/brain4it/kafkabpl/value"
)

// The number family, continued: the functions brain4it's core library
// takes from Java's Math (abs, acos, asin, atan, ceil, cos, floor, pow,
// round, sin, sqrt, tan; logn and log10 are ln and log in number.go).
// Each takes numbers only: another argument, missing or extra ones are an
// InvalidArgument exception naming the function and the argument, where
// brain4it fails with a Java exception or ignores extra arguments.

func init() {
	register(map[string]builtin{
		"abs":   biAbs,
		"acos":  biAcos,
		"asin":  biAsin,
		"atan":  biAtan,
		"ceil":  biCeil,
		"cos":   biCos,
		"floor": biFloor,
		"pow":   biPow,
		"round": biRound,
		"sin":   biSin,
		"sqrt":  biSqrt,
		"tan":   biTan,
	})
}

// mathArg evaluates the one number argument of a Math function.
func (t *task) mathArg(f *frame, call *value.List) (any, error) {
	var buf argBuf
	ns, err := t.numArgs(f, call, 1, 1, buf[:])
	if err != nil {
		return nil, err
	}
	return ns[0], nil
}

// floatFunc is a Math function of a float that gives a float.
func (t *task) floatFunc(f *frame, call *value.List, fn func(float64) float64) (any, error) {
	n, err := t.mathArg(f, call)
	if err != nil {
		return nil, err
	}
	x, _ := toFloat(n)
	return fn(x), nil
}

// (abs x) gives the absolute value of x: (abs -7.9) is 7.9. An integer
// gives an integer ((abs -3) is 3), but for the smallest 64-bit integer,
// whose absolute value only a float holds.
func biAbs(t *task, f *frame, call *value.List) (any, error) {
	n, err := t.mathArg(f, call)
	if err != nil {
		return nil, err
	}
	if i, ok := n.(int64); ok {
		switch {
		case i == math.MinInt64:
			return -float64(i), nil
		case i < 0:
			return -i, nil
		}
		return i, nil
	}
	return math.Abs(n.(float64)), nil
}

// (acos x) gives the arc cosine of x in radians, a float from 0 to pi:
// (acos 1) is 0, (acos 0.5) 1.0471975511965979; NaN when x is not within
// [-1, 1]. The result is Java's StrictMath.acos, to the last bit.
func biAcos(t *task, f *frame, call *value.List) (any, error) {
	return t.floatFunc(f, call, javaAcos)
}

// (asin x) gives the arc sine of x in radians, a float from -pi/2 to
// pi/2: (asin 1) is 1.5707963267948966; NaN when x is not within [-1, 1].
// The result is Java's StrictMath.asin, to the last bit.
func biAsin(t *task, f *frame, call *value.List) (any, error) {
	return t.floatFunc(f, call, javaAsin)
}

// (atan x) gives the arc tangent of x in radians, a float from -pi/2 to
// pi/2: (atan 0.5) is 0.4636476090008061.
func biAtan(t *task, f *frame, call *value.List) (any, error) {
	return t.floatFunc(f, call, math.Atan)
}

// (cos x) gives the cosine of the angle x in radians, a float: (cos 0) is
// 1.
// The result is Java's StrictMath's to the last bit, but for |x| beyond
// 2**19 pi/2 (about 823550), where the last two bits may differ.
func biCos(t *task, f *frame, call *value.List) (any, error) {
	return t.floatFunc(f, call, javaCos)
}

// (sin x) gives the sine of the angle x in radians, a float: (sin 0.5) is
// 0.479425538604203.
// The result is Java's StrictMath's to the last bit, but for |x| beyond
// 2**19 pi/2 (about 823550), where the last two bits may differ.
func biSin(t *task, f *frame, call *value.List) (any, error) {
	return t.floatFunc(f, call, javaSin)
}

// (tan x) gives the tangent of the angle x in radians, a float: (tan 0)
// is 0, (tan 1) 1.5574077246549023.
// The result is Java's StrictMath's to the last bit, but for |x| beyond
// 2**19 pi/2 (about 823550), where the last two bits may differ.
func biTan(t *task, f *frame, call *value.List) (any, error) {
	return t.floatFunc(f, call, javaTan)
}

// (sqrt x) gives the square root of x, a float: (sqrt 4) is 2, (sqrt 2)
// 1.4142135623730951; NaN for a negative x.
func biSqrt(t *task, f *frame, call *value.List) (any, error) {
	return t.floatFunc(f, call, math.Sqrt)
}

// (ceil x) gives the smallest whole number not below x, a float as in
// Java: (ceil 7.2) is 8.0. An integer x gives itself.
func biCeil(t *task, f *frame, call *value.List) (any, error) {
	return t.wholeFunc(f, call, math.Ceil)
}

// (floor x) gives the largest whole number not above x, a float as in
// Java: (floor 7.8) is 7.0. An integer x gives itself.
func biFloor(t *task, f *frame, call *value.List) (any, error) {
	return t.wholeFunc(f, call, math.Floor)
}

func (t *task) wholeFunc(f *frame, call *value.List, fn func(float64) float64) (any, error) {
	n, err := t.mathArg(f, call)
	if err != nil {
		return nil, err
	}
	if i, ok := n.(int64); ok {
		return i, nil
	}
	return fn(n.(float64)), nil
}

// (round x) gives the whole number nearest x as an integer, halves
// rounded up, as Java's Math.round: (round 7.5) is 8, (round -7.5) -7,
// (round 7.4) 7. NaN gives 0, and values beyond the 64-bit integers the
// largest or smallest of them. An integer x gives itself.
func biRound(t *task, f *frame, call *value.List) (any, error) {
	n, err := t.mathArg(f, call)
	if err != nil {
		return nil, err
	}
	if i, ok := n.(int64); ok {
		return i, nil
	}
	return javaRound(n.(float64)), nil
}

// javaRound is Java's Math.round of a double.
func javaRound(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return int64(r)
}

// (pow x y) gives x to the power y, a float as Java's Math.pow: (pow 2 8)
// is 256.0, (pow 2 -1) 0.5, (pow -8 (/ 1 3)) NaN.
func biPow(t *task, f *frame, call *value.List) (any, error) {
	var buf argBuf
	ns, err := t.numArgs(f, call, 2, 2, buf[:])
	if err != nil {
		return nil, err
	}
	x, _ := toFloat(ns[0])
	y, _ := toFloat(ns[1])
	return math.Pow(x, y), nil
}
