package value

import (
	"bytes"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
)

// List is the BPL list: an ordered sequence of values, each of which may
// carry a string name, as in ("group" => "g1" "servers" => ("a:9092")).
//
// Names need not be unique. Appending a named element never replaces or
// drops another one, so two messages with the same key stay two elements;
// lookup by name returns the first match. The empty name means "unnamed".
//
// Elements are BPL values: nil, bool, int64, float64, string, []byte, *List
// or a [Callable]. The zero List is empty and ready to use; a nil *List
// reads as empty. A List is not safe for concurrent mutation.
type List struct {
	values []any
	names  []string // nil until the first named element; "" = unnamed

	// byName finds the first element of each name, so that a script
	// that builds a long named list with put (a kafka-send's messages,
	// named by key) does not search the list at every put. Put makes it
	// once the list has more than indexFrom elements; appends keep it,
	// and anything that moves or renames elements drops it. Only changes
	// make it, so that reading a list from several goroutines stays safe.
	byName *nameIndex

	// tagged is whether Parse read the list with one of brain4it's
	// declaration tags, or MarkShared marked it (see tags.go): it is
	// shared on purpose, and may contain itself.
	tagged bool

	// sharedNames is set when names is shared with other lists (see
	// ResetShared): a change of a name in place copies it first, and an
	// append never writes into it (its capacity is its length).
	sharedNames bool
}

// indexFrom is the length from which Put indexes a list's names: below
// it, a search is as quick as a map.
const indexFrom = 32

// Reference is a BPL reference (a symbol) as the reader reads it: a name
// such as x or kafka-send, or a path such as a/b/0. An evaluator looks it up;
// as data it prints as its bare text.
type Reference string

// NewList returns a list of the given unnamed values.
func NewList(values ...any) *List {
	return &List{values: values}
}

// ListOf returns a list of values named by names, for code that builds a
// list's slices itself (a decoder, a poll). The list takes both slices:
// the caller must not change them afterwards. names is nil when no element
// is named, else as long as values ("" for an unnamed element); ListOf
// panics otherwise.
func ListOf(values []any, names []string) *List {
	l := &List{}
	l.Reset(values, names)
	return l
}

// Reset makes l hold values named by names, as [ListOf] does, dropping
// what it held: for a List that lives inside a larger allocation.
func (l *List) Reset(values []any, names []string) {
	if names != nil && len(names) != len(values) {
		panic("value: ListOf or Reset with " + strconv.Itoa(len(names)) + " names for " + strconv.Itoa(len(values)) + " values")
	}
	*l = List{values: values, names: names}
}

// ResetShared is [List.Reset] with names that many lists share, as a
// decoder's lists of one shape may (a stream's record lists): l copies
// them before it changes a name in place, and an append to l never writes
// into them. The caller must never change names afterwards.
func (l *List) ResetShared(values []any, names []string) {
	l.Reset(values, names[:len(names):len(names)])
	l.sharedNames = names != nil
}

// ownNames makes l's names its own before a change in place.
func (l *List) ownNames() {
	if l.sharedNames {
		l.names, l.sharedNames = slices.Clone(l.names), false
	}
}

// Grow makes room for n more elements, so that the next n appends do not
// allocate.
func (l *List) Grow(n int) {
	l.values = slices.Grow(l.values, n)
	if l.names != nil {
		l.names = slices.Grow(l.names, n)
	}
}

// Tagged reports whether [Parse] read l with one of brain4it's declaration
// tags, (<#1> ...), or a runtime marked it so ([List.MarkShared]): such a
// list is meant to be shared where its links (<@1>) appear, and may
// contain itself.
func (l *List) Tagged() bool { return l != nil && l.tagged }

// Len returns the number of elements.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.values)
}

// At returns the element at index i. It panics if i is out of range, like
// a slice index.
func (l *List) At(i int) any { return l.values[i] }

// Name returns the name of the element at index i, or "" when it has none.
func (l *List) Name(i int) string {
	if l != nil && i < len(l.names) {
		return l.names[i]
	}
	return ""
}

// Get returns the value of the first element named name.
func (l *List) Get(name string) (any, bool) {
	if i := l.Index(name); i >= 0 {
		return l.values[i], true
	}
	return nil, false
}

// Index returns the index of the first element named name, or -1.
func (l *List) Index(name string) int {
	if l == nil || name == "" {
		return -1
	}
	if l.byName != nil {
		return l.byName.find(l.names, name)
	}
	for i, n := range l.names {
		if n == name {
			return i
		}
	}
	return -1
}

// Append adds an unnamed element and returns l.
func (l *List) Append(v any) *List {
	l.values = append(l.values, v)
	if l.names != nil {
		l.names = append(l.names, "")
	}
	return l
}

// AppendNamed adds an element named name (unnamed when name is "") and
// returns l. An element with the same name that is already there stays.
func (l *List) AppendNamed(name string, v any) *List {
	if name != "" && l.names == nil {
		l.names = make([]string, len(l.values), cap(l.values))
	}
	l.values = append(l.values, v)
	if l.names != nil {
		l.names = append(l.names, name)
	}
	if l.byName != nil && name != "" {
		l.byName.add(l.names, name, len(l.names)-1)
	}
	return l
}

// Set replaces the value at index i, keeping its name. It panics if i is
// out of range.
func (l *List) Set(i int, v any) { l.values[i] = v }

// Put sets the value of the first element named name, appending a named
// element when there is none, and returns the value it replaced (nil when
// it appended).
func (l *List) Put(name string, v any) (old any) {
	if l.byName == nil && len(l.names) > indexFrom {
		l.byName = newNameIndex(l.names)
	}
	if i := l.Index(name); i >= 0 {
		old, l.values[i] = l.values[i], v
		return old
	}
	l.AppendNamed(name, v)
	return nil
}

// Insert puts an element named name (unnamed when name is "") at index i,
// moving the elements from i on one place up; i == Len() appends. It panics
// if i is out of range, like a slice index.
func (l *List) Insert(i int, name string, v any) {
	if i == len(l.values) {
		l.AppendNamed(name, v)
		return
	}
	_ = l.values[i] // the range check, before anything changes
	l.byName = nil
	l.ownNames()
	if name != "" && l.names == nil {
		l.names = make([]string, len(l.values), cap(l.values))
	}
	l.values = slices.Insert(l.values, i, v)
	if l.names != nil {
		l.names = slices.Insert(l.names, i, name)
	}
}

// Remove deletes the element at index i, moving the later ones one place
// down. It panics if i is out of range.
func (l *List) Remove(i int) {
	l.values = slices.Delete(l.values, i, i+1)
	l.byName = nil
	l.ownNames()
	if l.names != nil {
		l.names = slices.Delete(l.names, i, i+1)
	}
}

// SetName names the element at index i ("" makes it unnamed). It panics if
// i is out of range.
func (l *List) SetName(i int, name string) {
	_ = l.values[i]
	l.byName = nil
	l.ownNames()
	if l.names == nil {
		if name == "" {
			return
		}
		l.names = make([]string, len(l.values), cap(l.values))
	}
	l.names[i] = name
}

// Clear removes every element.
func (l *List) Clear() {
	clear(l.values)
	l.values, l.names, l.byName, l.sharedNames = l.values[:0], nil, nil, false
}

// Named reports whether any element carries a name.
func (l *List) Named() bool {
	if l == nil {
		return false
	}
	for _, n := range l.names {
		if n != "" {
			return true
		}
	}
	return false
}

// All iterates over the elements in order, yielding each name ("" when
// unnamed) and value.
func (l *List) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for i := range l.Len() {
			if !yield(l.Name(i), l.values[i]) {
				return
			}
		}
	}
}

// Values returns the elements' values as a slice; the caller may keep it
// but must not modify it.
func (l *List) Values() []any {
	if l == nil {
		return nil
	}
	return l.values
}

// Names returns the elements' names as a slice, "" for an unnamed one, or
// nil when no element was ever named; the caller may keep it but must not
// modify it.
func (l *List) Names() []string {
	if l == nil {
		return nil
	}
	return l.names
}

// String returns the list in canonical BPL text, as [Format] prints it.
func (l *List) String() string { return Format(l) }

// Equal reports whether l and o hold the same names and values, in order.
// Values compare by Go type and content: int64(1) and float64(1) differ.
// Lists that contain themselves (read with brain4it's tags, or marked
// with MarkShared) compare and end.
func (l *List) Equal(o *List) bool { return l.equal(o, nil) }

// pair is two lists being compared.
type pair struct{ a, b *List }

// equal is Equal; seen holds the pairs of tagged lists being compared, so
// that a cycle is compared once.
func (l *List) equal(o *List, seen map[pair]bool) bool {
	if l.Len() != o.Len() {
		return false
	}
	if l.Tagged() || o.Tagged() {
		if seen[pair{l, o}] {
			return true
		}
		if seen == nil {
			seen = map[pair]bool{}
		}
		seen[pair{l, o}] = true
	}
	for i := range l.Len() {
		if l.Name(i) != o.Name(i) || !equalValues(l.values[i], o.values[i], seen) {
			return false
		}
	}
	return true
}

func equalValues(a, b any, seen map[pair]bool) bool {
	switch a := a.(type) {
	case *List:
		b, ok := b.(*List)
		return ok && a.equal(b, seen)
	case []byte:
		b, ok := b.([]byte)
		return ok && bytes.Equal(a, b)
	case float64:
		b, ok := b.(float64)
		return ok && (a == b || a != a && b != b) // NaN equals NaN here
	case nil, bool, int64, string, Reference:
		return a == b
	}
	return false // functions and foreign values are never equal
}

// FromGo converts a Go input into a BPL value: BPL values pass through;
// int, int32, float32 and the other sized numbers widen to int64 or
// float64; []any and []string become lists; map[string]any becomes a
// named list in sorted key order. Anything else, and an unsigned number
// above math.MaxInt64, is an error wrapping [ErrInvalidArgument].
func FromGo(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, int64, float64, string, []byte, *List, Callable, Reference:
		return v, nil
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint:
		if uint64(v) > math.MaxInt64 {
			return nil, fmt.Errorf("%w: %d does not fit in int64", ErrInvalidArgument, v)
		}
		return int64(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("%w: %d does not fit in int64", ErrInvalidArgument, v)
		}
		return int64(v), nil
	case float32:
		return float64(v), nil
	case []string:
		l := &List{values: make([]any, len(v))}
		for i, s := range v {
			l.values[i] = s
		}
		return l, nil
	case []any:
		l := &List{values: make([]any, len(v))}
		for i, e := range v {
			bv, err := FromGo(e)
			if err != nil {
				return nil, err
			}
			l.values[i] = bv
		}
		return l, nil
	case map[string]any:
		l := &List{}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			bv, err := FromGo(v[k])
			if err != nil {
				return nil, err
			}
			l.AppendNamed(k, bv)
		}
		return l, nil
	}
	return nil, fmt.Errorf("%w: unsupported Go type %T", ErrInvalidArgument, v)
}
