package value

import (
	"sync"
	"sync/atomic"
)

// Source makes the elements of a list built as they are first read (see
// [Lazy]).
type Source interface {
	// Element returns the value of element i and its name ("" for none).
	// It is called at most once per element, never for two elements at
	// once, and never after [List.Load] has returned.
	Element(i int) (v any, name string)
}

// lazyState is what a list built on first read keeps beside its
// elements: which are made, and the source of the others. made and done
// are read without mu, so that reading made elements, from any number of
// goroutines, costs an atomic load each; making one takes mu.
type lazyState struct {
	mu   sync.Mutex
	src  Source // nil once every element is made
	made []atomic.Bool
	done atomic.Bool // every element made, src dropped
}

// LazyList returns a list of n elements that src makes as each is first read:
// a kafka-poll's messages, whose text is copied out of the fetched records
// only for the messages a script reads. named says whether the list has a
// slice of names ([List.Names] is not nil), as a list built at once would
// have: true when some element may be named.
//
// Every method sees the list as if it had been built at once: those that
// read one element (At, Name) make that one; those that look for a name
// (Get, Index, Named) make the elements up to the one they find; those
// that read all (Values, Names, All, Equal, Format) and every change make
// them all. Reading it from several goroutines stays safe, as for any
// list. [List.Load] makes the rest at once and drops src, for a caller
// that must stop src's memory being held (a poll's records, at the next
// poll).
func LazyList(n int, named bool, src Source) *List {
	one := &struct {
		l List
		z lazyState
	}{}
	one.z.src, one.z.made = src, make([]atomic.Bool, n)
	one.l.values = make([]any, n)
	if named {
		one.l.names = make([]string, n)
	}
	one.l.lazy = &one.z
	if n == 0 {
		one.z.src = nil
		one.z.done.Store(true)
	}
	return &one.l
}

// load makes element i, if l is built on first read and i is not made
// yet.
func (l *List) load(i int) {
	if z := l.lazy; z != nil && !z.done.Load() && !z.made[i].Load() {
		z.make(l, i)
	}
}

// make makes element i, unless another goroutine made it meanwhile.
func (z *lazyState) make(l *List, i int) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.done.Load() || z.made[i].Load() {
		return
	}
	z.fill(l, i)
}

// fill makes element i; z.mu is held.
func (z *lazyState) fill(l *List, i int) {
	v, name := z.src.Element(i)
	l.values[i] = v
	if name != "" {
		l.names[i] = name // a Source names elements only in a named list
	}
	z.made[i].Store(true)
}

// Load makes every element of a list built on first read ([LazyList]) that
// is not made yet, and drops its source, so that the list no longer holds
// what the source held. It does nothing for other lists. It is safe to
// call while other goroutines read the list.
func (l *List) Load() {
	if l == nil || l.lazy == nil || l.lazy.done.Load() {
		return
	}
	z := l.lazy
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.done.Load() {
		return
	}
	for i := range z.made {
		if !z.made[i].Load() {
			z.fill(l, i)
		}
	}
	z.src = nil
	z.done.Store(true)
}
