package bpl

import "testing"

// The tests of the evaluator's fast paths (lookupBuiltin's table, ...):
// each gives what the plain way would.

// TestLookupBuiltin checks that the table finds every builtin, as the map
// does, and nothing else.
func TestLookupBuiltin(t *testing.T) {
	for name, b := range builtins {
		if got := lookupBuiltin(name); got == nil {
			t.Errorf("lookupBuiltin(%q) = nil, want %p", name, b)
		}
	}
	for _, name := range []string{"", "x", "gett", "ge", "kafka-send", "null?", "system", "acc/count"} {
		if lookupBuiltin(name) != nil {
			t.Errorf("lookupBuiltin(%q) is not nil", name)
		}
	}
}
