package pii

import (
	"net/mail"
	"regexp"
	"strings"
)

// span is a byte range of a string in which a detector matched.
type span struct {
	start, end int
	det        Detector
}

// emailCandidate proposes text to net/mail, which decides.
var emailCandidate = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}`)

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// patternSpans appends the spans of the pattern detectors (CPF, CNPJ, phone, e-mail) in s,
// which is normalized text (see normalize).
func patternSpans(s string, out []span) []span {
	if strings.ContainsAny(s, "0123456789") {
		out = numberSpans(s, out)
	}
	if strings.IndexByte(s, '@') >= 0 {
		for _, m := range emailCandidate.FindAllStringIndex(s, -1) {
			if m[1] < len(s) && (isAlnum(s[m[1]]) || s[m[1]] == '-' || s[m[1]] == '@' ||
				s[m[1]] == '.' && m[1]+1 < len(s) && isAlnum(s[m[1]+1])) {
				continue
			}
			if validEmail(s[m[0]:m[1]]) {
				out = append(out, span{m[0], m[1], DetectorEmail})
			}
		}
	}
	return out
}

// validEmail confirms an e-mail candidate with net/mail and checks the domain's labels.
func validEmail(c string) bool {
	a, err := mail.ParseAddress(c)
	if err != nil || a.Address != c {
		return false
	}
	at := strings.LastIndexByte(c, '@')
	for _, label := range strings.Split(c[at+1:], ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
	}
	return true
}
