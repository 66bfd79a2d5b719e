// Package lazyarg lets the library hand a BPL function an argument that
// is made only if the function reads it: a windowed count's aggregate,
// (function (in acc) (+ acc 1)), never reads its input, whose record
// list costs more to build than the call.
//
// The library passes a *Value only to a callee that Accepts says takes
// one; package bpl sets Accepts, and its scopes make the value the first
// time a variable bound to it is read, so that no script can see a
// *Value.
package lazyarg

// Value is an argument made when first read: Make(Arg).
type Value struct {
	Make func(arg any) any
	Arg  any
}

// Accepts reports whether callee takes a *Value for an argument; nil
// (package bpl not linked in) takes none.
var Accepts func(callee any) bool
