package bpl

import (
	"slices"
	"testing"
)

// Names with spaces, slashes, parentheses or quotes are quoted parts of a
// path: reference writes them so, and the path reads, sets, tests and
// deletes the element they name.
func TestQuotedPath(t *testing.T) {
	checkValues(t, []valueTest{
		{`(reference ("Living room" "lamp"))`, `/"Living room"/lamp`},
		{`(reference ("Living room"))`, `/"Living room"`},
		{`(reference ("house" "a/b" 2 "(x)" "say \"hi\""))`, `house/"a/b"/2/"(x)"/"say \"hi\""`},
		{`(reference ("house" "2nd floor"))`, `house/"2nd floor"`},
		{`(reference-list /"Living room"/3/lamp)`, `("Living room" 3 "lamp")`},
		{`(reference-list house/"a/b"/"x\ty")`, `("house" "a/b" "x\ty")`},
		{`(reference-list (reference ("h" "a b" 0)))`, `("h" "a b" 0)`},
		{`(set h ("Living room" => (lamp => "off") "a/b" => 4)) h/"Living room"/lamp`, `"off"`},
		{`(set h ("a/b" => 4)) h/"a/b"`, `4`},
		{`(set h ("Living room" => (lamp => "off"))) (set h/"Living room"/lamp "on") h`, `("Living room" => ("lamp" => "on"))`},
		{`(set h ("a b" => (1 2))) (set h/"a b"/1 9) h`, `("a b" => (1 9))`},
		{`(set h ("a b" => 1)) (list (exists h/"a b") (exists h/"a c"))`, `(true false)`},
		{`(set h ("a b" => 1 c => 2)) (delete h/"a b") h`, `("c" => 2)`},
		{`(set h ("a b" => 1)) (eval (reference ("h" "a b")))`, `1`},
		{`(= (quote h/"a b") (reference ("h" "a b")))`, `true`},
		{`(parse "x/\"a b\"/0")`, `x/"a b"/0`},
	})
}

func TestQuotedPathParts(t *testing.T) {
	for _, tt := range []struct {
		name string
		want []string
	}{
		{`/"Hello friend"/"John Connor"`, []string{"Hello friend", "John Connor"}},
		{`/"a b"`, []string{"a b"}},
		{`x/"a\"b"/0`, []string{"x", `a"b`, "0"}},
		{`x/"a/b"`, []string{"x", "a/b"}},
		{`x/"\u00e9t\u00e9"`, []string{"x", "été"}},
		// not paths
		{`x/"a b`, nil},
		{`x/"a"b`, nil},
		{`x/"5"`, nil},
		{`x/""`, nil},
		{`x/"a"/`, nil},
		{`x//"a"`, nil},
		{`x/a"b"`, nil},
	} {
		if got := pathOf(tt.name); !slices.Equal(got, tt.want) {
			t.Errorf("pathOf(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
