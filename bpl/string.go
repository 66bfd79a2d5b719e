package bpl

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/value"
)

// The string family: case, trimming, measuring, cutting and searching
// text, and regular expressions.
//
// Positions and lengths count characters (Unicode code points), as size
// does; brain4it counts Java's UTF-16 units, which differ only for
// characters outside the Basic Multilingual Plane (a 😀 is 1 here, 2
// there).
//
// Regular expressions are Go's (RE2 syntax), not Java's: the usual syntax
// (classes, groups, (?<name>...), alternation, greedy and lazy
// quantifiers, \d \w \s \b, (?i) flags) is the same, but back-references
// (\1), lookahead and lookbehind ((?=...) (?!...) (?<=...) (?<!...)),
// possessive quantifiers (a*+), atomic groups (?>...) and Java-only classes
// such as \p{javaLowerCase} are syntax errors, and an empty match right
// after another match is skipped (Java's "abc".replaceAll("b*", "-") is
// "-a--c-", here "-a-c-"). Matching takes time linear in the text, and a
// pattern may compile to at most maxRegexInsts instructions, so no pattern
// can make a match run away.

func init() {
	register(map[string]builtin{
		"downcase":       biDowncase,
		"upcase":         biUpcase,
		"trim":           biTrim,
		"length":         biLength,
		"substring":      biSubstring,
		"substr":         biSubstring,
		"locate-string":  biLocateString,
		"findstr":        biLocateString,
		"split":          biSplit,
		"match-string":   biMatchString,
		"replace-string": biReplaceString,
	})
}

// Bounds of the regular expression functions.
const (
	maxRegexLen   = 1 << 16 // bytes of a pattern
	maxRegexInsts = 10000   // instructions a pattern compiles to
	maxSplitParts = maxConcatElems
	regexInline   = 1 << 12 // texts shorter than this are matched without a goroutine
)

// stringArgs checks call's arity and evaluates its arguments; those at
// the indexes (from 0) in strs must be strings.
func (t *task) stringArgs(f *frame, call *value.List, min, max int, strs ...int) (*value.List, error) {
	if err := t.arity(f, call, min, max); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	for _, i := range strs {
		if i >= args.Len() {
			continue
		}
		if _, ok := args.At(i).(string); !ok {
			return nil, t.errorf(f, "InvalidArgument", "%s: argument %d is %s, want a string", fname(call), i+1, value.Describe(args.At(i)))
		}
	}
	return args, nil
}

// stringIndex reads argument i of args, an index: an integer, or a float
// truncated toward zero as Java's intValue does.
func (t *task) stringIndex(f *frame, call, args *value.List, i int) (int64, error) {
	v := args.At(i)
	if _, ok := toFloat(v); !ok {
		return 0, t.errorf(f, "InvalidArgument", "%s: argument %d is %s, want an index", fname(call), i+1, value.Describe(v))
	}
	return javaLong(v), nil
}

// oneString is how downcase, upcase, trim and length start.
func (t *task) oneString(f *frame, call *value.List) (string, error) {
	args, err := t.stringArgs(f, call, 1, 1, 0)
	if err != nil {
		return "", err
	}
	return args.At(0).(string), nil
}

// (downcase s) gives s in lower case (Unicode's mapping, whatever the
// locale): (downcase "ABCD123f") is "abcd123f".
func biDowncase(t *task, f *frame, call *value.List) (any, error) {
	s, err := t.oneString(f, call)
	if err != nil {
		return nil, err
	}
	return strings.ToLower(s), nil
}

// (upcase s) gives s in upper case: (upcase "Abc123") is "ABC123".
func biUpcase(t *task, f *frame, call *value.List) (any, error) {
	s, err := t.oneString(f, call)
	if err != nil {
		return nil, err
	}
	return strings.ToUpper(s), nil
}

// (trim s) gives s without the spaces and control characters (those up to
// U+0020, as Java's trim) at its ends; other Unicode spaces stay.
func biTrim(t *task, f *frame, call *value.List) (any, error) {
	s, err := t.oneString(f, call)
	if err != nil {
		return nil, err
	}
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' }), nil
}

// (length s) gives the number of characters of s: (length "Brain4it") is
// 8, (length "") 0.
func biLength(t *task, f *frame, call *value.List) (any, error) {
	s, err := t.oneString(f, call)
	if err != nil {
		return nil, err
	}
	return int64(utf8.RuneCountInString(s)), nil
}

// runeOffset gives the byte offset in s of character n (len(s) for n the
// number of characters), or -1 when s is shorter; n must be >= 0.
func runeOffset(s string, n int64) int {
	if n <= int64(len(s)) && isASCII(s[:n]) {
		return int(n)
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	if n == 0 {
		return len(s)
	}
	return -1
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// (substring s from to) gives the characters of s from index from (the
// first is 0) to index to, excluded; without to (or with a null to), to
// the end: (substring "Federation" 2 4) is "de", (substring "Federation"
// 2) "deration". An index below 0 or past the end, or to before from, is
// an InvalidArgument exception. substr is another name for it.
func biSubstring(t *task, f *frame, call *value.List) (any, error) {
	args, err := t.stringArgs(f, call, 2, 3, 0)
	if err != nil {
		return nil, err
	}
	s := args.At(0).(string)
	from, err := t.stringIndex(f, call, args, 1)
	if err != nil {
		return nil, err
	}
	var bfrom, bto int
	if from >= 0 {
		bfrom = runeOffset(s, from)
	}
	if from < 0 || bfrom < 0 {
		return nil, t.errorf(f, "InvalidArgument", "%s: index %d out of range: the string has %s", fname(call), from, plural(utf8.RuneCountInString(s), "character"))
	}
	if args.Len() < 3 || args.At(2) == nil {
		return s[bfrom:], nil
	}
	to, err := t.stringIndex(f, call, args, 2)
	if err != nil {
		return nil, err
	}
	if to < from {
		return nil, t.errorf(f, "InvalidArgument", "%s: end index %d is before start index %d", fname(call), to, from)
	}
	if bto = runeOffset(s[bfrom:], to-from); bto < 0 {
		return nil, t.errorf(f, "InvalidArgument", "%s: index %d out of range: the string has %s", fname(call), to, plural(utf8.RuneCountInString(s), "character"))
	}
	return s[bfrom : bfrom+bto], nil
}

// (locate-string s sub from) gives the index of the first sub in s at or
// after index from (0 when absent or negative), or -1 when there is none:
// (locate-string "My car is red" "r") is 5, (locate-string "My car is red"
// "r" 7) 10. An empty sub is found at from (or at the end when from is past
// it). findstr is another name for it.
func biLocateString(t *task, f *frame, call *value.List) (any, error) {
	args, err := t.stringArgs(f, call, 2, 3, 0, 1)
	if err != nil {
		return nil, err
	}
	s, sub := args.At(0).(string), args.At(1).(string)
	var from int64
	if args.Len() > 2 {
		if from, err = t.stringIndex(f, call, args, 2); err != nil {
			return nil, err
		}
		from = max(from, 0)
	}
	off := runeOffset(s, from)
	if off < 0 {
		if sub == "" {
			return int64(utf8.RuneCountInString(s)), nil
		}
		return int64(-1), nil
	}
	i := strings.Index(s[off:], sub)
	if i < 0 {
		return int64(-1), nil
	}
	return from + int64(utf8.RuneCountInString(s[off:off+i])), nil
}

// regexCache holds compiled patterns, as scripts split or match in loops
// with the same few.
var regexCache struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}

// compileRegex compiles a pattern within maxRegexLen and maxRegexInsts.
func compileRegex(pattern string) (*regexp.Regexp, error) {
	regexCache.Lock()
	re := regexCache.m[pattern]
	regexCache.Unlock()
	if re != nil {
		return re, nil
	}
	if len(pattern) > maxRegexLen {
		return nil, fmt.Errorf("regular expression longer than %d bytes", maxRegexLen)
	}
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression %s: %v", strconv.Quote(value.Short(pattern)), syntaxReason(err))
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, fmt.Errorf("bad regular expression %s: %v", strconv.Quote(value.Short(pattern)), syntaxReason(err))
	}
	if len(prog.Inst) > maxRegexInsts {
		return nil, fmt.Errorf("regular expression %s is too complex (over %d instructions)", strconv.Quote(value.Short(pattern)), maxRegexInsts)
	}
	if re, err = regexp.Compile(pattern); err != nil {
		return nil, fmt.Errorf("bad regular expression %s: %v", strconv.Quote(value.Short(pattern)), syntaxReason(err))
	}
	regexCache.Lock()
	if len(regexCache.m) >= 256 {
		regexCache.m = nil
	}
	if regexCache.m == nil {
		regexCache.m = map[string]*regexp.Regexp{}
	}
	regexCache.m[pattern] = re
	regexCache.Unlock()
	return re, nil
}

// syntaxReason is a syntax error's reason, without the pattern it quotes
// again.
func syntaxReason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrInvalidPerlOp, syntax.ErrInvalidEscape, syntax.ErrInvalidNamedCapture, syntax.ErrInvalidRepeatOp:
			return string(se.Code) + " " + strconv.Quote(se.Expr) + " (no lookaround, back-references or possessive quantifiers in Go's RE2)"
		}
		return string(se.Code) + " " + strconv.Quote(se.Expr)
	}
	return err.Error()
}

// regexWork runs work, a match over text, and gives its result; an error
// of work is an InvalidArgument exception of fn. Over long texts work
// runs on its own goroutine, so that the task ends when its context does
// even while work is still running (it then finishes in the background,
// within the time its linear matching takes).
func (t *task) regexWork(f *frame, fn, text string, work func() (any, error)) (any, error) {
	var v any
	var err error
	if len(text) < regexInline || t.ctx.Done() == nil {
		v, err = work()
	} else {
		type result struct {
			v   any
			err error
		}
		done := make(chan result, 1)
		go func() {
			v, err := work()
			done <- result{v, err}
		}()
		select {
		case r := <-done:
			v, err = r.v, r.err
		case <-t.ctx.Done():
			return nil, t.interrupted(f)
		}
	}
	if err != nil {
		return nil, t.errorf(f, "InvalidArgument", "%s: %v", fn, err)
	}
	return v, nil
}

// (split s regex) gives the list of the parts of s between matches of the
// regular expression regex, a single space by default: (split "My name is
// HAL") is ("My" "name" "is" "HAL"), (split "1,2,3" ",") ("1" "2" "3").
// As in Java, empty parts at the end are dropped ((split "a,b,," ",") is
// ("a" "b"), (split "," ",") is ()), an empty match at the start makes no
// empty first part, and s without a match is the one part: (split "" ",")
// is (""). A bad regex is an InvalidArgument exception.
func biSplit(t *task, f *frame, call *value.List) (any, error) {
	args, err := t.stringArgs(f, call, 1, 2, 0, 1)
	if err != nil {
		return nil, err
	}
	s, pattern := args.At(0).(string), " "
	if args.Len() > 1 {
		pattern = args.At(1).(string)
	}
	return t.regexWork(f, fname(call), s, func() (any, error) {
		re, err := compileRegex(pattern)
		if err != nil {
			return nil, err
		}
		ms := re.FindAllStringIndex(s, maxSplitParts+1)
		if len(ms) > maxSplitParts {
			return nil, fmt.Errorf("more than %d parts", maxSplitParts)
		}
		var parts []string
		start := 0
		for _, m := range ms {
			if m[1] == 0 {
				continue // an empty match at the start
			}
			parts = append(parts, s[start:m[0]])
			start = m[1]
		}
		if start == 0 {
			return value.NewList(s), nil
		}
		parts = append(parts, s[start:])
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		l := &value.List{}
		for _, p := range parts {
			l.Append(p)
		}
		return l, nil
	})
}

// (match-string s regex) is true when the regular expression regex
// matches the whole of s, as Java's String.matches: (match-string "Hello"
// ".*e.*") is true, (match-string "Hello" "e") false. A bad regex is an
// InvalidArgument exception.
func biMatchString(t *task, f *frame, call *value.List) (any, error) {
	args, err := t.stringArgs(f, call, 2, 2, 0, 1)
	if err != nil {
		return nil, err
	}
	s, pattern := args.At(0).(string), args.At(1).(string)
	return t.regexWork(f, fname(call), s, func() (any, error) {
		if _, err := compileRegex(pattern); err != nil {
			return nil, err // its message quotes the pattern as given
		}
		re, err := compileRegex(`\A(?:` + pattern + `)\z`)
		if err != nil {
			return nil, err
		}
		return re.MatchString(s), nil
	})
}

// (replace-string s regex replacement) gives s with every match of the
// regular expression regex replaced, as Java's replaceAll:
// (replace-string "Hello" "ll" "r") is "Hero". In replacement, $n stands
// for group n's text ($0 the whole match; $12 is group 12 only when there
// are 12 groups, else group 1 and a 2), ${name} for the group named name,
// and a backslash takes the next character literally (\$ is a $). A $
// followed by anything else, a group that does not exist, a trailing
// backslash, a bad regex or a result over maxText bytes is an
// InvalidArgument exception.
func biReplaceString(t *task, f *frame, call *value.List) (any, error) {
	args, err := t.stringArgs(f, call, 3, 3, 0, 1, 2)
	if err != nil {
		return nil, err
	}
	s, pattern, repl := args.At(0).(string), args.At(1).(string), args.At(2).(string)
	return t.regexWork(f, fname(call), s, func() (any, error) {
		re, err := compileRegex(pattern)
		if err != nil {
			return nil, err
		}
		tmpl, lit, refs, err := goTemplate(re, repl)
		if err != nil {
			return nil, err
		}
		// Every group lies within its match, so this bounds the result.
		size := len(s)
		re.ReplaceAllStringFunc(s, func(m string) string {
			if size <= maxText {
				size += lit + refs*len(m)
			}
			return ""
		})
		if size > maxText {
			return nil, fmt.Errorf("the result would be longer than %d bytes", maxText)
		}
		return re.ReplaceAllString(s, tmpl), nil
	})
}

// goTemplate translates a Java replacement string into a template for
// Go's ReplaceAllString. It also gives the number of literal bytes and of
// group references, which bound the size of a replacement.
func goTemplate(re *regexp.Regexp, repl string) (tmpl string, lit, refs int, err error) {
	var b strings.Builder
	groups := re.NumSubexp()
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '\\':
			if i+1 == len(repl) {
				return "", 0, 0, errors.New("the replacement ends with a backslash")
			}
			i++
			c = repl[i]
			if c == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(c)
			}
			lit++
		case c == '$' && i+1 < len(repl) && repl[i+1] == '{':
			end := strings.IndexByte(repl[i+2:], '}')
			if end < 0 {
				return "", 0, 0, errors.New("the replacement has a ${ without }")
			}
			name := repl[i+2 : i+2+end]
			if name == "" || re.SubexpIndex(name) < 0 {
				return "", 0, 0, fmt.Errorf("the regular expression has no group named %s", strconv.Quote(name))
			}
			b.WriteString("${" + name + "}")
			refs++
			i += 2 + end
		case c == '$' && i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9':
			i++
			n := int(repl[i] - '0')
			if n > groups {
				return "", 0, 0, fmt.Errorf("the regular expression has no group %d", n)
			}
			for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
				next := n*10 + int(repl[i+1]-'0')
				if next > groups {
					break
				}
				n = next
				i++
			}
			b.WriteString("${" + strconv.Itoa(n) + "}")
			refs++
		case c == '$':
			return "", 0, 0, errors.New("a $ in the replacement must be followed by a group number or {name} (write \\$ for a $)")
		default:
			b.WriteByte(c)
			lit++
		}
	}
	return b.String(), lit, refs, nil
}
