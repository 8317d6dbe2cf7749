package pii

import "unicode"

// numbersScanner is the pattern detectors alone (no church's known values).
var numbersScanner = NewScanner(nil)

// HoldsNumbers reports whether free text meant for people (a pick-up restriction's note, an
// allergy) holds a phone or a document number: one the pattern detectors know (phones, CPF,
// e-mail…), or a run of eight digits or more, spaces, dots, dashes, slashes and parentheses
// between them ignored. Such text is refused where it is typed, since it is shown to
// volunteers and a phone has a field of its own.
func HoldsNumbers(text string) bool {
	found, err := numbersScanner.ScanValue(text)
	return err != nil || len(found) > 0 || digitRun(text) >= 8
}

// digitRun is the longest run of digits in s, separators between them ignored, on the
// normalized text (a zero-width space does not split a run).
func digitRun(s string) int {
	best, run := 0, 0
	for _, r := range normalize(s).s {
		switch {
		case unicode.IsDigit(r):
			run++
			best = max(best, run)
		case r == ' ' || r == '.' || r == '-' || r == '(' || r == ')' || r == '/':
		default:
			run = 0
		}
	}
	return best
}
