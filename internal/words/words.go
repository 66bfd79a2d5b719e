// Package words holds the wording that package kafkabpl and package
// functions share in their error messages: how a misspelled name is
// corrected, and how a number is read as an integer. It is internal: the
// messages are the public packages' to word, and these are their common
// parts.
package words

import (
	"fmt"
	"math"
)

// Suggest returns ` (did you mean "x"?)` for the one of names closest to
// name, or "" when none is close.
func Suggest(name string, names []string) string {
	if best, ok := Closest(name, names); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// Closest returns the first of names at the smallest edit distance from
// name, if that distance is small for name's length.
func Closest(name string, names []string) (string, bool) {
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

// Integral returns f as an int64 when it is a whole number an int64 holds.
func Integral(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}
