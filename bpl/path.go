package bpl

import (
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// Path references whose parts are quoted, as in /"Hello friend"/"John
// Connor" or rooms/"hall (north)"/3: the reader keeps the raw text, and
// these split it into its parts and write parts that need quotes.

// quotedPath splits a path reference holding quoted parts into its parts,
// unquoted; a leading / is no part. It gives nil when name is no such
// path (a part empty, unterminated, or a quoted one that would read as an
// index).
func quotedPath(name string) []string {
	name = strings.TrimPrefix(name, "/")
	var parts []string
	for {
		var part string
		if strings.HasPrefix(name, `"`) {
			end := closingQuote(name)
			if end < 0 {
				return nil
			}
			vs, err := value.Parse(name[:end+1])
			if err != nil || len(vs) != 1 {
				return nil
			}
			s, ok := vs[0].(string)
			if !ok || s == "" {
				return nil
			}
			if _, isIndex := pathIndex(s); isIndex {
				return nil
			}
			part, name = s, name[end+1:]
			if name != "" && name[0] != '/' {
				return nil
			}
		} else {
			i := strings.IndexByte(name, '/')
			if i < 0 {
				i = len(name)
			}
			part, name = name[:i], name[i:]
			if part == "" || strings.Contains(part, `"`) {
				return nil
			}
		}
		parts = append(parts, part)
		if name == "" {
			return parts
		}
		name = name[1:] // the /
		if name == "" {
			return nil // a trailing /
		}
	}
}

// closingQuote gives the index of the quote that ends the string literal
// at the start of s, or -1.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// pathName gives how a name is written as a part of a path: as it is, or
// quoted when it holds a byte that would end the part or the token (a
// space or control character, ( ) / or ") or would not read alone as a
// reference (5a, -3, true: brain4it writes the last two bare). ok is
// false for a name that no path can hold here: the empty one, and one of
// digits only, which a path reads as an index.
func pathName(s string) (text string, ok bool) {
	if _, isIndex := pathIndex(s); isIndex || s == "" {
		return "", false
	}
	if strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || strings.ContainsRune(`()/"`, r)
	}) || !isReferenceText(s) {
		return value.Format(s), true
	}
	return s, true
}
