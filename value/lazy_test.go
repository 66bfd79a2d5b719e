package value

import (
	"strconv"
	"testing"
)

// countingSource names element i "n<i>" and counts the calls per element.
type countingSource struct{ calls []int }

func (s *countingSource) Element(i int) (any, string) {
	s.calls[i]++
	return int64(i), "n" + strconv.Itoa(i)
}

func TestLazyListMakesOnlyWhatIsRead(t *testing.T) {
	src := &countingSource{calls: make([]int, 10)}
	l := LazyList(10, true, src)
	made := func() (n int) {
		for _, c := range src.calls {
			if c > 1 {
				t.Fatalf("an element made %d times", c)
			}
			n += c
		}
		return n
	}
	if l.Len() != 10 || made() != 0 {
		t.Fatalf("Len %d, %d made before any read", l.Len(), made())
	}
	if l.At(4) != int64(4) || l.Name(4) != "n4" || made() != 1 {
		t.Fatalf("reading element 4 made %d", made())
	}
	if v, ok := l.Get("n2"); !ok || v != int64(2) || made() != 4 {
		t.Fatalf("Get n2: %v %v, %d made, want 4 (0 to 2, and 4)", v, ok, made())
	}
	if !l.Named() || made() != 4 {
		t.Fatalf("Named made %d", made())
	}
	l.Load()
	if made() != 10 {
		t.Fatalf("Load made %d of 10", made())
	}
	l.Load()
	if made() != 10 || Format(l) != `("n0" => 0 "n1" => 1 "n2" => 2 "n3" => 3 "n4" => 4 "n5" => 5 "n6" => 6 "n7" => 7 "n8" => 8 "n9" => 9)` {
		t.Fatalf("after a second Load: %d made, %s", made(), Format(l))
	}
	empty := LazyList(0, false, src)
	if empty.Len() != 0 || Format(empty) != "()" || empty.Names() != nil {
		t.Fatalf("empty: %s", Format(empty))
	}
}

func TestLazyListChangesMakeAll(t *testing.T) {
	src := &countingSource{calls: make([]int, 3)}
	l := LazyList(3, true, src)
	l.Append("x")
	if Format(l) != `("n0" => 0 "n1" => 1 "n2" => 2 "x")` {
		t.Fatalf("after Append: %s", Format(l))
	}
	for i, c := range src.calls {
		if c != 1 {
			t.Fatalf("element %d made %d times", i, c)
		}
	}
}
