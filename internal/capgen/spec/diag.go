package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a 1-based line and column in the spec file.
type Pos struct{ Line, Col int }

// Diagnostic is one problem found in a spec, printed like a compiler error:
// `spec/capabilities.yaml:12:5: what is wrong; what to do`.
type Diagnostic struct {
	File string
	Pos  Pos
	Msg  string // what is wrong
	Hint string // what to do; may be empty
}

func (d Diagnostic) String() string {
	s := fmt.Sprintf("%s:%d:%d: %s", d.File, d.Pos.Line, d.Pos.Col, d.Msg)
	if d.Hint != "" {
		s += "; " + d.Hint
	}
	return s
}

// Diagnostics is every problem found in a spec; as an error it prints one per line, in file
// order.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

func (ds Diagnostics) sorted() Diagnostics {
	out := append(Diagnostics(nil), ds...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Pos.Line != out[j].Pos.Line {
			return out[i].Pos.Line < out[j].Pos.Line
		}
		return out[i].Pos.Col < out[j].Pos.Col
	})
	return out
}

// suggest returns the candidate closest to got, if it is close enough to be a likely typo.
// Typos are short: long names and very long candidate lists are not searched.
func suggest(got string, candidates []string) string {
	if len(got) > 64 {
		return ""
	}
	best, bestDist := "", len(got)/2+2
	for i, c := range candidates {
		if i == 1000 {
			break
		}
		if abs(len(c)-len(got)) >= bestDist {
			continue // the distance is at least the difference in length
		}
		if d := levenshtein(got, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

func abs(n int) int { return max(n, -n) }

func didYouMean(got string, candidates []string) string {
	if s := suggest(got, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

func levenshtein(a, b string) int {
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
