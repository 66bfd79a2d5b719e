package kafkabpl

import "unsafe"

// eface is the layout of an interface value with no methods (any): its
// dynamic type, and a pointer to the value.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// typeWord is the dynamic-type word of any(*new(T)).
func typeWord[T any]() unsafe.Pointer {
	var proto any = *new(T) // a zero value: converting it does not allocate
	return (*eface)(unsafe.Pointer(&proto)).typ
}

var (
	stringType = typeWord[string]()
	int64Type  = typeWord[int64]()
)

// boxInt64 is boxString for an int64 (Go boxes only 0 to 255 without
// allocating).
func boxInt64(dst *any, v *int64) {
	*(*eface)(unsafe.Pointer(dst)) = eface{typ: int64Type, data: unsafe.Pointer(v)}
}

// boxString sets *dst to the string *s as an interface value, without the
// allocation that the conversion any(*s) makes (Go copies a string header
// to the heap to put it in an interface). The interface points at *s
// itself, so a caller that makes many values keeps their headers in one
// slice and pays one allocation for all: a poll of n messages, or the keys
// of a send, would otherwise allocate n times.
//
// Hazard: *s must never be assigned again, since the interface shares it
// (Go never writes through an interface, so the interface itself cannot
// change it). The slice holding *s stays alive as long as any interface
// points into it.
func boxString(dst *any, s *string) {
	*(*eface)(unsafe.Pointer(dst)) = eface{typ: stringType, data: unsafe.Pointer(s)}
}

// textArena makes strings from byte slices by copying them into one buffer
// allocated up front, instead of one allocation per string. The buffer
// never grows (the caller sizes it), so the strings stay valid and
// unchanged for as long as any of them is reachable.
type textArena struct{ buf []byte }

func newTextArena(size int) textArena { return textArena{make([]byte, 0, size)} }

// text copies b into the arena and returns it as a string. b must fit in
// the room left, as sized by the caller.
func (a *textArena) text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	start := len(a.buf)
	if len(b) > cap(a.buf)-start {
		return string(b) // not sized for it: never the case, but never wrong
	}
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[start], len(b))
}
