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
// allocation each: a poll's keys and values, all in one allocation. It
// keeps offsets into the buffer, not slices of it, so that filling it
// stores no pointer, which would cost a write barrier each while the
// garbage collector marks.
//
// Hazard: every string an arena made keeps the whole buffer alive, its
// neighbours' text too: a caller sizes an arena for text that lives and
// dies together (one poll's messages), or says what keeping one costs.
type TextArena struct {
	buf   []byte // the headers' room, [0, heads), then the text's
	heads int    // the end of the headers' room
	head  int    // where the next header goes
	text  int    // where the next text goes
}

// NewTextArena returns an arena with room for size bytes of text.
func NewTextArena(size int) TextArena { return TextArena{buf: make([]byte, size)} }

// NewBoxArena returns an arena with room for boxes texts boxed by Box
// and size bytes of text (the boxed texts' included), in one allocation.
// Nothing is allocated when both are 0.
func NewBoxArena(boxes, size int) TextArena {
	heads := max(boxes, 0) * textHeader
	// 16 bytes at least when there are headers: aligned for them (see Box).
	return TextArena{buf: make([]byte, heads+size), heads: heads, text: heads}
}

// TextArenaOn returns an arena whose room is buf's capacity, for a caller
// that has the room inside an allocation it makes anyway. The strings
// keep that allocation alive.
func TextArenaOn(buf []byte) TextArena { return TextArena{buf: buf[:cap(buf)]} }

// Text copies b into the arena and returns it as a string. b must fit in
// the room left, as sized by the caller.
func (a *TextArena) Text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > len(a.buf)-a.text {
		return string(b) // not sized for it: never the case, but never wrong
	}
	n := copy(a.buf[a.text:], b)
	s := unsafe.String(&a.buf[a.text], n)
	a.text += n
	return s
}

// Box copies b into the arena as Text does and returns it as a string
// boxed in an interface, whose string header lives in the arena too: no
// allocation, where boxing a string takes one. Empty text is "", which
// holds nothing. When the arena has no room for b or its header (its
// caller sized it for less), Box allocates as any(string(b)) would.
//
// Hazard: the headers live in memory the garbage collector does not scan
// (a []byte), and are written as integers, with no write barrier: each
// points into the same allocation, which the interface, or any string
// taken from it, keeps alive. The arena's allocation starts with the
// headers and is at least 16 bytes, so the allocator aligns them for
// their pointers.
func (a *TextArena) Box(b []byte) any {
	if len(b) == 0 {
		return ""
	}
	if a.head+textHeader > a.heads || len(b) > len(a.buf)-a.text {
		return string(b)
	}
	h := unsafe.Pointer(&a.buf[a.head])
	a.head += textHeader
	t := a.Text(b)
	*(*uintptr)(h) = uintptr(unsafe.Pointer(unsafe.StringData(t)))
	*(*int)(unsafe.Add(h, unsafe.Sizeof(uintptr(0)))) = len(t)
	var v any
	InPlace(&v, (*string)(h))
	return v
}

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
