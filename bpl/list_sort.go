package bpl

import (
	"math"
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/value"
)

// The list family, continued: sort and the order it sorts by.

// listItem is an element with its name, as sort moves them.
type listItem struct {
	name string
	v    any
}

// (sort list) gives a new list of list's elements in ascending order, each
// keeping its name: numbers by value, strings (and references) by their
// UTF-16 code units, as Java orders them; a NaN is above every number.
// Other values, or a mix of kinds, cannot be ordered: an InvalidArgument
// (unless the list has fewer than two elements). (sort list function)
// orders by function instead: called with two elements, it gives a
// negative number, 0 or a positive number when the first is to come
// before, with or after the second. The sort is stable; null is the empty
// list.
func biSort(t *task, f *frame, call *value.List) (any, error) {
	if err := t.arity(f, call, 1, 2); err != nil {
		return nil, err
	}
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, err
	}
	l, err := t.listArg(f, "sort", args.At(0), true)
	if err != nil {
		return nil, err
	}
	cmp := func(a, b any) (int, error) {
		c, ok := listOrder(a, b)
		if !ok {
			return 0, t.errorf(f, "InvalidArgument", "sort: cannot compare %s with %s", value.Describe(a), value.Describe(b))
		}
		return c, nil
	}
	if args.Len() > 1 && args.At(1) != nil {
		fn, ok := args.At(1).(value.Callable)
		if !ok {
			return nil, t.errorf(f, "InvalidArgument", "sort: the comparator is %s, want a function", value.Describe(args.At(1)))
		}
		cmp = func(a, b any) (int, error) {
			r, err := t.apply(f, fn, value.NewList(a, b))
			if err != nil {
				return 0, err
			}
			switch r := r.(type) {
			case int64:
				return cmpInt(r, 0), nil
			case float64:
				if r != r {
					return 0, nil
				}
				return cmpFloat(r, 0), nil
			}
			return 0, t.errorf(f, "InvalidArgument", "sort: the comparator gave %s, want a number", value.Describe(r))
		}
	}
	items := make([]listItem, l.Len())
	for i := range items {
		items[i] = listItem{l.Name(i), l.At(i)}
	}
	if err := t.mergeSort(f, items, cmp); err != nil {
		return nil, err
	}
	out := &value.List{}
	for _, it := range items {
		out.AppendNamed(it.name, it.v)
	}
	return out, nil
}

// mergeSort sorts items stably by cmp, stopping at cmp's first error or
// when the run is cancelled. It never fails on a comparator that
// contradicts itself: the order is then merely unspecified.
func (t *task) mergeSort(f *frame, items []listItem, cmp func(a, b any) (int, error)) error {
	buf := make([]listItem, len(items))
	var sortRange func(lo, hi int) error
	sortRange = func(lo, hi int) error {
		if hi-lo < 2 {
			return nil
		}
		mid := lo + (hi-lo)/2
		if err := sortRange(lo, mid); err != nil {
			return err
		}
		if err := sortRange(mid, hi); err != nil {
			return err
		}
		copy(buf[lo:hi], items[lo:hi])
		i, j, k := lo, mid, lo
		for ; i < mid && j < hi; k++ {
			if err := t.checkCtx(f); err != nil {
				return err
			}
			c, err := cmp(buf[i].v, buf[j].v)
			if err != nil {
				return err
			}
			if c > 0 { // only a strictly smaller right element goes first: stable
				items[k] = buf[j]
				j++
			} else {
				items[k] = buf[i]
				i++
			}
		}
		k += copy(items[k:], buf[i:mid])
		copy(items[k:], buf[j:hi])
		return nil
	}
	return sortRange(0, len(items))
}

// listOrder is sort's order: -1, 0 or 1; ok is false when a and b cannot
// be ordered.
func listOrder(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpInt(x, y), true
		case float64:
			return -cmpFloatInt(y, x), true
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmpFloat(x, y), true
		case int64:
			return cmpFloatInt(x, y), true
		}
	case string:
		if y, ok := b.(string); ok {
			return cmpUTF16(x, y), true
		}
	case value.Reference:
		if y, ok := b.(value.Reference); ok {
			return cmpUTF16(string(x), string(y)), true
		}
	}
	return 0, false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat orders floats as Java's Double.compare does: -0.0 below 0.0,
// NaN above everything and equal to itself.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return cmpInt(b2i(math.Signbit(b)), b2i(math.Signbit(a)))
	case a != a && b != b:
		return 0
	case a != a:
		return 1
	}
	return -1
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// cmpFloatInt orders a float and an integer exactly (no rounding of the
// integer); NaN is above every integer.
func cmpFloatInt(x float64, y int64) int {
	switch {
	case x != x, x >= 1<<63:
		return 1
	case x < -(1 << 63):
		return -1
	}
	if c := cmpInt(int64(x), y); c != 0 { // int64(x) truncates toward 0
		return c
	}
	switch frac := x - math.Trunc(x); {
	case frac > 0:
		return 1
	case frac < 0:
		return -1
	}
	return 0
}

// cmpUTF16 compares strings by their UTF-16 code units, as Java's
// String.compareTo does: a character above U+FFFF (a surrogate pair) sorts
// below U+E000..U+FFFF.
func cmpUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ka, kb := ra, rb
			if ka > 0xFFFF && kb <= 0xFFFF {
				ka = 0xD800
			} else if kb > 0xFFFF && ka <= 0xFFFF {
				kb = 0xD800
			}
			return cmpInt(int64(ka), int64(kb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmpInt(int64(len(a)), int64(len(b)))
}
