package value

import "hash/maphash"

// nameIndex finds the first element of a name in a long named list: an
// open-addressed table of element indexes, hashed by name, that holds no
// copy of the names (it reads them from the list). A script that builds a
// kafka-send's 1,000 messages with put looks up each new name once and
// adds it once; a table of int32 is a fifth of a map[string]int's memory
// and its growth, which the garbage collector would otherwise scan.
type nameIndex struct {
	slots []int32 // an element's index + 1; 0 is an empty slot
	count int     // names held
}

// nameSeed hashes the names of every list: a per-process random seed, so
// that no input can be built to collide on purpose.
var nameSeed = maphash.MakeSeed()

// newNameIndex indexes the first element of each name of names.
func newNameIndex(names []string) *nameIndex {
	x := &nameIndex{}
	x.rebuild(names, len(names))
	return x
}

// rebuild makes a table with room for want names and adds each first
// occurrence in names.
func (x *nameIndex) rebuild(names []string, want int) {
	size := 16
	for size < 2*want { // at most half full, so that probes stay short
		size *= 2
	}
	x.slots, x.count = make([]int32, size), 0
	for i, n := range names {
		if n != "" {
			x.add(names, n, i)
		}
	}
}

// find returns the index of the first element named name, or -1.
func (x *nameIndex) find(names []string, name string) int {
	mask := uint64(len(x.slots) - 1)
	for h := maphash.String(nameSeed, name) & mask; ; h = (h + 1) & mask {
		s := x.slots[h]
		if s == 0 {
			return -1
		}
		if names[s-1] == name {
			return int(s - 1)
		}
	}
}

// add indexes element i, named name, unless an earlier element has the
// name. names must hold element i.
func (x *nameIndex) add(names []string, name string, i int) {
	if 2*(x.count+1) > len(x.slots) {
		x.rebuild(names[:i], 2*(x.count+1)) // element i is added below
	}
	mask := uint64(len(x.slots) - 1)
	for h := maphash.String(nameSeed, name) & mask; ; h = (h + 1) & mask {
		s := x.slots[h]
		if s == 0 {
			x.slots[h] = int32(i + 1)
			x.count++
			return
		}
		if names[s-1] == name {
			return // the first element of the name is indexed already
		}
	}
}
