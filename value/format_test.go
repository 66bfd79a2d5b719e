package value

import (
	"context"
	"math"
	"strconv"
	"testing"
)

// srcFunc is a function value that prints its own source, as a runtime's
// user functions do.
type srcFunc struct{ src string }

func (f srcFunc) Call(context.Context, *List) (any, error) { return nil, nil }
func (f srcFunc) String() string                           { return f.src }

// bareFunc is a function value with no String method.
type bareFunc struct{}

func (bareFunc) Call(context.Context, *List) (any, error) { return nil, nil }

func TestFormat(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{true, "true"},
		{false, "false"},
		// integers
		{int64(0), "0"},
		{int64(42), "42"},
		{int64(-7), "-7"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{int64(math.MinInt64), "-9223372036854775808"},
		// floats: integral values lose ".0", the rest as Java's
		// Double.toString, switching to E notation below 1e-3 and from 1e7.
		{3.0, "3"},
		{-3.0, "-3"},
		{0.0, "0"},
		{math.Copysign(0, -1), "-0.0"},
		{2.5, "2.5"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{1.0 / 3, "0.3333333333333333"},
		{123456.789, "123456.789"},
		{1e-3, "0.001"},
		{-1e-3, "-0.001"},
		{9.999e-4, "9.999E-4"},
		{1e-5, "1.0E-5"},
		{-1e-5, "-1.0E-5"},
		{1.2345e-5, "1.2345E-5"},
		{9999999.0, "9999999"},
		{9999999.5, "9999999.5"},
		{1e7, "1.0E7"},
		{-1e7, "-1.0E7"},
		{1.2345e7, "1.2345E7"},
		{3e9, "3.0E9"},
		{1e21, "1.0E21"},
		{1e100, "1.0E100"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.SmallestNonzeroFloat64, "4.9E-324"},
		{2 * math.SmallestNonzeroFloat64, "9.9E-324"},
		{1.5e-323, "1.5E-323"},
		{float64(1 << 63), "9.223372036854776E18"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		// strings: only \n \r \t \\ \" are escaped
		{"", `""`},
		{"a b", `"a b"`},
		{"a\nb\rc\td\\e\"f", `"a\nb\rc\td\\e\"f"`},
		{"\b\f'é\x00\xff", "\"\b\f'é\x00\xff\""},
		{[]byte("x\n"), `"x\n"`},
		{Reference("kafka-send"), "kafka-send"},
		{Reference("a/b/0"), "a/b/0"},
		// lists: one space between elements, names always quoted
		{&List{}, "()"},
		{(*List)(nil), "()"},
		{NewList(int64(1), 2.5, "x", nil, true), `(1 2.5 "x" null true)`},
		{NewList(NewList(), NewList(NewList(int64(1)))), "(() ((1)))"},
		{named("a", int64(1), "b", NewList("t")), `("a" => 1 "b" => ("t"))`},
		{named("1", Reference("x")), `("1" => x)`},
		{named("a\"b\n", 3.0), `("a\"b\n" => 3)`},
		{named("", Reference("f"), "k", int64(1), "k", int64(2)), `(f "k" => 1 "k" => 2)`},
		// Go inputs print as their BPL conversion
		{5, "5"},
		{int32(-5), "-5"},
		{float32(2.5), "2.5"},
		{[]string{"a", "b"}, `("a" "b")`},
		{[]any{1, "x", []any{}}, `(1 "x" ())`},
		{map[string]any{"b": 2, "a": 1}, `("a" => 1 "b" => 2)`},
		// function values print their source, or their Go text
		{srcFunc{"(function (x) x)"}, "(function (x) x)"},
		{NewList(srcFunc{"(function () 1)"}), "((function () 1))"},
		{bareFunc{}, `"{}"`},
		{struct{ X int }{1}, `"{1}"`},
		{uint64(math.MaxUint64), `"18446744073709551615"`},
	}
	for _, tt := range tests {
		if got := Format(tt.v); got != tt.want {
			t.Errorf("Format(%#v) = %s, want %s", tt.v, got, tt.want)
		}
	}
}

func TestListString(t *testing.T) {
	l := named("topic", "t", "", int64(1))
	if got, want := l.String(), `("topic" => "t" 1)`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

// TestFormatParse checks that what Format prints, Parse reads back as the
// same value (an integral float reading back as the integer).
func TestFormatParse(t *testing.T) {
	values := []any{
		nil, true, int64(-3), 2.5, 1e-5, 3e9, math.Inf(-1), math.Copysign(0, -1),
		"a\n\"b\"\\", Reference("x"),
		named("a", int64(1), "", NewList("x", 0.25), "k\t", nil),
	}
	for _, v := range values {
		vs, err := Parse(Format(v))
		if err != nil || len(vs) != 1 {
			t.Errorf("Parse(Format(%#v)) = %v, %v", v, vs, err)
			continue
		}
		if l, ok := v.(*List); ok {
			if !l.Equal(vs[0].(*List)) {
				t.Errorf("Parse(Format(%s)) = %s", l, Format(vs[0]))
			}
			continue
		}
		if !equalValues(v, vs[0], nil) {
			t.Errorf("Parse(Format(%#v)) = %#v", v, vs[0])
		}
	}
	vs, err := Parse(Format(3.0))
	if err != nil || vs[0] != int64(3) {
		t.Errorf("Parse(Format(3.0)) = %#v, %v; want int64 3", vs, err)
	}
}

// FuzzFormatFloat checks that every float prints as text that reads back
// as the same number.
func FuzzFormatFloat(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 2.5, 1e-3, 9.99e-4, 1e7, 1e7 - 1, 3e9, 1e-5, 1 << 53, 1 << 63, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		text := Format(x)
		vs, err := Parse(text)
		if err != nil || len(vs) != 1 {
			t.Fatalf("Format(%v) = %q does not parse: %v", x, text, err)
		}
		var got float64
		switch v := vs[0].(type) {
		case float64:
			got = v
		case int64:
			got = float64(v)
			if float64(v) != x {
				t.Fatalf("Format(%v) = %q reads back as %d", x, text, v)
			}
		default:
			t.Fatalf("Format(%v) = %q reads back as %#v", x, text, vs[0])
		}
		if math.Float64bits(got) != math.Float64bits(x) && !(math.IsNaN(x) && math.IsNaN(got)) {
			t.Fatalf("Format(%v) = %q reads back as %v", x, text, got)
		}
		if Format(vs[0]) != text {
			t.Fatalf("Format(%v) = %q is not stable", x, text)
		}
		// The digits are the shortest that read back, as Java prints them.
		if s := strconv.FormatFloat(x, 'g', -1, 64); len(text) > len(s)+4 {
			t.Fatalf("Format(%v) = %q is longer than needed (%s)", x, text, s)
		}
	})
}
