package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalidPath is wrapped by the errors of ParsePath and SplitPath: the
// text is not a path in brain4it's syntax.
var ErrInvalidPath = errors.New("server: invalid path")

// PathError is the error of a module path that does not read: Path is
// the text as given, Reason what is wrong. Its exception list is
// brain4it's InvalidReference, whose message is the path (with the /
// PathParser puts before a quote) or "First element is not a string: N",
// as brain4it's BSoftReference.stringToPath words them.
type PathError struct {
	Path   string
	Reason string
	b4it   string // brain4it's message
}

func (e *PathError) Error() string {
	return fmt.Sprintf("%v: %q: %s", ErrInvalidPath, e.Path, e.Reason)
}

func (e *PathError) Unwrap() error { return ErrInvalidPath }

// message is brain4it's message for the path.
func (e *PathError) message() string { return e.b4it }

// Target is what a request's path names, as brain4it's PathParser reads
// it: the module (empty for the server's root) and the path within its
// scope (empty for the whole scope), as text and as parts.
type Target struct {
	Module string // "" names the server itself (GET / lists the modules)
	Path   string // the module path as written, "" for the module itself
	Parts  []any  // Path read by ParsePath: string names and int indexes
}

// SplitPath reads an HTTP request's path, already URL-decoded:
// /module/path... with leading and trailing slashes ignored, as brain4it's
// PathParser does. The module path is read with ParsePath.
func SplitPath(urlPath string) (Target, error) {
	p := strings.Trim(urlPath, "/")
	var t Target
	if p == "" {
		return t, nil
	}
	i := strings.IndexByte(p, '/')
	if i < 0 {
		t.Module = p
		return t, nil
	}
	t.Module, t.Path = p[:i], trimControl(p[i+1:])
	if t.Path == "" {
		return t, nil
	}
	parts, err := ParsePath(t.Path)
	if err != nil {
		return Target{}, err
	}
	t.Parts = parts
	return t, nil
}

// trimControl trims spaces and control characters, as Java's String.trim,
// which brain4it's PathParser applies, does.
func trimControl(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// pathSeparator reports whether r ends a token for brain4it's reader
// (its Tokenizer.isSeparator): a space, a control character or a no-break
// space.
func pathSeparator(r rune) bool { return r <= ' ' || r == '\u00a0' }

// ParsePath reads a module path as brain4it's server does (PathParser,
// then BSoftReference.stringToPath), which is one BPL reference:
//
//   - text without / is one name, whatever it holds: c:1 names the
//     variable "c:1", as brain4it has no other index syntax;
//   - with /, the parts between slashes are names, but for a part that
//     starts with a digit, which is an index (rules/2/predicate is
//     ("rules" 2 "predicate")); empty parts are skipped, as in a//b;
//   - a part in quotes, with BPL's escapes, is a name that may hold /,
//     spaces or digits first ("@x y"/0 is ("@x y" 0)); a path that starts
//     with a quote is read as if / came first, as PathParser does.
//
// It is an error, wrapping ErrInvalidPath (a *PathError), when the text
// is not one reference: empty, a number, true, false, null, a tag, text
// after a space or parenthesis, a quote inside a name, an index that is
// not a 32-bit integer, or a first part that is an index. Spaces and
// control characters around s are ignored, as PathParser trims them.
func ParsePath(s string) ([]any, error) {
	s = trimControl(s)
	src := s
	if strings.HasPrefix(src, `"`) {
		src = "/" + src
	}
	bad := func(reason string) ([]any, error) {
		return nil, &PathError{Path: s, Reason: reason, b4it: src}
	}
	if s == "" {
		return bad("empty path")
	}
	const (
		plain  = iota // a name with no / yet
		part          // a part of a path
		quoted        // inside quotes in a part
	)
	state := plain
	var parts []any
	var buf strings.Builder
	var reason string
	// endPart adds the part buf holds, as brain4it's reader reads it.
	endPart := func() {
		text := buf.String()
		buf.Reset()
		switch {
		case text == "" || reason != "":
		case startsWithDigit(text):
			n, err := strconv.ParseInt(text, 10, 32)
			if err != nil {
				reason = fmt.Sprintf("bad index %q", text)
				return
			}
			parts = append(parts, int(n))
		case len(text) >= 2 && text[0] == '"' && text[len(text)-1] == '"':
			name, ok := unquotePart(text)
			if !ok {
				reason = fmt.Sprintf("bad escape in %s", text)
				return
			}
			parts = append(parts, name)
		case strings.Contains(text, `"`):
			reason = fmt.Sprintf("a quote inside the name %s", text)
		default:
			parts = append(parts, text)
		}
	}
	i := 0
scan:
	for i < len(src) {
		r, n := utf8.DecodeRuneInString(src[i:])
		switch state {
		case plain:
			switch {
			case pathSeparator(r) || r == '(' || r == ')':
				break scan
			case r == '"':
				return bad("a quote inside a name")
			case r == '/':
				endPart()
				state = part
			default:
				buf.WriteRune(r)
				if strings.HasPrefix(buf.String(), "=>") {
					return bad("=> is no name")
				}
			}
		case part:
			switch {
			case pathSeparator(r) || r == '(' || r == ')':
				break scan
			case r == '/':
				endPart()
			case r == '"':
				buf.WriteRune(r)
				state = quoted
			default:
				buf.WriteRune(r)
			}
		case quoted:
			switch {
			case r == '\n' || r == '\r' || r == '\t':
				return bad("a line break or tab inside quotes")
			case r == '"' && !strings.HasSuffix(buf.String(), `\`):
				// brain4it's reader: a quote after a backslash, even
				// an escaped one, does not end the quotes
				buf.WriteRune(r)
				state = part
			default:
				buf.WriteRune(r)
			}
		}
		i += n
	}
	if strings.TrimLeftFunc(src[i:], pathSeparator) != "" {
		return bad("more than one reference")
	}
	switch state {
	case quoted:
		return bad("unterminated quotes")
	case part:
		endPart()
		if reason != "" {
			return bad(reason)
		}
		if len(parts) == 0 {
			return bad("no name")
		}
		if n, ok := parts[0].(int); ok {
			msg := "First element is not a string: " + strconv.Itoa(n)
			return nil, &PathError{Path: s, Reason: msg, b4it: msg}
		}
		return parts, nil
	}
	// one name: a reference unless the reader takes it for another token
	text := buf.String()
	switch {
	case text == "true" || text == "false" || text == "null" ||
		text == "Infinity" || text == "-Infinity" || text == "NaN" || mayBeNumber(text):
		return bad("a number, boolean or null is no name")
	case isTagText(text):
		return bad("a tag is no name")
	}
	return []any{text}, nil
}

// startsWithDigit reports whether s starts with a decimal digit, which
// makes a path part an index. brain4it's Character.isDigit takes any
// Unicode digit; only ASCII digits read as an index here, so a part such
// as ٣ is refused where brain4it would take it as the index 3.
func startsWithDigit(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsDigit(r)
}

// mayBeNumber is brain4it's reader's test for a token it reads as a
// number (or refuses as a bad one): a digit first, or a sign or a point
// and then a digit.
func mayBeNumber(s string) bool {
	rs := []rune(s)
	switch {
	case len(rs) == 0:
		return false
	case unicode.IsDigit(rs[0]):
		return true
	case len(rs) == 1:
		return false
	case rs[0] == '.':
		return unicode.IsDigit(rs[1])
	case rs[0] == '+' || rs[0] == '-':
		if unicode.IsDigit(rs[1]) {
			return true
		}
		return len(rs) > 2 && rs[1] == '.' && unicode.IsDigit(rs[2])
	}
	return false
}

// isTagText reports whether s is one of brain4it's tags, <#id> or <@id>,
// which its reader reads as a tag rather than a reference.
func isTagText(s string) bool {
	return len(s) > 3 && (strings.HasPrefix(s, "<#") || strings.HasPrefix(s, "<@")) && strings.HasSuffix(s, ">")
}

// unquotePart reads a quoted part as brain4it's Utils.unescapeString
// does: escapes decoded, and every quote that is not escaped dropped (so
// "a"b"c" is abc). ok is false for a bad escape.
func unquotePart(s string) (string, bool) {
	var units []uint16 // UTF-16, as Java's \u escapes build surrogate pairs
	add := func(r rune) { units = utf16.AppendRune(units, r) }
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch r {
		case '"':
			continue
		case '\\':
		default:
			add(r)
			continue
		}
		if i >= len(s) {
			return string(utf16.Decode(units)), true // a trailing \ is dropped
		}
		e := s[i]
		i++
		switch e {
		case 'n':
			add('\n')
		case 'r':
			add('\r')
		case 't':
			add('\t')
		case 'b':
			add('\b')
		case 'f':
			add('\f')
		case '\\', '\'', '"':
			add(rune(e))
		case 'u':
			if i+4 > len(s) {
				return "", false
			}
			// Java's Integer.parseInt(hex, 16), then a char: a sign is
			// taken, and the value cut to 16 bits
			v, err := strconv.ParseInt(s[i:i+4], 16, 32)
			if err != nil {
				return "", false
			}
			units = append(units, uint16(v))
			i += 4
		default:
			return "", false
		}
	}
	return string(utf16.Decode(units)), true
}

// exterior reports whether a module path names an exterior function, one
// that POST may call without the access key: its name, or the name of a
// list on its way, starts with @ (brain4it's createExteriorFunctionCall).
func exterior(parts []any) bool {
	for _, p := range parts {
		if s, ok := p.(string); ok && strings.HasPrefix(s, "@") {
			return true
		}
	}
	return false
}
