package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidPath is wrapped by the errors of ParsePath and SplitPath: the
// text is not a path in brain4it's syntax.
var ErrInvalidPath = errors.New("server: invalid path")

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
	t.Module, t.Path = p[:i], strings.TrimSpace(p[i+1:])
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

// ParsePath reads a module path in brain4it's syntax: parts joined by /
// are names, a part after : is an index, a part that starts with a digit
// is an index too (brain4it's reader reads a/0 so), and a name may be
// quoted, "a b", with BPL's escapes, to hold /, : or spaces. So
// rules:2/predicate is ("rules" 2 "predicate") and "@x y"/0 is ("@x y" 0).
// Spaces around s are ignored, as brain4it's PathParser trims them. The
// first part must be a name. Errors wrap ErrInvalidPath.
func ParsePath(s string) ([]any, error) {
	s = strings.TrimSpace(s)
	var parts []any
	i := 0
	sep := byte('/') // the separator before the part being read
	for {
		var name string
		quoted := false
		if i < len(s) && s[i] == '"' {
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != '"'; j++ {
				c := s[j]
				if c == '\\' && j+1 < len(s) {
					j++
					switch s[j] {
					case 'n':
						c = '\n'
					case 't':
						c = '\t'
					case 'r':
						c = '\r'
					default:
						c = s[j]
					}
				}
				b.WriteByte(c)
			}
			if j >= len(s) {
				return nil, fmt.Errorf("%w: %q: unterminated quoted name", ErrInvalidPath, s)
			}
			name, quoted, i = b.String(), true, j+1
		} else {
			j := i
			for j < len(s) && s[j] != '/' && s[j] != ':' {
				j++
			}
			name, i = s[i:j], j
		}
		if !quoted && name == "" {
			return nil, fmt.Errorf("%w: %q: empty part", ErrInvalidPath, s)
		}
		switch {
		case quoted:
			if sep == ':' {
				return nil, fmt.Errorf("%w: %q: an index after : must be a number, got %q", ErrInvalidPath, s, name)
			}
			parts = append(parts, name)
		case sep == ':' || (name[0] >= '0' && name[0] <= '9'):
			n, err := strconv.Atoi(name)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: %q: bad index %q", ErrInvalidPath, s, name)
			}
			parts = append(parts, n)
		default:
			if strings.Contains(name, `"`) {
				return nil, fmt.Errorf("%w: %q: a quote inside a name", ErrInvalidPath, s)
			}
			parts = append(parts, name)
		}
		if i >= len(s) {
			break
		}
		if s[i] != '/' && s[i] != ':' {
			return nil, fmt.Errorf("%w: %q: want / or : after a quoted name", ErrInvalidPath, s)
		}
		sep = s[i]
		i++
		if i >= len(s) {
			return nil, fmt.Errorf("%w: %q: ends with %c", ErrInvalidPath, s, sep)
		}
	}
	if _, ok := parts[0].(string); !ok {
		return nil, fmt.Errorf("%w: %q: the first part must be a name", ErrInvalidPath, s)
	}
	return parts, nil
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
