package bpl

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/internal/box"
	"github.com/brain4it/kafkabpl/value"
)

// The base family, continued: the conversions string and number, with
// brain4it's named arguments.

// optArgs evaluates the arguments of call: the unnamed ones, of which
// there must be min to max, and the named ones, each of which must be one
// of names (a name given twice keeps its first value).
func (t *task) optArgs(f *frame, call *value.List, min, max int, names ...string) ([]any, map[string]any, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, nil, err
	}
	var pos []any
	opts := map[string]any{}
	for name, v := range args.All() {
		switch {
		case name == "":
			pos = append(pos, v)
		case !containsString(names, name):
			return nil, nil, t.errorf(f, "InvalidArgument", "%s: unknown argument %s (want one of %s)", fname(call), strconv.Quote(name), strings.Join(names, ", "))
		default:
			if _, dup := opts[name]; !dup {
				opts[name] = v
			}
		}
	}
	if len(pos) < min || len(pos) > max {
		want := plural(min, "argument")
		if min != max {
			want = strconv.Itoa(min) + " to " + plural(max, "argument")
		}
		return nil, nil, t.errorf(f, "InvalidArgument", "%s: want %s besides the named ones, got %d", fname(call), want, len(pos))
	}
	return pos, opts, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// optString reads a named argument that must be a string when given
// (null is as absent).
func (t *task) optString(f *frame, fn string, opts map[string]any, name string) (string, bool, error) {
	v := opts[name]
	if v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, t.errorf(f, "InvalidArgument", "%s: %s is %s, want a string", fn, name, value.Describe(v))
	}
	return s, true, nil
}

// optRadix reads the named argument radix: 10 by default, else 2 to 36.
func (t *task) optRadix(f *frame, fn string, opts map[string]any) (int, error) {
	v := opts["radix"]
	if v == nil {
		return 10, nil
	}
	r, ok := v.(int64)
	if !ok || r < 2 || r > 36 {
		return 0, t.errorf(f, "InvalidArgument", "%s: radix is %s, want an integer from 2 to 36", fn, value.Describe(v))
	}
	return int(r), nil
}

// (string x) gives x as text: a string as it is, a byte array as its
// bytes, anything else in BPL text (null as "null"). brain4it's named
// arguments choose other texts:
//
//   - of a number, "radix" => r writes it in base r (2 to 36): (string 23
//     radix => 16) is "17" (a float that is not whole is written as
//     usual), and "unsigned" => true writes a negative integer as the
//     unsigned 64-bit number of its bits (brain4it ignores it);
//     "pattern" => p writes it as Java's DecimalFormat pattern p does, with
//     the separators of "locale" => language: (string 5.3429 pattern =>
//     "0.00" locale => "es") is "5,34" (see decimalFormat for the patterns
//     and languages supported); "pattern" => "unicode" gives the character
//     of that code point: (string 225 pattern => "unicode") is "á";
//   - of a string, "escape" => true gives it quoted and escaped as BPL
//     writes it: "\"Hello\"";
//   - of a list, "format" => "json" gives it in JSON: a list all of whose
//     elements are named as an object, any other as an array; references,
//     functions and byte arrays as null. NaN and infinite numbers, which
//     JSON cannot hold, and a list that contains itself are an
//     InvalidArgument (brain4it writes text no JSON reader reads). "xml"
//     is not supported; "bpl" is the default.
func biString(t *task, f *frame, call *value.List) (any, error) {
	pos, opts, err := t.optArgs(f, call, 1, 1, "radix", "unsigned", "pattern", "locale", "escape", "format")
	if err != nil {
		return nil, err
	}
	return t.stringOf(f, pos[0], opts)
}

// stringOf is (string x) of the evaluated x, with the named arguments
// opts (nil for none).
func (t *task) stringOf(f *frame, x any, opts map[string]any) (any, error) {
	switch v := x.(type) {
	case int64, float64:
		return t.numberText(f, v, opts)
	case string:
		if truthy(opts["escape"]) {
			return value.Format(v), nil
		}
		return v, nil
	case *value.List:
		format, _, err := t.optString(f, "string", opts, "format")
		if err != nil {
			return nil, err
		}
		switch format {
		case "json":
			return t.jsonText(f, v)
		case "", "bpl":
		default:
			return nil, t.errorf(f, "InvalidArgument", "string: format %s is not supported (want \"bpl\" or \"json\")", strconv.Quote(format))
		}
	}
	return t.text(f, "string", x)
}

// numberText is string of a number.
func (t *task) numberText(f *frame, v any, opts map[string]any) (any, error) {
	pattern, hasPattern, err := t.optString(f, "string", opts, "pattern")
	if err != nil {
		return nil, err
	}
	switch {
	case hasPattern && pattern == "unicode":
		c := javaLong(v)
		if c < 0 || c > utf8.MaxRune || !utf8.ValidRune(rune(c)) {
			return nil, t.errorf(f, "InvalidArgument", "string: %s is no Unicode code point", value.Describe(v))
		}
		return string(rune(c)), nil
	case hasPattern:
		lang, _, err := t.optString(f, "string", opts, "locale")
		if err != nil {
			return nil, err
		}
		x, _ := toFloat(v)
		s, err := decimalFormat(pattern, lang, x)
		if err != nil {
			return nil, t.errorf(f, "InvalidArgument", "string: %v", err)
		}
		return s, nil
	}
	radix, err := t.optRadix(f, "string", opts)
	if err != nil {
		return nil, err
	}
	if x, ok := v.(float64); ok {
		if x != math.Trunc(x) || math.Abs(x) >= 1<<63 {
			return toText(x), nil
		}
		v = int64(x)
	}
	i := v.(int64)
	var buf [65]byte // the longest: a sign and 64 binary digits
	if i < 0 && truthy(opts["unsigned"]) {
		return box.Text(strconv.AppendUint(buf[:0], uint64(i), radix)), nil
	}
	return box.Text(strconv.AppendInt(buf[:0], i, radix)), nil // one allocation: a script's keys are often numbers' text
}

// (number x) gives the number x's text denotes, read as BPL reads numbers
// ("12" 12, "2.5" 2.5, "0x1F" 31); a number is itself and null stays null.
// brain4it's named arguments: "radix" => r reads an integer in base r (2
// to 36): (number "1110" radix => 2) is 14; "pattern" => p reads it as
// Java's DecimalFormat pattern p does, with the separators of "locale" =>
// language ((number "45,6" pattern => "0.0" locale => "es") is 45.6:
// grouping separators are skipped, and text after the number is
// ignored); "type" => "integer", "long" or "double" converts the number
// as Java's intValue, longValue and doubleValue do: (number 7.4 type =>
// "integer") is 7 ("integer" truncates into 32 bits, as Java's does). Text
// that is no number, or another type, is an InvalidArgument.
func biNumber(t *task, f *frame, call *value.List) (any, error) {
	pos, opts, err := t.optArgs(f, call, 1, 1, "radix", "pattern", "locale", "type")
	if err != nil {
		return nil, err
	}
	var n any
	switch x := pos[0].(type) {
	case nil:
		return nil, nil
	case int64, float64:
		n = x
	case string:
		if n, err = t.readNumber(f, x, opts); err != nil {
			return nil, err
		}
	case []byte:
		if n, err = t.readNumber(f, string(x), opts); err != nil {
			return nil, err
		}
	default:
		return nil, t.errorf(f, "InvalidArgument", "number: want a string, got %s", value.Describe(pos[0]))
	}
	typ, _, err := t.optString(f, "number", opts, "type")
	if err != nil {
		return nil, err
	}
	switch strings.ToLower(typ) {
	case "":
		return n, nil
	case "integer":
		return int64(javaInt(n)), nil
	case "long":
		return javaLong(n), nil
	case "double":
		x, _ := toFloat(n)
		return x, nil
	}
	return nil, t.errorf(f, "InvalidArgument", "number: type %s is not one of \"integer\", \"long\", \"double\"", strconv.Quote(typ))
}

// javaInt converts a number to a 32-bit integer as Java's intValue does:
// a float truncated and held within the int range, an integer wrapped.
func javaInt(v any) int32 {
	if x, ok := v.(float64); ok {
		switch {
		case x != x:
			return 0
		case x >= math.MaxInt32:
			return math.MaxInt32
		case x <= math.MinInt32:
			return math.MinInt32
		}
		return int32(x)
	}
	return int32(javaLong(v))
}

// readNumber is number of a text.
func (t *task) readNumber(f *frame, s string, opts map[string]any) (any, error) {
	if opts["radix"] != nil {
		radix, err := t.optRadix(f, "number", opts)
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(s, radix, 64)
		if err != nil {
			return nil, t.errorf(f, "InvalidArgument", "number: %s is not an integer in base %d", value.Describe(s), radix)
		}
		return n, nil
	}
	if pattern, ok, err := t.optString(f, "number", opts, "pattern"); err != nil {
		return nil, err
	} else if ok {
		lang, _, err := t.optString(f, "number", opts, "locale")
		if err != nil {
			return nil, err
		}
		n, err := decimalParse(pattern, lang, s)
		if err != nil {
			return nil, t.errorf(f, "InvalidArgument", "number: %v", err)
		}
		return n, nil
	}
	if vs, err := value.Parse(s); err == nil && len(vs) == 1 {
		switch n := vs[0].(type) {
		case int64, float64:
			return n, nil
		}
	}
	return nil, t.errorf(f, "InvalidArgument", "number: %s is not a number", value.Describe(s))
}
