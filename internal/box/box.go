// Package box makes interface values and strings without an allocation
// each, for the lists of a poll and the keys of a send, which make one per
// message otherwise, and the evaluator's text of a number. Its functions
// use package unsafe; their hazards are said with each. It is internal:
// packages kafkabpl, functions and bpl share it.
package box

import "unsafe"

// eface is the layout of an interface value with no methods (any): its
// dynamic type, and a pointer to the value.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// InPlace sets *dst to the value *v as an interface value, without the
// allocation that the conversion any(*v) makes (Go copies a string header,
// or an int64 above 255, to the heap to put it in an interface). The
// interface points at *v itself, so a caller that makes many values keeps
// them in one slice or struct and pays one allocation for all: a poll of n
// messages, or the keys of a send, would otherwise allocate n times. T is
// limited to types an interface holds by pointer.
//
// Hazard: *v must never be assigned again, since the interface shares it
// (Go never writes through an interface, so the interface itself cannot
// change it). What holds *v stays alive as long as any interface points
// into it.
func InPlace[T string | int64](dst *any, v *T) {
	var proto any = *new(T) // a zero value: converting it does not allocate
	*(*eface)(unsafe.Pointer(dst)) = eface{typ: (*eface)(unsafe.Pointer(&proto)).typ, data: unsafe.Pointer(v)}
}

// TextArena makes strings from byte slices by copying them into one buffer
// allocated up front, instead of one allocation per string. The buffer
// never grows (the caller sizes it), so the strings stay valid and
// unchanged for as long as any of them is reachable. Made by
// [NewBoxArena], it also boxes them ([TextArena.Box]) without an
// allocation each: a poll's keys and values, all in one allocation.
//
// Hazard: every string an arena made keeps the whole buffer alive, its
// neighbours' text too: a caller sizes an arena for text that lives and
// dies together (one poll's messages), or says what keeping one costs.
type TextArena struct {
	buf   []byte // the text; never grows past its capacity
	heads []byte // room left for the headers of Box's strings, in the same allocation
}

// NewTextArena returns an arena with room for size bytes of text.
func NewTextArena(size int) TextArena { return TextArena{buf: make([]byte, 0, size)} }

// NewBoxArena returns an arena with room for boxes texts boxed by Box
// and size bytes of text (the boxed texts' included), in one allocation.
// Nothing is allocated when both are 0.
func NewBoxArena(boxes, size int) TextArena {
	if boxes <= 0 {
		return NewTextArena(size)
	}
	heads := boxes * textHeader
	all := make([]byte, heads+size) // 16 bytes at least: aligned for the headers (see Box)
	return TextArena{buf: all[heads:heads], heads: all[:heads:heads]}
}

// Text copies b into the arena and returns it as a string. b must fit in
// the room left, as sized by the caller.
func (a *TextArena) Text(b []byte) string {
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

// Box copies b into the arena as Text does and returns it as a string
// boxed in an interface, whose string header lives in the arena too: no
// allocation, where boxing a string takes one. Empty text is "", which
// holds nothing. When the arena has no room for another header (its
// caller sized it for fewer), Box allocates as any(string(b)) would.
//
// Hazard: the headers live in memory the garbage collector does not scan
// (a []byte); each points into the same allocation, which the interface,
// or any string taken from it, keeps alive. The arena's allocation starts
// with the headers and is at least 16 bytes, so the allocator aligns them
// for their pointers.
func (a *TextArena) Box(b []byte) any {
	if len(b) == 0 {
		return ""
	}
	if len(a.heads) < textHeader {
		return string(b)
	}
	s := (*string)(unsafe.Pointer(&a.heads[0]))
	a.heads = a.heads[textHeader:]
	*s = a.Text(b)
	var v any
	InPlace(&v, s)
	return v
}

// TextArenaOn returns an arena whose room is buf's capacity, for a caller
// that has the room inside an allocation it makes anyway. The strings
// keep that allocation alive.
func TextArenaOn(buf []byte) TextArena { return TextArena{buf: buf[:0]} }

// textHeader is the size of a string header, which Text keeps in front
// of the text it boxes, and TextArena.Box in front of its arena's text.
const textHeader = int(unsafe.Sizeof(""))

// Text copies b into an allocation of its own and returns it as a string
// boxed in an interface: one allocation, where string(b) and boxing the
// string take two. The boxed string's header lives in front of the text,
// in the same allocation, and points into it.
//
// Hazard: the allocation holds no pointer as far as the garbage collector
// knows (it is a []byte); the header's pointer points into the allocation
// itself, which the interface, or any string taken from it, keeps alive.
func Text(b []byte) (v any) {
	buf := make([]byte, textHeader+len(b))
	copy(buf[textHeader:], b)
	s := (*string)(unsafe.Pointer(&buf[0])) // aligned: the allocation is at least 16 bytes
	if len(b) > 0 {
		*s = unsafe.String(&buf[textHeader], len(b))
	}
	InPlace(&v, s)
	return v
}
