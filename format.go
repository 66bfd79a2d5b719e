package kafkabpl

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Format returns v in canonical BPL text, as brain4it prints it: list
// elements separated by one space inside parentheses, a named element as
// "name" => value with the name always quoted, strings quoted with \n \r \t
// \\ and \" escaped, integers in decimal, and floats as Java's
// Double.toString writes them except that an integral value loses its ".0"
// (3.0 prints as 3, 2.5 as 2.5, 1e-5 as 1.0E-5, 3e9 as 3.0E9).
//
// A []byte prints as a string of its bytes, nil as null. Go inputs that are
// not BPL values (int, []string, map[string]any, ...) print as their BPL
// conversion; anything else prints as a string of its fmt.Sprint text.
// [Parse] reads the result back: Format(Parse(s)) is stable.
func Format(v any) string {
	var b strings.Builder
	appendValue(&b, v)
	return b.String()
}

func appendValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		b.WriteString(formatFloat(v))
	case string:
		appendQuoted(b, v)
	case []byte:
		appendQuoted(b, string(v))
	case Reference:
		b.WriteString(string(v))
	case *List:
		b.WriteByte('(')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(' ')
			}
			if name := v.Name(i); name != "" {
				appendQuoted(b, name)
				b.WriteString(" => ")
			}
			appendValue(b, v.At(i))
		}
		b.WriteByte(')')
	case fmt.Stringer: // a runtime's function prints its own source
		b.WriteString(v.String())
	case Callable: // toValue passes it through: converting again would loop
		appendQuoted(b, fmt.Sprint(v))
	default:
		if bv, err := toValue(v); err == nil {
			appendValue(b, bv)
		} else {
			appendQuoted(b, fmt.Sprint(v))
		}
	}
}

// appendQuoted writes s as a BPL string literal. Only the characters the
// reader cannot take raw, and the two that would end the literal, are
// escaped.
func appendQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '\n':
			esc = `\n`
		case '\r':
			esc = `\r`
		case '\t':
			esc = `\t`
		case '\\':
			esc = `\\`
		case '"':
			esc = `\"`
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(esc)
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// formatFloat writes f as Java's Double.toString does, then drops a
// trailing ".0" as brain4it does. Negative zero keeps "-0.0": "-0" would
// read back as the integer 0.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0 && math.Signbit(f):
		return "-0.0"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		return s // an integral value has no ".0" to drop
	}
	// Java's computerized scientific notation: d.dddE[-]n, with at least
	// one digit after the point.
	s := strconv.FormatFloat(f, 'e', -1, 64) // like -1.2345e+07
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		// With one digit Java picks the two-digit decimal closest to f
		// that still reads back as f: 4.9E-324, not 5.0E-324. Only tiny
		// subnormals have one.
		mant += ".0"
		c := strconv.FormatFloat(f, 'e', 1, 64)
		if g, err := strconv.ParseFloat(c, 64); err == nil && g == f {
			mant, exp, _ = strings.Cut(c, "e")
		}
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}
