package value

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestListNamesRepeat(t *testing.T) {
	l := NewList("a")
	l.AppendNamed("k", int64(1)).AppendNamed("k", int64(2)).Append(nil).AppendNamed("", "unnamed")
	if l.Len() != 5 {
		t.Fatalf("Len = %d, want 5: a repeated name must not replace", l.Len())
	}
	if v, ok := l.Get("k"); !ok || v != int64(1) {
		t.Errorf("Get(k) = %v %v, want the first match", v, ok)
	}
	if l.Index("k") != 1 || l.Index("missing") != -1 || l.Index("") != -1 {
		t.Errorf("Index: %d %d %d", l.Index("k"), l.Index("missing"), l.Index(""))
	}
	names := ""
	for name := range l.All() {
		names += "[" + name + "]"
	}
	if names != "[][k][k][][]" {
		t.Errorf("names %s", names)
	}
	if got := l.String(); got != `("a" "k" => 1 "k" => 2 null "unnamed")` {
		t.Errorf("String = %s", got)
	}
	l.Put("k", int64(3))
	l.Put("new", true)
	if got := l.String(); got != `("a" "k" => 3 "k" => 2 null "unnamed" "new" => true)` {
		t.Errorf("after Put: %s", got)
	}
	l.Set(0, "b")
	if l.At(0) != "b" || l.Name(0) != "" || l.Name(99) != "" {
		t.Errorf("Set/At/Name: %v %q", l.At(0), l.Name(0))
	}
}

func TestListNilAndEmpty(t *testing.T) {
	var l *List
	if l.Len() != 0 || l.Index("x") != -1 || l.Values() != nil || l.Named() {
		t.Error("nil list is not empty")
	}
	for range l.All() {
		t.Error("nil list iterates")
	}
	var z List
	z.Append(int64(1))
	if z.String() != "(1)" {
		t.Errorf("zero list: %s", z.String())
	}
}

func TestListEqual(t *testing.T) {
	a := NewList(int64(1), "x", []byte("b"), NewList(math.NaN())).AppendNamed("n", nil)
	b := NewList(int64(1), "x", []byte("b"), NewList(math.NaN())).AppendNamed("n", nil)
	if !a.Equal(b) {
		t.Error("equal lists differ")
	}
	for _, c := range []*List{
		NewList(int64(1), "x", []byte("b"), NewList(math.NaN())).AppendNamed("m", nil),
		NewList(1.0, "x", []byte("b"), NewList(math.NaN())).AppendNamed("n", nil),
		NewList(int64(1), "x", []byte("c"), NewList(math.NaN())).AppendNamed("n", nil),
		NewList(int64(1), "x"),
	} {
		if a.Equal(c) {
			t.Errorf("%s equals %s", a, c)
		}
	}
}

func TestToValue(t *testing.T) {
	in := map[string]any{"b": []any{1, int32(2), float32(1.5), []string{"s"}}, "a": uint8(7)}
	v, err := FromGo(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := Format(v); got != `("a" => 7 "b" => (1 2 1.5 ("s")))` {
		t.Errorf("got %s", got)
	}
	for _, bad := range []any{struct{}{}, uint64(math.MaxUint64), []any{make(chan int)}, map[string]any{"x": func() {}}} {
		if _, err := FromGo(bad); err == nil {
			t.Errorf("%T converted", bad)
		}
	}
}

func TestListInsertRemoveRename(t *testing.T) {
	l := NewList(int64(1), int64(3))
	l.Insert(1, "", int64(2))
	l.Insert(0, "first", "a")
	l.Insert(l.Len(), "last", "z")
	if got := l.String(); got != `("first" => "a" 1 2 3 "last" => "z")` {
		t.Fatalf("after Insert: %s", got)
	}
	l.Remove(0)
	l.Remove(l.Len() - 1)
	if got := l.String(); got != `(1 2 3)` || l.Named() {
		t.Fatalf("after Remove: %s (named %v)", got, l.Named())
	}
	l.SetName(1, "two")
	l.SetName(0, "")
	if got := l.String(); got != `(1 "two" => 2 3)` {
		t.Fatalf("after SetName: %s", got)
	}
	l.Clear()
	if l.Len() != 0 || l.Named() || l.String() != "()" {
		t.Fatalf("after Clear: %s", l)
	}
	for name, f := range map[string]func(){
		"Insert past the end":  func() { NewList().Insert(1, "", 0) },
		"Remove of nothing":    func() { NewList().Remove(0) },
		"SetName past the end": func() { NewList(1).SetName(1, "x") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestListNameIndex checks that lookups by name find the first element of
// the name whatever changes came before, once Put has indexed the names of
// a long list: random changes on a list and on a plain reference (a search
// through its names) must agree at every step. Of 60 names, the index is
// made once and never grows; of 2,000, it grows several times, and Clear
// is rare enough for the list to get long.
func TestListNameIndex(t *testing.T) {
	for _, c := range []struct{ names, steps, clearOdds int }{{60, 20000, 50}, {2000, 8000, 5000}} {
		t.Run(fmt.Sprint(c.names, " names"), func(t *testing.T) {
			testListNameIndex(t, c.names, c.steps, c.clearOdds)
		})
	}
}

func testListNameIndex(t *testing.T, names, steps, clearOdds int) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := &List{}
	var ref []string // the names, in order; "" for unnamed
	indexed := false
	name := func() string {
		if rng.IntN(8) == 0 {
			return ""
		}
		return fmt.Sprint("n", rng.IntN(names))
	}
	for step := range steps {
		switch op := rng.IntN(10); {
		case op < 4:
			n := name()
			l.Put(n, step)
			if n == "" || !slices.Contains(ref, n) {
				ref = append(ref, n)
			}
		case op < 6:
			n := name()
			l.AppendNamed(n, step)
			ref = append(ref, n)
		case op == 6 && len(ref) > 0:
			i, n := rng.IntN(len(ref)+1), name()
			l.Insert(i, n, step)
			ref = slices.Insert(ref, i, n)
		case op == 7 && len(ref) > 0:
			i := rng.IntN(len(ref))
			l.Remove(i)
			ref = slices.Delete(ref, i, i+1)
		case op == 8 && len(ref) > 0:
			i, n := rng.IntN(len(ref)), name()
			l.SetName(i, n)
			ref[i] = n
		case op == 9 && rng.IntN(clearOdds) == 0:
			l.Clear()
			ref = nil
		}
		for k := range min(names, 60) {
			n := fmt.Sprint("n", k)
			if got, want := l.Index(n), slices.Index(ref, n); got != want {
				t.Fatalf("step %d: Index(%q) = %d, want %d", step, n, got, want)
			}
		}
		if l.Len() != len(ref) {
			t.Fatalf("step %d: %d elements, want %d", step, l.Len(), len(ref))
		}
		if l.Len() > 0 {
			n := ref[rng.IntN(len(ref))]
			if got, want := l.Index(n), slices.Index(ref, n); n != "" && got != want {
				t.Fatalf("step %d: Index(%q) = %d, want %d", step, n, got, want)
			}
		}
		indexed = indexed || l.byName != nil
	}
	if !indexed {
		t.Error("the names were never indexed: the test tests nothing")
	}
}

// TestListNameIndexGrows builds a list of 5,000 names with put, as a
// script builds a kafka-send's messages, with a second element of every
// tenth name appended: the index grows many times on the way, and must
// find the first element of each name, and no name it was never given.
func TestListNameIndexGrows(t *testing.T) {
	l := &List{}
	for i := range 5000 {
		n := fmt.Sprint(i)
		if old := l.Put(n, i); old != nil {
			t.Fatalf("Put(%q) replaced %v in a list without the name", n, old)
		}
		if i%10 == 0 {
			l.AppendNamed(n, -i) // a second element of the name: never found first
		}
	}
	if l.byName == nil || len(l.byName.slots) < 2*5000 {
		t.Fatalf("the index did not grow with the list: %v", l.byName)
	}
	want := 0
	for i := range 5000 {
		n := fmt.Sprint(i)
		if got := l.Index(n); got != want {
			t.Fatalf("Index(%q) = %d, want %d", n, got, want)
		}
		want++
		if i%10 == 0 {
			want++
		}
	}
	if old := l.Put("4321", "again"); old != 4321 {
		t.Errorf("Put of a name it has gave %v, want the old value 4321", old)
	}
	if l.Index("5000") != -1 || l.Index("x") != -1 {
		t.Error("Index found a name the list does not have")
	}
}

// TestListResetShared checks that lists sharing their names (ResetShared)
// never change each other's, or the shared slice, whatever each does: a
// rename, a removal, an insertion, appends and puts.
func TestListResetShared(t *testing.T) {
	shared := []string{"a", "b", "c"}
	lists := make([]*List, 6)
	for i := range lists {
		lists[i] = &List{}
		lists[i].ResetShared([]any{1, 2, 3}, shared)
	}
	lists[0].SetName(1, "B")
	lists[1].Remove(0)
	lists[2].Insert(1, "x", 9)
	lists[3].AppendNamed("d", 4)
	lists[4].Put("e", 5)
	lists[4].Put("a", 0)
	lists[5].Clear()
	lists[5].AppendNamed("z", 1)
	want := []string{`("a" => 1 "B" => 2 "c" => 3)`, `("b" => 2 "c" => 3)`, `("a" => 1 "x" => 9 "b" => 2 "c" => 3)`,
		`("a" => 1 "b" => 2 "c" => 3 "d" => 4)`, `("a" => 0 "b" => 2 "c" => 3 "e" => 5)`, `("z" => 1)`}
	for i, l := range lists {
		if got := Format(l); got != want[i] {
			t.Errorf("list %d: %s, want %s", i, got, want[i])
		}
	}
	if !slices.Equal(shared, []string{"a", "b", "c"}) {
		t.Errorf("the shared names became %q", shared)
	}
}
