package value

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Format returns v in canonical BPL text, as brain4it prints it: list
// elements separated by one space inside parentheses, a named element as
// "name" => value with the name always quoted, strings quoted with \n \r \t
// \\ and \" escaped, integers in decimal, and floats as Java's
// Double.toString writes them except that an integral value loses its ".0"
// (3.0 prints as 3, 2.5 as 2.5, 1e-5 as 1.0E-5, 3e9 as 3.0E9).
//
// A list that appears more than once in v, or in itself, is written as
// brain4it writes it: where it first appears with a declaration tag,
// (<#1> 1 2), and as a link, <@1>, everywhere else; [Parse] reads the
// tags back to the one list. A []byte prints as a string of its bytes, nil
// as null. Go inputs that are not BPL values (int, []string,
// map[string]any, ...) print as their [FromGo] conversion; anything else
// prints as its String method's text, or as a string of its fmt.Sprint
// text. Format(Parse(s)) is stable.
func Format(v any) string {
	p := printer{}
	p.value(v)
	return p.b.String()
}

// formatShort is Format cut short: the text and true when it has at most
// limit bytes, else false, having written little more than limit.
func formatShort(v any, limit int) (string, bool) {
	p := printer{limit: limit}
	p.value(v)
	return p.b.String(), p.b.Len() <= limit
}

// printer writes BPL text. refs counts, for the lists of a value in which
// some list appears more than once, the places each appears; ids holds the
// tag ids of those written so far.
type printer struct {
	b       strings.Builder
	limit   int  // stop once the text is longer; 0 for none
	counted bool // refs is set: the top list was looked at
	refs    map[*List]int
	ids     map[*List]int
	next    int
}

func (p *printer) value(v any) {
	b := &p.b
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
		if !p.counted {
			p.counted = true
			if p.refs = sharedLists(v); p.refs != nil {
				p.ids = map[*List]int{}
			}
		}
		p.list(v)
	case fmt.Stringer: // a runtime's function prints its own source
		b.WriteString(v.String())
	case Callable: // FromGo passes it through: converting again would loop
		appendQuoted(b, fmt.Sprint(v))
	default:
		if bv, err := FromGo(v); err == nil {
			p.value(bv)
		} else {
			appendQuoted(b, fmt.Sprint(v))
		}
	}
}

func (p *printer) list(l *List) {
	b := &p.b
	if p.refs[l] > 1 {
		if id, seen := p.ids[l]; seen {
			b.WriteString("<@" + strconv.Itoa(id) + ">")
			return
		}
		p.next++
		p.ids[l] = p.next
		b.WriteString("(<#" + strconv.Itoa(p.next) + ">")
		if l.Len() > 0 {
			b.WriteByte(' ')
		}
	} else {
		b.WriteByte('(')
	}
	for i := range l.Len() {
		if p.limit > 0 && b.Len() > p.limit {
			return
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if name := l.Name(i); name != "" {
			appendQuoted(b, name)
			b.WriteString(" => ")
		}
		p.value(l.At(i))
	}
	b.WriteByte(')')
}

// sharedLists returns, when some list appears more than once in l or in
// itself, the number of places each list of l appears; nil when none does,
// as in nearly every list. A list that holds no list costs nothing, and,
// until some list may contain itself (see MayCycle), others cost a walk
// that allocates nothing, unless they hold
// enough lists (tens) for the walk's filter to mistake one for another;
// then a map of them all decides.
func sharedLists(l *List) map[*List]int {
	if !slices.ContainsFunc(l.Values(), isList) {
		return nil
	}
	if !mayCycle.Load() {
		var seen addressFilter
		if !seen.mayRepeat(l) {
			return nil
		}
	}
	refs := map[*List]int{l: 1}
	stack := []*List{l}
	repeated := false
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range l.values {
			if sub, ok := e.(*List); ok {
				refs[sub]++
				if refs[sub] == 1 {
					stack = append(stack, sub)
				} else {
					repeated = true
				}
			}
		}
	}
	if !repeated {
		return nil
	}
	return refs
}

func isList(v any) bool { _, ok := v.(*List); return ok }

// addressFilter holds lists by a hash of their addresses (Go's heap does
// not move), 4096 bits: it may say a list is in it when it is not, never
// the reverse. It is sharedLists' first look, which allocates nothing.
type addressFilter [64]uint64

// mayRepeat reports whether a list below l may appear twice. l must not
// contain itself.
func (f *addressFilter) mayRepeat(l *List) bool {
	for _, e := range l.values {
		if sub, ok := e.(*List); ok {
			h := uint64(uintptr(unsafe.Pointer(sub))) * 0x9E3779B97F4A7C15 >> 52 // 12 bits
			if f[h/64]&(1<<(h%64)) != 0 {
				return true
			}
			f[h/64] |= 1 << (h % 64)
			if f.mayRepeat(sub) {
				return true
			}
		}
	}
	return false
}

// Cyclic reports whether v is a list that contains itself at some depth,
// which only a text read with brain4it's tags or a runtime that marks the
// list ([List.MarkShared]) makes. Code that would follow lists without end
// (an encoder) checks it first, when [MayCycle].
func Cyclic(v any) bool {
	l, ok := v.(*List)
	return ok && cyclic(l, map[*List]int{})
}

// cyclic is Cyclic; state is 1 for the lists being walked, 2 for those
// done.
func cyclic(l *List, state map[*List]int) bool {
	state[l] = 1
	for _, e := range l.values {
		if sub, ok := e.(*List); ok {
			switch state[sub] {
			case 1:
				return true
			case 0:
				if cyclic(sub, state) {
					return true
				}
			}
		}
	}
	state[l] = 2
	return false
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
