package box

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"testing"
)

func TestInPlace(t *testing.T) {
	const n = 1000
	strs := make([]string, n)
	vals := make([]any, n)
	for i := range strs {
		strs[i] = "value-" + strconv.Itoa(i)
		InPlace(&vals[i], &strs[i])
	}
	strs = nil   // only the interfaces keep the strings alive now
	runtime.GC() // a collection must neither free nor move what they point at
	runtime.GC()
	seen := map[any]int{}
	for i, v := range vals {
		want := "value-" + strconv.Itoa(i)
		s, ok := v.(string)
		if !ok || s != want {
			t.Fatalf("vals[%d] = %#v (%T), want %q", i, v, v, want)
		}
		if v != any(want) || fmt.Sprint(v) != want || reflect.ValueOf(v).String() != want {
			t.Fatalf("vals[%d] does not behave as the string %q", i, want)
		}
		seen[v] = i // hashing an interface hashes the string
	}
	if seen[any("value-7")] != 7 || len(seen) != n {
		t.Fatalf("as map keys: %d keys, value-7 -> %d", len(seen), seen[any("value-7")])
	}
	var v any = 5
	InPlace(&v, new("replaced"))
	if v != any("replaced") {
		t.Fatalf("overwriting an int: %#v", v)
	}
}

func TestTextArena(t *testing.T) {
	src := []byte("abcdef")
	a := NewTextArena(4)
	ab, empty, cd := a.Text(src[:2]), a.Text(nil), a.Text(src[2:4])
	over := a.Text(src) // beyond the size given: copied on its own
	src[0], src[2] = 'X', 'X'
	if ab != "ab" || empty != "" || cd != "cd" || over != "abcdef" {
		t.Fatalf("got %q %q %q %q: the strings must be copies", ab, empty, cd, over)
	}
}

func TestText(t *testing.T) {
	const n = 1000
	vals := make([]any, n)
	for i := range n {
		b := []byte("value-" + strconv.Itoa(i))
		vals[i] = Text(b)
		b[0] = '#' // the copy is the text's own
	}
	runtime.GC() // a collection must neither free nor move what they point at
	runtime.GC()
	for i := range n {
		if want := "value-" + strconv.Itoa(i); vals[i] != any(want) || fmt.Sprint(vals[i]) != want {
			t.Fatalf("%d: %#v", i, vals[i])
		}
	}
	if v := Text(nil); v != any("") {
		t.Fatalf("empty: %#v", v)
	}
	if allocs := testing.AllocsPerRun(100, func() { Text([]byte("a value of some length")) }); allocs != 1 {
		t.Fatalf("Text: %.0f allocations, want 1", allocs)
	}
}

func TestBoxArena(t *testing.T) {
	const n = 1000
	src := make([][]byte, n)
	size := 0
	for i := range src {
		src[i] = []byte("value-" + strconv.Itoa(i))
		size += len(src[i]) + len("key")
	}
	a := NewBoxArena(n, size)
	keys, vals := make([]string, n), make([]any, n)
	for i := range n {
		keys[i], vals[i] = a.Text([]byte("key")), a.Box(src[i])
		src[i][0] = '#' // the copies are the arena's own
	}
	a = TextArena{} // only the strings and interfaces keep the arena alive now
	runtime.GC()    // a collection must neither free nor move what they point at
	runtime.GC()
	for i := range n {
		want := "value-" + strconv.Itoa(i)
		if vals[i] != any(want) || fmt.Sprint(vals[i]) != want || reflect.ValueOf(vals[i]).String() != want || keys[i] != "key" {
			t.Fatalf("%d: %q => %#v, want key => %q", i, keys[i], vals[i], want)
		}
	}
	// One value kept alone, everything else dropped: it keeps the arena.
	kept := vals[n-1]
	clear(vals)
	clear(keys)
	runtime.GC()
	if kept != any("value-999") {
		t.Fatalf("kept: %#v", kept)
	}
	// Boxing n texts into an arena sized for them is one allocation;
	// empty text is "", and a text past the headers sized is still right.
	text := []byte("some text")
	if allocs := testing.AllocsPerRun(100, func() {
		a := NewBoxArena(n, n*len(text))
		for range n {
			a.Box(text)
		}
	}); allocs != 1 {
		t.Fatalf("%d boxes: %.0f allocations, want 1", n, allocs)
	}
	small := NewBoxArena(1, 2)
	if v, w, e := small.Box([]byte("ab")), small.Box([]byte("cd")), small.Box(nil); v != any("ab") || w != any("cd") || e != any("") {
		t.Fatalf("past the room sized: %#v %#v %#v", v, w, e)
	}
	if none := NewBoxArena(0, 0); none.Box([]byte("x")) != any("x") || none.Text([]byte("y")) != "y" {
		t.Fatal("an arena sized for nothing")
	}
}
