package kafkabpl

import (
	"fmt"
	"math"

	"github.com/brain4it/kafkabpl/value"
)

// The wording of error messages, in one place: how a value is shown, how a
// misspelled name is corrected, and how a number is read as an integer.

// typeName names a BPL value's type for messages that must not show it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	case string:
		return "string"
	case []byte:
		return "byte array"
	case *value.List:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}

// suggest returns ` (did you mean "x"?)` for the one of names closest to
// name, or "" when none is close.
func suggest(name string, names []string) string {
	if best, ok := closest(name, names); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// closest returns the first of names at the smallest edit distance from
// name, if that distance is small for name's length.
func closest(name string, names []string) (string, bool) {
	limit := max(2, len(name)/3)
	best, bestDist := "", math.MaxInt
	for _, n := range names {
		// The distance is at least the difference in length; skipping
		// those keeps a very long unknown name from costing quadratic
		// time.
		if abs(len(name)-len(n)) > limit {
			continue
		}
		if d := editDistance(name, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best, bestDist <= limit
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// integral returns f as an int64 when it is a whole number an int64 holds.
func integral(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}
