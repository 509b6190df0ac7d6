// Package suggest finds what a person probably meant: the closest of a set
// of names to a mistyped one ("adress" → "address"), for did-you-mean
// hints in error messages: inventory fields and roles, lab keys, step kinds
// and variables.
package suggest

// Closest returns the candidate within a small edit distance of s, if any:
// enough to catch typos like "pipline" or "adress" without guessing wildly.
// Case is ignored; the candidate is returned as written.
func Closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := distance(lower(s), lower(c)); d < bestD && d <= len(c)/3+1 {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
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

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
