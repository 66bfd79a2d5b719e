package bpl

import "sync/atomic"

// The global scope's variables, read and set by name, and the cache that
// lets a compiled reference skip the search by name.

// globalCache remembers where a compiled reference (x, or (set x ...))
// found its global variable in the scope list, so that a read or a set is
// an index rather than a search by name. A hit holds while the scope's
// layout is unchanged: in.layout counts the changes that move or remove
// variables, so a stale hit is never used. Its pointer is atomic because
// the code that holds it runs on any number of tasks at once.
type globalCache struct{ hit atomic.Pointer[globalHit] }

// globalHit is where a variable was: index i of in's scope list (-1: not
// set) while in.layout is layout.
type globalHit struct {
	in     *Interp
	layout uint64
	i      int
}

// holds reports whether the hit's index is in the scope list: always,
// while the layout is the hit's; checked anyway, so that a change to the
// scope list that forgot to count in in.layout costs a wrong variable
// (which TestGlobalCache would catch), never an index out of range.
func (h *globalHit) holds() bool { return h.i < h.in.globals.Len() }

// lookup returns the hit for name, searching the scope again when the
// cached one is stale. in.mu is held, for reading at least.
func (c *globalCache) lookup(in *Interp, name string) *globalHit {
	h := c.hit.Load()
	if h == nil || h.in != in || h.layout != in.layout || !h.holds() {
		h = &globalHit{in: in, layout: in.layout, i: in.globals.Index(name)}
		c.hit.Store(h)
	}
	return h
}

// SetGlobal sets a global variable; v should be a BPL value (nil, bool,
// int64, float64, string, []byte, *value.List or a function).
func (in *Interp) SetGlobal(name string, v any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.putGlobal(name, v)
}

func (in *Interp) global(name string) (any, bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	return in.globals.Get(name)
}

// cachedGlobal is global for a compiled reference with its cache.
func (in *Interp) cachedGlobal(name string, c *globalCache) (any, bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	if h := c.lookup(in, name); h.i >= 0 {
		return in.globals.At(h.i), true
	}
	return nil, false
}

// setCachedGlobal is SetGlobal for a compiled (set x ...) with its cache.
func (in *Interp) setCachedGlobal(name string, v any, c *globalCache) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if h := c.lookup(in, name); h.i >= 0 {
		in.globals.Set(h.i, v)
		return
	}
	in.putGlobal(name, v)
}

// putGlobal sets a global variable and returns its old value (nil when it
// was not set). in.mu is held for writing.
func (in *Interp) putGlobal(name string, v any) (old any) {
	n := in.globals.Len()
	old = in.globals.Put(name, v)
	if in.globals.Len() != n {
		in.layout++
	}
	return old
}

// removeGlobal removes the scope list's element i and returns its value.
// in.mu is held for writing.
func (in *Interp) removeGlobal(i int) (old any) {
	old = in.globals.At(i)
	in.globals.Remove(i)
	in.layout++
	return old
}
