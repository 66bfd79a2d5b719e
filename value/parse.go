package value

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNesting bounds how deep lists may nest, so that neither the reader
// nor the printer and evaluators that recurse over what it read can run
// out of stack on hostile input.
const maxNesting = 10000

// SyntaxError is an error in BPL text: where it is (1-based line and
// column, the column counting characters) and what is wrong. It wraps
// [ErrInvalidArgument], so errors.Is classifies it with the other bad
// inputs.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

// Error returns the position and message, as in
// "line 3, column 7: unterminated string".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Unwrap returns ErrInvalidArgument.
func (e *SyntaxError) Unwrap() error { return ErrInvalidArgument }

// Parse reads every top-level expression of src, in order; text with none
// (empty or all white space) gives an empty slice. The values are nil
// (null), bool, int64, float64, string, *List and [Reference]. A failure is
// a *[SyntaxError].
//
// The syntax is brain4it's:
//   - ( and ) delimit a list; X => v inside a list names the element v with
//     X's text (a string's contents, or the raw text of any other token:
//     "a" => 1, a => 1 and 1.50 => x name 1 with "a", "a" and x with
//     "1.50"). "" => v is an unnamed v. A list cannot be a name, a named
//     element cannot be named again, and => outside a list is an error.
//     => is only recognised at the start of a token: a=>1 is one reference
//     and "a"=>1 is a named 1.
//   - "..." is a string, with the escapes \n \r \t \b \f \\ \' \" and
//     \uXXXX (4 hex digits; a surrogate pair makes one character, a lone
//     surrogate U+FFFD). A raw newline inside a string is an error; any
//     other byte, including invalid UTF-8, is kept as it is.
//   - A token that starts with a digit, or with +, - or . followed by a
//     digit (or +. or -. followed by a digit), is a number and an error if
//     it is not a valid one: decimal integers are int64, or float64 when
//     they do not fit; 0x (hex) and 0b (binary) integers, optionally
//     signed, are int64 and an error when they do not fit; a number with
//     ., e or E is a float64 (one too large for float64 is ±Infinity).
//     NaN, Infinity and -Infinity are floats too, and -0.0 is negative
//     zero.
//   - true, false and null; any other token is a Reference with the raw
//     text (x, kafka-send, +, ###, a/b/0). A part of a path (what follows
//     a /) may be a string literal, for a name with spaces, parentheses,
//     slashes or quotes: /"Hello friend"/"John Connor", persons/"J. Doe"/0;
//     it must not be empty or all digits (an index is written bare), and
//     it ends the token or is followed by another /.
//   - Bytes up to and including the space (' ', tab, newline, carriage
//     return and the other ASCII control characters) separate tokens, as in
//     brain4it; a token ends at one of them or at ( or ). A " inside a
//     token is an error, but for a quoted path part. There are no
//     comments: (### "text") is a call.
//   - Lists may nest at most 10000 deep.
//   - brain4it's tags for shared lists are read as brain4it reads them: a
//     list whose first element is a declaration tag, (<#1> 1 2), is that
//     list without the tag, and a link, <@1>, later in the same top-level
//     value is that same list. Such a list is [List.Tagged], and may
//     contain itself ((<#1> 1 <@1>)): check [Cyclic] before following one
//     without end. [Format] writes the tags back.
func Parse(src string) ([]any, error) { return ParseLines(src, nil) }

// ParseLines is [Parse] for evaluators that report source lines: it calls
// line, when not nil, for every list it reads (nested ones too) with the
// 1-based line of the list's opening parenthesis. The list is still being
// filled when line is called; keep the pointer, not its contents.
func ParseLines(src string, line func(l *List, line int)) ([]any, error) {
	if !strings.Contains(src, "<") {
		return parse(src, line)
	}
	// There may be tags: their errors name the line of their list.
	lines := map[*List]int{}
	vs, err := parse(src, func(l *List, n int) {
		lines[l] = n
		if line != nil {
			line(l, n)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := resolveTags(vs, func(l *List) int { return lines[l] }); err != nil {
		return nil, err
	}
	return vs, nil
}

// parse reads src's values, tags as references.
func parse(src string, line func(l *List, line int)) ([]any, error) {
	p := &parser{src: src, line: 1, onList: line}
	vs := []any{}
	for {
		tok, err := p.next()
		if err != nil {
			return nil, err
		}
		switch tok.kind {
		case tokEOF:
			return vs, nil
		case tokClose:
			return nil, p.errorAt(tok, "unexpected )")
		case tokArrow:
			return nil, p.errorAt(tok, "=> outside a list: only list elements have names")
		}
		v, err := p.value(tok, 0)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokOpen
	tokClose
	tokArrow
	tokString
	tokAtom // number, true, false, null or reference
)

// token is one lexical token and where it starts.
type token struct {
	kind      tokKind
	off       int    // byte offset of its first byte
	line      int    // its line
	lineStart int    // byte offset of the start of its line
	text      string // atom: raw text; string: the decoded contents
	val       any    // atom and string: the value
}

type parser struct {
	src       string
	off       int
	line      int
	lineStart int
	onList    func(*List, int)
}

// value reads the value that starts with tok (anything but ), => and end
// of input); depth is how many lists enclose it.
func (p *parser) value(tok token, depth int) (any, error) {
	if tok.kind != tokOpen {
		return tok.val, nil
	}
	if depth >= maxNesting {
		return nil, p.errorAt(tok, fmt.Sprintf("lists nested more than %d deep", maxNesting))
	}
	l := &List{}
	if p.onList != nil {
		p.onList(l, tok.line)
	}
	// The element before a => is its name, so each element waits in
	// pending until the next token shows whether it is one.
	var (
		pending  any
		pendTok  token // the token pending started with
		pendOK   bool  // pending holds an element
		flushPen = func() {
			if pendOK {
				l.Append(pending)
				pendOK = false
			}
		}
	)
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tokEOF:
			return nil, p.errorAt(tok, "list not closed: missing )")
		case tokClose:
			flushPen()
			return l, nil
		case tokArrow:
			if !pendOK {
				return nil, p.errorAt(t, "=> must follow a name")
			}
			if pendTok.kind == tokOpen {
				return nil, p.errorAt(t, "a list cannot be a name")
			}
			vt, err := p.next()
			if err != nil {
				return nil, err
			}
			if vt.kind == tokEOF || vt.kind == tokClose || vt.kind == tokArrow {
				return nil, p.errorAt(t, "=> must be followed by a value")
			}
			v, err := p.value(vt, depth+1)
			if err != nil {
				return nil, err
			}
			// A string names with its contents, any other token with its
			// raw text.
			l.AppendNamed(pendTok.text, v)
			pendOK = false
		default:
			flushPen()
			v, err := p.value(t, depth+1)
			if err != nil {
				return nil, err
			}
			pending, pendTok, pendOK = v, t, true
		}
	}
}

// errorAt returns a SyntaxError at the start of tok.
func (p *parser) errorAt(tok token, msg string) error {
	return p.errorAtOff(tok.off, tok.line, tok.lineStart, msg)
}

func (p *parser) errorAtOff(off, line, lineStart int, msg string) error {
	return &SyntaxError{Line: line, Column: utf8.RuneCountInString(p.src[lineStart:off]) + 1, Msg: msg}
}

// isSpace reports whether c separates tokens: as in brain4it, every byte
// up to and including the space.
func isSpace(c byte) bool { return c <= ' ' }

// next reads the next token.
func (p *parser) next() (token, error) {
	src := p.src
	for p.off < len(src) && isSpace(src[p.off]) {
		if src[p.off] == '\n' {
			p.line++
			p.lineStart = p.off + 1
		}
		p.off++
	}
	tok := token{off: p.off, line: p.line, lineStart: p.lineStart}
	if p.off >= len(src) {
		tok.kind = tokEOF
		return tok, nil
	}
	switch c := src[p.off]; {
	case c == '(':
		p.off++
		tok.kind = tokOpen
		return tok, nil
	case c == ')':
		p.off++
		tok.kind = tokClose
		return tok, nil
	case c == '"':
		return p.str(tok)
	case strings.HasPrefix(src[p.off:], "=>"):
		p.off += 2
		tok.kind = tokArrow
		return tok, nil
	}
	start := p.off
	for p.off < len(src) {
		c := src[p.off]
		if isSpace(c) || c == '(' || c == ')' {
			break
		}
		if c == '"' {
			if src[p.off-1] != '/' {
				return tok, p.errorAtOff(p.off, p.line, p.lineStart, `" inside a token: separate the string with a space`)
			}
			if err := p.pathString(); err != nil {
				return tok, err
			}
			continue
		}
		p.off++
	}
	tok.kind = tokAtom
	tok.text = src[start:p.off]
	v, err := atom(tok.text)
	if err != nil {
		return tok, p.errorAt(tok, err.Error())
	}
	tok.val = v
	return tok, nil
}

// pathString reads the quoted part of a path reference that starts at
// p.off, as in persons/"John Smith"/age: a string literal that must end
// the token or be followed by another /.
func (p *parser) pathString() error {
	q, err := p.str(token{off: p.off, line: p.line, lineStart: p.lineStart})
	if err != nil {
		return err
	}
	switch {
	case q.text == "":
		return p.errorAt(q, `the empty path part "" names no element`)
	case allDigits(q.text):
		// brain4it's reader would take this part as a name, an evaluator
		// here as an index
		return p.errorAt(q, fmt.Sprintf("the path part %q is quoted digits: write an index without quotes", q.text))
	}
	if p.off < len(p.src) {
		if c := p.src[p.off]; !isSpace(c) && c != '(' && c != ')' && c != '/' {
			return p.errorAtOff(p.off, p.line, p.lineStart, "a quoted path part must end the token or be followed by /")
		}
	}
	return nil
}

// allDigits reports whether s is made of ASCII digits only.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// str reads the string literal that starts at tok.
func (p *parser) str(tok token) (token, error) {
	src := p.src
	p.off++ // the opening quote
	start := p.off
	var b *strings.Builder // nil until the first escape: most strings have none
	for p.off < len(src) {
		c := src[p.off]
		switch c {
		case '"':
			s := src[start:p.off]
			if b != nil {
				b.WriteString(s)
				s = b.String()
			}
			p.off++
			tok.kind, tok.text, tok.val = tokString, s, s
			return tok, nil
		case '\n':
			return tok, p.errorAtOff(p.off, p.line, p.lineStart, "newline in string: close the string or write \\n")
		case '\\':
			if p.off+1 == len(src) {
				return tok, p.errorAt(tok, "unterminated string")
			}
			if b == nil {
				b = &strings.Builder{}
			}
			b.WriteString(src[start:p.off])
			n, err := p.escape(b)
			if err != nil {
				return tok, err
			}
			p.off += n
			start = p.off
			continue
		}
		p.off++
	}
	return tok, p.errorAt(tok, "unterminated string")
}

// escape decodes the escape sequence at p.off into b and returns its
// length in bytes.
func (p *parser) escape(b *strings.Builder) (int, error) {
	s := p.src[p.off:] // the caller checked there is a byte after the \
	switch s[1] {
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case '\\', '\'', '"':
		b.WriteByte(s[1])
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, p.errorAtOff(p.off, p.line, p.lineStart, `\u must be followed by 4 hex digits`)
		}
		if utf16.IsSurrogate(r) && r < 0xdc00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
					b.WriteRune(c)
					return 12, nil
				}
			}
		}
		b.WriteRune(r) // a lone surrogate writes U+FFFD
		return 6, nil
	case '\n':
		return 0, p.errorAtOff(p.off+1, p.line, p.lineStart, "newline in string: close the string or write \\n")
	default:
		c, _ := utf8.DecodeRuneInString(s[1:])
		return 0, p.errorAtOff(p.off, p.line, p.lineStart, fmt.Sprintf("invalid escape \\%c", c))
	}
	return 2, nil
}

// hex4 decodes the 4 hex digits at the start of s.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(s[:4], 16, 16) // takes no sign or underscore
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

// atom converts the text of a token that is not a string, list or =>.
func atom(s string) (any, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if !numeric(s) {
		return Reference(s), nil
	}
	return number(s)
}

// numeric reports whether s looks like a number, as brain4it's reader
// decides: a digit first, or a sign or point and then a digit.
func numeric(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
	}
	return i < len(s) && isDigit(s[i])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number converts a numeric token; the grammar is checked here so that
// strconv's extras (underscores, hex floats, "inf") are not accepted.
func number(s string) (any, error) {
	digits := s
	neg := false
	if digits[0] == '+' || digits[0] == '-' {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	if len(digits) > 1 && digits[0] == '0' {
		switch digits[1] {
		case 'x', 'X':
			return radix(s, neg, digits[2:], 16)
		case 'b', 'B':
			return radix(s, neg, digits[2:], 2)
		}
	}
	i, intDigits := 0, 0
	for i < len(digits) && isDigit(digits[i]) {
		i++
		intDigits++
	}
	isFloat := false
	fracDigits := 0
	if i < len(digits) && digits[i] == '.' {
		isFloat = true
		i++
		for i < len(digits) && isDigit(digits[i]) {
			i++
			fracDigits++
		}
	}
	if intDigits+fracDigits == 0 {
		return nil, fmt.Errorf("invalid number %s", s)
	}
	if i < len(digits) && (digits[i] == 'e' || digits[i] == 'E') {
		isFloat = true
		i++
		if i < len(digits) && (digits[i] == '+' || digits[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(digits) && isDigit(digits[i]) {
			i++
			expDigits++
		}
		if expDigits == 0 {
			return nil, fmt.Errorf("invalid number %s", s)
		}
	}
	if i != len(digits) {
		return nil, fmt.Errorf("invalid number %s", s)
	}
	if !isFloat {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		// Too big for int64: a float64, as brain4it's reader makes it.
	}
	// The grammar is checked, so the only error left is a range error,
	// which gives ±Inf (or 0 on underflow) as Java's parseDouble does.
	f, _ := strconv.ParseFloat(s, 64)
	return f, nil
}

// radix converts the digits of a 0x or 0b integer; its value, with its
// sign, must fit in an int64.
func radix(s string, neg bool, digits string, base int) (any, error) {
	name := "hex"
	if base == 2 {
		name = "binary"
	}
	if digits == "" {
		return nil, fmt.Errorf("invalid %s number %s", name, s)
	}
	for i := 0; i < len(digits); i++ {
		if d := digitVal(digits[i]); d >= base {
			return nil, fmt.Errorf("invalid %s number %s", name, s)
		}
	}
	u, err := strconv.ParseUint(digits, base, 64)
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	if err != nil || u > limit {
		return nil, fmt.Errorf("%s number %s does not fit in 64 bits", name, s)
	}
	if neg {
		return -int64(u), nil // -int64(1<<63) wraps to MinInt64, which is right
	}
	return int64(u), nil
}

func digitVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}
