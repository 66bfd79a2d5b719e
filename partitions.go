package kafkabpl

import (
	"maps"
	"slices"
)

// partitions holds a value for each of some partitions, by topic: the
// consumer's per-partition state (what the group assigned, where a
// partition starts, seeks waiting for an assignment, ...). A topic may be
// present with no partitions; the consumer's start offsets use that for
// "known, and read from its beginning".
type partitions[V any] map[string]map[int32]V

// set stores v for partition p of topic t.
func (m partitions[V]) set(t string, p int32, v V) {
	if m[t] == nil {
		m[t] = map[int32]V{}
	}
	m[t][p] = v
}

// has reports whether partition p of topic t is there.
func (m partitions[V]) has(t string, p int32) bool {
	_, ok := m[t][p]
	return ok
}

// removeIf deletes the partitions for which is returns true, and the
// topics it leaves with none, and returns what it deleted in the form kgo
// takes (nil when nothing).
func (m partitions[V]) removeIf(is func(t string, p int32) bool) map[string][]int32 {
	var removed map[string][]int32
	for t, ps := range m {
		for p := range ps {
			if is(t, p) {
				delete(ps, p)
				if removed == nil {
					removed = map[string][]int32{}
				}
				removed[t] = append(removed[t], p)
			}
		}
		if len(ps) == 0 && removed[t] != nil {
			delete(m, t)
		}
	}
	return removed
}

// sorted returns the topics in order, each with its partitions in order.
func (m partitions[V]) sorted() []TopicPartitions {
	out := make([]TopicPartitions, 0, len(m))
	for _, t := range slices.Sorted(maps.Keys(m)) {
		out = append(out, TopicPartitions{t, slices.Sorted(maps.Keys(m[t]))})
	}
	return out
}
