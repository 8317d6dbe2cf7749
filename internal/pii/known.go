package pii

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/coregx/ahocorasick"
)

// MinNameLetters is the fewest letters (spaces not counted) a folded name pattern must have;
// a name must also have at least two words. Shorter or one-word names are not matched alone.
const MinNameLetters = 6

// Kind says what a known value is.
type Kind int

// The kinds of known value.
const (
	KindChildName Kind = iota + 1
	KindGuardianName
	KindGuardianPhone
	KindBirthDate // Text in ISO form, AAAA-MM-DD
)

func (k Kind) String() string {
	switch k {
	case KindChildName:
		return "child_name"
	case KindGuardianName:
		return "guardian_name"
	case KindGuardianPhone:
		return "guardian_phone"
	case KindBirthDate:
		return "birth_date"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Value is one known personal value of a church. It prints and logs without its text.
type Value struct {
	Kind Kind
	Text string
}

// String hides the text.
func (v Value) String() string { return v.Kind.String() + " [redacted]" }

// LogValue hides the text.
func (v Value) LogValue() slog.Value { return slog.StringValue(v.String()) }

// KnownValues is the immutable matcher of one church's known values: one Aho-Corasick
// automaton over folded text (names and birth dates) and one over the digits of phone-shaped
// text (guardians' phones). It exposes no accessor for the values themselves. The zero value
// and nil match nothing. Safe for concurrent use.
type KnownValues struct {
	text      *ahocorasick.Automaton
	textDet   []Detector
	phones    *ahocorasick.Automaton
	nPatterns int
}

// NewKnownValues builds the matcher. Values that cannot be used (a one-word or short name, a
// phone with fewer than 8 digits) are skipped; a birth date that is not AAAA-MM-DD or an
// unknown kind is an error naming the value's index, never its text.
func NewKnownValues(values []Value) (*KnownValues, error) {
	textSeen := map[string]bool{}
	var textPats []string
	var textDet []Detector
	addText := func(p string, d Detector) {
		if p != "" && !textSeen[p] {
			textSeen[p] = true
			textPats = append(textPats, p)
			textDet = append(textDet, d)
		}
	}
	phoneSeen := map[string]bool{}
	var phonePats []string
	addPhone := func(p string) {
		if len(p) >= 8 && !phoneSeen[p] {
			phoneSeen[p] = true
			phonePats = append(phonePats, p)
		}
	}
	for i, v := range values {
		switch v.Kind {
		case KindChildName, KindGuardianName:
			for _, p := range namePatterns(v.Text) {
				addText(p, DetectorKnownName)
			}
		case KindBirthDate:
			d, err := time.Parse(time.DateOnly, strings.TrimSpace(v.Text))
			if err != nil {
				return nil, fmt.Errorf("pii: known value %d: birth date is not AAAA-MM-DD", i)
			}
			for _, layout := range []string{time.DateOnly, "02/01/2006", "02-01-2006", "02.01.2006"} {
				addText(d.Format(layout), DetectorKnownBirthDate)
			}
		case KindGuardianPhone:
			for _, p := range phonePatterns(v.Text) {
				addPhone(p)
			}
		default:
			return nil, fmt.Errorf("pii: known value %d: unknown kind %d", i, int(v.Kind))
		}
	}
	k := &KnownValues{textDet: textDet, nPatterns: len(textPats) + len(phonePats)}
	var err error
	if len(textPats) > 0 {
		if k.text, err = ahocorasick.NewBuilder().SetMatchKind(ahocorasick.LeftmostLongest).AddStrings(textPats).Build(); err != nil {
			return nil, fmt.Errorf("pii: build name automaton: %w", err)
		}
	}
	if len(phonePats) > 0 {
		if k.phones, err = ahocorasick.NewBuilder().SetMatchKind(ahocorasick.LeftmostLongest).AddStrings(phonePats).Build(); err != nil {
			return nil, fmt.Errorf("pii: build phone automaton: %w", err)
		}
	}
	return k, nil
}

// Patterns is how many distinct patterns the automata hold.
func (k *KnownValues) Patterns() int {
	if k == nil {
		return 0
	}
	return k.nPatterns
}

// namePatterns returns the folded full name and, for three or more words, first + last word;
// each only if it has two words and MinNameLetters letters.
func namePatterns(name string) []string {
	words := strings.Fields(foldString(name))
	var out []string
	usable := func(ws []string) bool {
		if len(ws) < 2 {
			return false
		}
		n := 0
		for _, w := range ws {
			n += len([]rune(w))
		}
		return n >= MinNameLetters
	}
	if usable(words) {
		out = append(out, strings.Join(words, " "))
	}
	if len(words) >= 3 {
		first, last := words[0], words[len(words)-1]
		if ws := []string{first, last}; usable(ws) && !isParticle(last) {
			out = append(out, first+" "+last)
		}
	}
	return out
}

func isParticle(w string) bool {
	switch w {
	case "de", "da", "do", "das", "dos", "e", "filho", "neto", "junior", "jr":
		return true
	}
	return false
}

// phonePatterns returns a phone's national number (area code + subscriber, country code 55
// removed) and its subscriber number, as digits.
func phonePatterns(phone string) []string {
	var d []byte
	for i := 0; i < len(phone); i++ {
		if isDigit(phone[i]) {
			d = append(d, phone[i])
		}
	}
	s := string(d)
	if (len(s) == 12 || len(s) == 13) && strings.HasPrefix(s, "55") {
		s = s[2:]
	}
	switch len(s) {
	case 10, 11:
		return []string{s, s[2:]}
	case 8, 9:
		return []string{s}
	}
	return nil
}

// spans appends the known-value spans of s.
func (k *KnownValues) spans(s string, out []span) []span {
	if k == nil {
		return out
	}
	if k.text != nil {
		f := foldText(s)
		for pos := 0; pos < len(f.b); {
			m, ok := k.text.Find(f.b, pos)
			if !ok {
				break
			}
			det := k.textDet[m.PatternID]
			var okB bool
			if det == DetectorKnownBirthDate {
				okB = (m.Start == 0 || !isDigit(f.b[m.Start-1])) && (m.End == len(f.b) || !isDigit(f.b[m.End]))
			} else {
				okB = (m.Start == 0 || !isWordByte(f.b[m.Start-1])) && (m.End == len(f.b) || !isWordByte(f.b[m.End]))
			}
			if !okB {
				pos = m.Start + 1
				continue
			}
			out = append(out, span{int(f.start[m.Start]), int(f.end[m.End-1]), det})
			pos = m.End
		}
	}
	if k.phones != nil && strings.ContainsAny(s, "0123456789") {
		out = k.phoneSpans(s, out)
	}
	return out
}

func isPhoneChar(c byte) bool {
	return isDigit(c) || c == ' ' || c == '(' || c == ')' || c == '+' || c == '-' || c == '.'
}

// phoneSpans matches guardians' phones on the digits of each phone-shaped run of s (digits,
// spaces, parentheses, plus, dash, dot). A match must start at the run's start, after white
// space, or after a country or trunk code (55, 0), and end at the run's end or before white
// space: a known subscriber number inside a longer number does not count.
func (k *KnownValues) phoneSpans(s string, out []span) []span {
	var proj []byte
	var orig []int
	var runStart []int // index in proj of the run's first digit, per digit
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		// a run starts at a digit (parentheses and + before it only change the boundary)
		if i > 0 && isAlnum(s[i-1]) {
			for i < len(s) && isAlnum(s[i]) {
				i++
			}
			continue
		}
		rs := len(proj)
		j := i
		for j < len(s) && isPhoneChar(s[j]) {
			if isDigit(s[j]) {
				proj = append(proj, s[j])
				orig = append(orig, j)
				runStart = append(runStart, rs)
			}
			j++
		}
		if j < len(s) && isAlnum(s[j]) {
			// the run runs into a word: drop it
			proj, orig, runStart = proj[:rs], orig[:rs], runStart[:rs]
			for j < len(s) && isAlnum(s[j]) {
				j++
			}
		} else {
			proj = append(proj, 'x')
			orig = append(orig, j)
			runStart = append(runStart, len(proj))
		}
		i = j
	}
	for pos := 0; pos < len(proj); {
		m, ok := k.phones.Find(proj, pos)
		if !ok {
			break
		}
		a, b := m.Start, m.End-1 // first and last digit
		before := a == runStart[a] || isSpaceByte(s[orig[a]-1])
		if !before {
			switch string(proj[runStart[a]:a]) {
			case "55", "0", "055", "0055":
				before = true
			}
		}
		after := proj[b+1] == 'x' || orig[b]+1 < len(s) && isSpaceByte(s[orig[b]+1])
		if !before || !after {
			pos = m.Start + 1
			continue
		}
		start := orig[a]
		// take a parenthesis or plus sign that opens the number with it
		for start > 0 && (s[start-1] == '(' || s[start-1] == '+') {
			start--
		}
		end := orig[b] + 1
		if end < len(s) && s[end] == ')' {
			end++
		}
		out = append(out, span{start, end, DetectorKnownPhone})
		pos = m.End
	}
	return out
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
