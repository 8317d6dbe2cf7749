package httpx

import "unicode"

// minFold returns the smallest rune in r's simple case-folding orbit.
func minFold(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return m
}
