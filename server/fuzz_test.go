package server

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// ParsePath never panics, and what it does not read is ErrInvalidPath; what
// it reads starts with a name.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"a", "c:1", "rules/2/predicate", `"@x y"/0`, `a/"b\"c"/3`, "a//", ":", `"`, "0", "a/99999999999999999999", `"a\u00e9"/x`, "a b", "-1.5", "<@1>", "+0/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := ParsePath(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidPath) {
				t.Fatalf("%q: %v does not wrap ErrInvalidPath", s, err)
			}
			return
		}
		if len(parts) == 0 {
			t.Fatalf("%q: no parts", s)
		}
		if _, ok := parts[0].(string); !ok {
			t.Fatalf("%q: first part %v", s, parts[0])
		}
		// A URL loses its trailing slashes before its path is read, as
		// brain4it's PathParser strips them: "+0/" is a name, but the
		// URL /m/+0/ holds the number +0.
		if strings.HasSuffix(trimControl(s), "/") {
			return
		}
		target, err := SplitPath("/m/" + s)
		if err != nil {
			t.Fatalf("SplitPath of a valid path %q: %v", s, err)
		}
		if !reflect.DeepEqual(target.Parts, parts) {
			t.Fatalf("SplitPath of %q: %v, ParsePath: %v", s, target.Parts, parts)
		}
	})
}
