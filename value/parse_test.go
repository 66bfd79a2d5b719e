package value

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpList compares lists by names and values, as List.Equal does.
var cmpList = cmp.Options{
	cmp.Comparer(func(a, b *List) bool { return a.Equal(b) }),
	cmpopts.EquateNaNs(),
}

// named builds a list from name, value pairs; an empty name is unnamed.
func named(kv ...any) *List {
	l := &List{}
	for i := 0; i < len(kv); i += 2 {
		l.AppendNamed(kv[i].(string), kv[i+1])
	}
	return l
}

func TestParseValues(t *testing.T) {
	tests := []struct {
		src  string
		want []any
	}{
		{"", []any{}},
		{" \n\t\r\f\x00 ", []any{}},
		// integers
		{"1", []any{int64(1)}},
		{"0", []any{int64(0)}},
		{"-5", []any{int64(-5)}},
		{"+5", []any{int64(5)}},
		{"-0", []any{int64(0)}},
		{"007", []any{int64(7)}},
		{"9223372036854775807", []any{int64(math.MaxInt64)}},
		{"-9223372036854775808", []any{int64(math.MinInt64)}},
		{"9223372036854775808", []any{float64(1 << 63)}},
		{"-9223372036854775809", []any{-float64(1 << 63)}},
		{"0x1F", []any{int64(31)}},
		{"0X1f", []any{int64(31)}},
		{"-0x10", []any{int64(-16)}},
		{"+0x10", []any{int64(16)}},
		{"0x7fffffffffffffff", []any{int64(math.MaxInt64)}},
		{"-0x8000000000000000", []any{int64(math.MinInt64)}},
		{"0b101", []any{int64(5)}},
		{"0B11", []any{int64(3)}},
		{"-0b1", []any{int64(-1)}},
		// floats
		{"2.5", []any{2.5}},
		{"-2.5", []any{-2.5}},
		{".5", []any{0.5}},
		{"-.5", []any{-0.5}},
		{"+.5", []any{0.5}},
		{"1.", []any{1.0}},
		{"3.0", []any{3.0}},
		{"1e3", []any{1000.0}},
		{"1E-5", []any{1e-5}},
		{"1.5e+2", []any{150.0}},
		{"1.0E7", []any{1e7}},
		{"1e400", []any{math.Inf(1)}},
		{"-1e400", []any{math.Inf(-1)}},
		{"1e-400", []any{0.0}},
		{"NaN", []any{math.NaN()}},
		{"Infinity", []any{math.Inf(1)}},
		{"-Infinity", []any{math.Inf(-1)}},
		// keywords
		{"true false null", []any{true, false, nil}},
		// references
		{"x", []any{Reference("x")}},
		{"kafka-send", []any{Reference("kafka-send")}},
		{"+ - * / = != <= ###", []any{Reference("+"), Reference("-"), Reference("*"), Reference("/"), Reference("="), Reference("!="), Reference("<="), Reference("###")}},
		{"a/b/0", []any{Reference("a/b/0")}},
		// quoted path parts keep their raw text, escapes included
		{`/"Hello friend"/"John Connor"`, []any{Reference(`/"Hello friend"/"John Connor"`)}},
		{`rooms/"hall (north)"/3/"a\"b"`, []any{Reference(`rooms/"hall (north)"/3/"a\"b"`)}},
		{`(get x/"a/b")`, []any{NewList(Reference("get"), Reference(`x/"a/b"`))}},
		{`x/"5a" y`, []any{Reference(`x/"5a"`), Reference("y")}},
		{"a=>1", []any{Reference("a=>1")}},
		{"== =< =", []any{Reference("=="), Reference("=<"), Reference("=")}},
		{"--1 -. . +Infinity ..5 nan True NULL", []any{Reference("--1"), Reference("-."), Reference("."), Reference("+Infinity"), Reference("..5"), Reference("nan"), Reference("True"), Reference("NULL")}},
		{"é\xff", []any{Reference("é\xff")}},
		// strings
		{`"a b"`, []any{"a b"}},
		{`""`, []any{""}},
		{`"\n\r\t\b\f\\\'\""`, []any{"\n\r\t\b\f\\'\""}},
		{`"\u0041\u00e9\u20AC"`, []any{"Aé€"}},
		{`"\ud83d\ude00"`, []any{"😀"}},
		{`"\ud83d"`, []any{"\uFFFD"}},
		{`"\ud83dx"`, []any{"\uFFFDx"}},
		{`"\ude00\ud83d"`, []any{"\uFFFD\uFFFD"}},
		{`"\ud83d\u0041"`, []any{"\uFFFDA"}},
		{"\"a\tb\rc\x00\xffé\"", []any{"a\tb\rc\x00\xffé"}},
		{`"(a) => ;"`, []any{"(a) => ;"}},
		// several expressions, and tokens that need no space between them
		{`1 "a" (b)`, []any{int64(1), "a", NewList(Reference("b"))}},
		{`"a""b"`, []any{"a", "b"}},
		{`"a"b`, []any{"a", Reference("b")}},
		{`(a)(b)`, []any{NewList(Reference("a")), NewList(Reference("b"))}},
		{`(a(b)c)`, []any{NewList(Reference("a"), NewList(Reference("b")), Reference("c"))}},
		// lists and names
		{"()", []any{&List{}}},
		{"(1 2.5 \"x\" null)", []any{NewList(int64(1), 2.5, "x", nil)}},
		{"((()))", []any{NewList(NewList(&List{}))}},
		{`("a" => 1 "b" => (2 3))`, []any{named("a", int64(1), "b", NewList(int64(2), int64(3)))}},
		{`(a => 1)`, []any{named("a", int64(1))}},
		{`(1 => x)`, []any{named("1", Reference("x"))}},
		{`(1.50 => x null => 2 true => 3 0x1F => 4)`, []any{named("1.50", Reference("x"), "null", int64(2), "true", int64(3), "0x1F", int64(4))}},
		{`("a\nb" => 1)`, []any{named("a\nb", int64(1))}},
		{`("" => 1)`, []any{NewList(int64(1))}},
		{`("a"=>1)`, []any{named("a", int64(1))}},
		{`(a=>1)`, []any{NewList(Reference("a=>1"))}},
		{`(a =>b)`, []any{named("a", Reference("b"))}},
		{`(a =>>)`, []any{named("a", Reference(">"))}},
		{"(a\n=>\n1)", []any{named("a", int64(1))}},
		{`(x "k" => 1 "k" => 2 y)`, []any{named("", Reference("x"), "k", int64(1), "k", int64(2), "", Reference("y"))}},
		{`(f "partitions" => 3 ("t"))`, []any{named("", Reference("f"), "partitions", int64(3), "", NewList("t"))}},
		{`("l" => (1) "m" => ("n" => null))`, []any{named("l", NewList(int64(1)), "m", named("n", nil))}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmpList); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.src, diff)
		}
	}
}

func TestParseNegativeZero(t *testing.T) {
	vs, err := Parse("-0.0 0.0 -0")
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := vs[0].(float64); !ok || f != 0 || !math.Signbit(f) {
		t.Errorf("-0.0 = %#v, want negative zero", vs[0])
	}
	if f, ok := vs[1].(float64); !ok || math.Signbit(f) {
		t.Errorf("0.0 = %#v, want positive zero", vs[1])
	}
	if vs[2] != int64(0) {
		t.Errorf("-0 = %#v, want int64 0", vs[2])
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src       string
		line, col int
		msg       string
	}{
		{")", 1, 1, "unexpected )"},
		{"(a))", 1, 4, "unexpected )"},
		{"\n\n  )", 3, 3, "unexpected )"},
		{"(1 2", 1, 1, "list not closed"},
		{"((1)\n", 1, 1, "list not closed"},
		{"(1\n (2", 2, 2, "list not closed"},
		{`"abc`, 1, 1, "unterminated string"},
		{`x "abc\`, 1, 3, "unterminated string"},
		{`"abc\"`, 1, 1, "unterminated string"},
		{"\"ab\ncd\"", 1, 4, "newline in string"},
		{"\"ab\\\ncd\"", 1, 5, "newline in string"},
		{`"\q"`, 1, 2, `invalid escape \q`},
		{`"ab\é"`, 1, 4, `invalid escape \é`},
		{`"\u12"`, 1, 2, `\u must be followed by 4 hex digits`},
		{`"\u12g4"`, 1, 2, `\u must be followed by 4 hex digits`},
		{`"\u+123"`, 1, 2, `\u must be followed by 4 hex digits`},
		{`"\u_123"`, 1, 2, `\u must be followed by 4 hex digits`},
		{"x => 1", 1, 3, "=> outside a list"},
		{"=>", 1, 1, "=> outside a list"},
		{`"a" => 1`, 1, 5, "=> outside a list"},
		{"( => 1)", 1, 3, "=> must follow a name"},
		{"(a => b => c)", 1, 9, "=> must follow a name"},
		{"((a) => 1)", 1, 6, "a list cannot be a name"},
		{"(a =>)", 1, 4, "=> must be followed by a value"},
		{"(a => => b)", 1, 4, "=> must be followed by a value"},
		{"(a =>", 1, 4, "=> must be followed by a value"},
		{"(a => \"x)", 1, 7, "unterminated string"},
		{"1a", 1, 1, "invalid number 1a"},
		{"(x 1-2)", 1, 4, "invalid number 1-2"},
		{"1.2.3", 1, 1, "invalid number"},
		{"1e", 1, 1, "invalid number"},
		{"1e+", 1, 1, "invalid number"},
		{".5e", 1, 1, "invalid number"},
		{"1_000", 1, 1, "invalid number"},
		{"0x", 1, 1, "invalid hex number 0x"},
		{"0xg", 1, 1, "invalid hex number"},
		{"0x1.5", 1, 1, "invalid hex number"},
		{"0b2", 1, 1, "invalid binary number"},
		{"0x8000000000000000", 1, 1, "does not fit in 64 bits"},
		{"-0x8000000000000001", 1, 1, "does not fit in 64 bits"},
		{"0x10000000000000000", 1, 1, "does not fit in 64 bits"},
		{"0b" + strings.Repeat("1", 64), 1, 1, "does not fit in 64 bits"},
		{`a"b"`, 1, 2, `" inside a token`},
		{`a/b"c"`, 1, 4, `" inside a token`},
		{`a/"5"`, 1, 3, `the path part "5" is quoted digits: write an index without quotes`},
		{`a/""`, 1, 3, `the empty path part "" names no element`},
		{`a/"x"y`, 1, 6, "a quoted path part must end the token or be followed by /"},
		{`a/"x"=>1`, 1, 6, "a quoted path part must end the token"},
		{`a/"x`, 1, 3, "unterminated string"},
		{`a/"x\q"`, 1, 5, `invalid escape \q`},
		{"a/\"x\ny\"", 1, 5, "newline in string"},
		{`"é" ù )`, 1, 7, "unexpected )"},
		{"\xff\xfe )", 1, 4, "unexpected )"},
		{"(\n\t\"x\" =>\n)", 2, 6, "=> must be followed by a value"},
		{strings.Repeat("(", maxNesting+1), 1, maxNesting + 1, "nested more than 10000 deep"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) error = %v, want a *SyntaxError", tt.src, err)
			continue
		}
		if se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("Parse(%q) = %q, want line %d, column %d: %s", tt.src, err, tt.line, tt.col, tt.msg)
		}
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Parse(%q): errors.Is(ErrInvalidArgument) is false", tt.src)
		}
	}
}

func TestParseErrorText(t *testing.T) {
	_, err := Parse("(a\n  b\n  \"c)")
	if got, want := err.Error(), "line 3, column 3: unterminated string"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

func TestParseDeepNesting(t *testing.T) {
	src := strings.Repeat("(", maxNesting) + strings.Repeat(")", maxNesting)
	vs, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := Format(vs[0]); got != src {
		t.Errorf("Format of %d nested lists differs from its source", maxNesting)
	}
}

func TestParseLines(t *testing.T) {
	src := "(a\n (b)\n)\n\n(c (d\n e))  ()"
	// The lists are still being filled when line is called, so collect
	// them by pointer and name them by their text afterwards.
	byList := map[*List]int{}
	vs, err := ParseLines(src, func(l *List, line int) { byList[l] = line })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for l, line := range byList {
		got[Format(l)] = line
	}
	want := map[string]int{"(a (b))": 1, "(b)": 2, "(c (d e))": 5, "(d e)": 5, "()": 6}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines mismatch (-want +got):\n%s", diff)
	}
	if len(vs) != 3 || len(byList) != 5 {
		t.Errorf("got %d expressions and %d lists, want 3 and 5", len(vs), len(byList))
	}
}

// parseSeeds are inputs for FuzzParse: every syntax form, and the errors.
var parseSeeds = []string{
	"", "1", "-0", "-0.0", "0x1F", "-0b101", "2.5", "1.0E-5", "3.0E9", "1e400",
	"NaN", "Infinity", "-Infinity", "true false null", "x a/b/0 ### + a=>1",
	`"a\n\r\t\b\f\\\'\"\u00e9\ud83d\ude00"`, "\"raw\ttab\r\xff\"",
	`("a" => 1 b => (2 3) 1 => x "" => y)`, `(kafka-create-topics a ("t") "partitions" => 3)`,
	"(do\n  (set x 1)\n  (print x))", "(function (a b) (+ a b))",
	"(<#1> 1 <@1>)", `((<#1> 8 "n" => 1) (<#2:1> 9) <@2> <@1>)`, "(<@1>)", "<#1>",
	`(try (throw "E" "m") (ex "E" => (print ex) "*" => null))`,
	"9223372036854775808", "0x7fffffffffffffff", "(((((1)))))",
	")", "(", `"`, `"\u12"`, "x => 1", "(=> 1)", "(a => b => c)", "((a) => 1)", "(a =>)",
	"1a", `a"b"`, "\"a\nb\"", "(\"é\" => ù)",
	`/"Hello friend"/"John Connor"`, `x/"a b"/0/"c\"d"`, `a/"5"`, `a/"x"y`, `(a/"b c" => 1)`,
}

// FuzzParse checks that Parse never panics and that printing is stable:
// whatever parses prints as text that parses back to a value printing the
// same.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		lists := 0
		vs, err := ParseLines(src, func(*List, int) { lists++ })
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("Parse(%q) error %v is not a positioned SyntaxError", src, err)
			}
			return
		}
		for _, v := range vs {
			text := Format(v)
			again, err := Parse(text)
			if err != nil {
				t.Fatalf("Parse(%q) = %#v prints as %q, which does not parse: %v", src, v, text, err)
			}
			if len(again) != 1 {
				t.Fatalf("Parse(%q) = %#v prints as %q, which reads as %d values", src, v, text, len(again))
			}
			if text2 := Format(again[0]); text2 != text {
				t.Fatalf("Parse(%q): printing is not stable: %q, then %q", src, text, text2)
			}
		}
	})
}
