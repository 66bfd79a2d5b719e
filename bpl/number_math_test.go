package bpl

import "testing"

func TestMathFunctions(t *testing.T) {
	checkValues(t, []valueTest{
		{`(abs -7.9)`, `7.9`},
		{`(abs -3)`, `3`},
		{`(subtype-of (abs -3))`, `"integer"`},
		{`(abs -9223372036854775808)`, `9.223372036854776E18`},
		{`(acos 2)`, `NaN`},
		{`(asin 1)`, `1.5707963267948966`},
		{`(atan 0.5)`, `0.4636476090008061`},
		{`(cos 0)`, `1`},
		{`(sin 0.5)`, `0.479425538604203`},
		{`(sqrt 2)`, `1.4142135623730951`},
		{`(sqrt -1)`, `NaN`},
		{`(ceil 7.2)`, `8`},
		{`(subtype-of (ceil 7.2))`, `"double"`},
		{`(ceil 7)`, `7`},
		{`(floor 7.8)`, `7`},
		{`(floor -7.2)`, `-8`},
		{`(round 7.5)`, `8`},
		{`(round -7.5)`, `-7`},
		{`(round 7.4)`, `7`},
		{`(round 0.49999999999999994)`, `0`},
		{`(subtype-of (round 5.9))`, `"integer"`},
		{`(round (/ 0 0.0))`, `0`},
		{`(round 1e300)`, `9223372036854775807`},
		{`(pow 2 8)`, `256`},
		{`(subtype-of (pow 2 8))`, `"double"`},
		{`(pow 2 -1)`, `0.5`},
		{`(logn 1)`, `0`},
		{`(log10 1000)`, `3`},
	})
	checkErrors(t, []errorTest{
		{`(sin "a")`, "InvalidArgument", `sin: argument 1 is the string "a", want a number`, 1},
		{`(sin)`, "InvalidArgument", "sin: want 1 argument, got 0", 1},
		{`(pow 2)`, "InvalidArgument", "pow: want 2 arguments, got 1", 1},
		{`(round null)`, "InvalidArgument", "round: argument 1 is null, want a number", 1},
	})
}

func TestAddSkipsNullAndNotEqual(t *testing.T) {
	checkValues(t, []valueTest{
		{`(+ 4 null)`, `4`},
		{`(+ null)`, `0`},
		{`(set f (function (x y "m") (+ x y m))) (f 4)`, `4`},
		{`(!= 1 3 5)`, `true`},
		{`(!= 1 1 1)`, `false`},
		{`(!= 1 1 2)`, `true`},
		{`(!= (1 "a" => 2) (1 2))`, `false`},
	})
	checkErrors(t, []errorTest{
		{`(+ 1 "a")`, "InvalidArgument", `+: argument 2 is the string "a", want a number`, 1},
		{`(!= 1)`, "InvalidArgument", "!=: want at least 2 arguments, got 1", 1},
	})
}
