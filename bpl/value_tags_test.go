package bpl

import (
	"context"
	"errors"
	"testing"

	"github.com/brain4it/kafkabpl/value"
)

// brain4it's tags for shared and cyclic lists: read, printed, round-tripped.
func TestTags(t *testing.T) {
	checkValues(t, []valueTest{
		{`(=== (<#1> 1 2 3) <@1>)`, `true`},
		{`(not (=== (1 2 "A" => (3 5)) (1 2 "A" => (3 5))))`, `true`},
		{`(string (quote (<#1> 1 <@1>)))`, `"(<#1> 1 <@1>)"`},
		{`(string (quote (<#1> 1 <@1> (<#2> x) <@2>)))`, `"(<#1> 1 <@1> (<#2> x) <@2>)"`},
		{`(set c (list 1 2)) (string (list c c))`, `"((<#1> 1 2) <@1>)"`},
		{`(set c (list)) (string (list c "k" => c))`, `"((<#1>) \"k\" => <@1>)"`},
		// not shared: no tags
		{`(string (list (list 1) (list 1)))`, `"((1) (1))"`},
		// a round trip keeps the structure
		{`(set b (parse (string (quote (<#1> 1 <@1> (<#2> x) <@2>))))) (list (=== b (get b 1)) (=== (get b 2) (get b 3)) (size b))`, `(true true 4)`},
		{`(set b (parse "((<#1> 8 9) <@1>)")) (push (get b 0) 10) (get b 1)`, `(8 9 10)`},
		// structure tags are read for their data tag
		{`(set b (parse "((<#1> 8 \"n\" => 1) (<#2:1> 8 \"n\" => 2) <@2> (<#:1> 8 \"n\" => 0))")) (list (=== (get b 1) (get b 2)) (size b))`, `(true 4)`},
		{`(string (parse "((<#1> 8 \"n\" => 1) (<#2:1> 8 \"n\" => 2) <@2>)"))`, `"((8 \"n\" => 1) (<#1> 8 \"n\" => 2) <@1>)"`},
		// printing a cyclic list ends, as do comparing and cloning it
		{`(set a (quote (<#1> 1 <@1>))) (print a) (== a (quote (<#2> 1 <@2>)))`, `true`},
		{`(set a (quote (<#1> 1 <@1>))) (size (clone a true))`, `2`},
		{`(set a (quote (<#1> 1 <@1>))) (match a (quote (1 x?)))`, `true`},
		{`(set a (quote (<#1> 1 <@1>))) (match a (quote (2)))`, `false`},
		{`(set a (quote (<#1> 1 (<#2> <@1>)))) (string (get a 1))`, `"(<#1> (1 <@1>))"`},
	})
	checkErrors(t, []errorTest{
		{`(parse "(<@3>)")`, "InvalidArgument", "link tag <@3> names no list tagged <#3> before it", 1},
		{`(parse "(1 <#3>)")`, "InvalidArgument", "declaration tag <#3> is not the first element of its list", 1},
		{`(string (quote (<#1> 1 <@1>)) format => "json")`, "InvalidArgument", "a list that contains itself cannot be written in JSON", 1},
		{`(match (1) (quote (<#1> 1 <@1>)))`, "InvalidArgument", "match: the pattern is a list that contains itself", 1},
		{`(merge (quote (<#1> 1 <@1>)) ())`, "InvalidArgument", "merge: the list contains itself", 1},
	})
}

func TestTagsRun(t *testing.T) {
	in := New(nil)
	in.Define("lib", func(context.Context, *value.List) (any, error) { return "called", nil })
	_, _, err := run(t, in, "(print 1)\n(print (<@1>))")
	var syn *value.SyntaxError
	if !errors.As(err, &syn) || syn.Line != 2 {
		t.Errorf("a link to no list: %v, want a SyntaxError on line 2", err)
	}
	// a library function, whose printer would not end, cannot take a cyclic list
	_, _, err = run(t, in, `(lib (quote (<#1> 1 <@1>)))`)
	var e *Exception
	if !errors.As(err, &e) || e.Type != "InvalidArgument" {
		t.Errorf("a cyclic list to a library function: %v, want InvalidArgument", err)
	}
	got, _, err := run(t, in, `(set s (list 1)) (lib (list s s))`)
	if err != nil || got != `"called"` {
		t.Errorf("a shared, not cyclic, list to a library function: %s, %v", got, err)
	}
	// Run hands a shared list to its callback as text with tags
	var last any
	if err := in.Run(context.Background(), "t", `(quote (<#1> 1 <@1>))`, func(v any) { last = v }); err != nil {
		t.Fatal(err)
	}
	if s := value.Format(last); s != "(<#1> 1 <@1>)" {
		t.Errorf("callback value prints %s", s)
	}
}
