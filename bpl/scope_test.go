package bpl

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestScope checks a scope against a map through random sets, gets and
// deletes of a dozen names, so that both the inline variables and the map
// beyond them, and their boundary (a deletion freeing an inline place
// while the map holds others), are exercised.
func TestScope(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var s scope
	ref := map[string]any{}
	for step := range 20000 {
		name := fmt.Sprint("v", rng.IntN(12))
		switch rng.IntN(3) {
		case 0:
			s.set(name, step)
			ref[name] = step
		case 1:
			_, had := ref[name]
			delete(ref, name)
			if got := s.del(name); got != had {
				t.Fatalf("step %d: del(%s) = %v, want %v", step, name, got, had)
			}
		}
		for k := range 12 {
			n := fmt.Sprint("v", k)
			got, ok := s.get(n)
			want, wok := ref[n]
			if ok != wok || got != want {
				t.Fatalf("step %d: get(%s) = %v %v, want %v %v", step, n, got, ok, want, wok)
			}
		}
		var names []string
		for n, v := range s.all() {
			if v != ref[n] {
				t.Fatalf("step %d: all gives %s = %v, want %v", step, n, v, ref[n])
			}
			names = append(names, n)
		}
		slices.Sort(names)
		if want := slices.Sorted(maps.Keys(ref)); !slices.Equal(names, want) || s.len() != len(ref) {
			t.Fatalf("step %d: names %v (len %d), want %v", step, names, s.len(), want)
		}
	}
}
