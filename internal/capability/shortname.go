package capability

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// ShortNames implements the spec's `otherwise: short_name` rule (generated Finalize calls it
// for callers without the field's visible_with scope): each of the n names get(i) points to
// (nil pointers are skipped) becomes the first name and the initial of the last ("Ana Souza
// Lima" → "Ana L."), lengthened only as far as needed to be distinct from the others in the
// same call, which the generated code makes the list holding the field (a class's children):
//
//  1. more letters of the last name, until it differs ("Ana Li." and "Ana Lo."), up to all of it;
//  2. then the initials of the middle names ("Ana C. Lima" and "Ana M. Lima");
//  3. then, for names still alike (two children named the same), a number in list order
//     ("Ana L. 2"): the list's handles tell them apart for certain.
//
// Comparison ignores case and accents, as a person reading the list would. A one-word name
// stays as it is. The rule is deterministic for a given list, so a label read from one call
// resolves to the same child in the next (ResolveLabel relies on it).
func ShortNames(n int, get func(int) *string) {
	type entry struct {
		p             *string
		first, middle []rune
		last          []rune
		lastLen       int  // letters of the last name shown
		middles       bool // middle initials shown
		label         string
	}
	entries := make([]*entry, 0, n)
	for i := range n {
		p := get(i)
		if p == nil {
			continue
		}
		words := strings.Fields(*p)
		e := &entry{p: p}
		switch len(words) {
		case 0:
		case 1:
			e.first = []rune(words[0])
		default:
			e.first, e.last = []rune(words[0]), []rune(words[len(words)-1])
			for _, m := range words[1 : len(words)-1] {
				if isParticle(m) {
					continue
				}
				e.middle = append(e.middle, []rune(m)[0])
			}
			e.lastLen = 1
		}
		entries = append(entries, e)
	}
	render := func(e *entry) string {
		var b strings.Builder
		b.WriteString(string(e.first))
		if e.middles {
			for _, m := range e.middle {
				b.WriteString(" " + string(m) + ".")
			}
		}
		if len(e.last) > 0 {
			b.WriteString(" " + string(e.last[:e.lastLen]))
			if e.lastLen < len(e.last) {
				b.WriteString(".")
			}
		}
		return b.String()
	}
	// collisions groups the entries by the folded label they would show now.
	collisions := func() [][]*entry {
		groups := map[string][]*entry{}
		var order []string
		for _, e := range entries {
			e.label = render(e)
			k := FoldName(e.label)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], e)
		}
		var out [][]*entry
		for _, k := range order {
			if len(groups[k]) > 1 {
				out = append(out, groups[k])
			}
		}
		return out
	}
	// 1. Lengthen the last names of colliding entries, one letter at a time.
	for {
		grew := false
		for _, g := range collisions() {
			for _, e := range g {
				if e.lastLen < len(e.last) {
					e.lastLen++
					grew = true
				}
			}
		}
		if !grew {
			break
		}
	}
	// 2. Middle initials.
	for _, g := range collisions() {
		for _, e := range g {
			e.middles = len(e.middle) > 0
		}
	}
	// 3. Numbers for names still alike.
	for _, e := range entries {
		e.label = render(e)
	}
	for _, g := range collisions() {
		for i, e := range g {
			if i > 0 {
				e.label += " " + strconv.Itoa(i+1)
			}
		}
	}
	for _, e := range entries {
		*e.p = e.label
	}
}

// isParticle reports whether a middle word is a Portuguese name particle ("da", "de", "dos"),
// which a short name skips.
func isParticle(w string) bool {
	switch strings.ToLower(w) {
	case "da", "das", "de", "do", "dos", "e", "del", "di", "van", "von":
		return true
	}
	return false
}

// FoldName is the form in which names and labels are compared: lower case, without accents,
// single spaces, no periods. "Ána  S." and "ana s" fold alike.
func FoldName(s string) string {
	// A chain keeps state between calls: one per call, since FoldName runs concurrently.
	t, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), s)
	if err != nil {
		t = s
	}
	return strings.Join(strings.Fields(strings.ToLower(strings.ReplaceAll(t, ".", " "))), " ")
}
