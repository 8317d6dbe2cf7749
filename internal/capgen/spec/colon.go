package spec

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// A description with ": " in it ("Returns the note: never the text") is the YAML mistake the
// spec invites most, and YAML reports it in four disguises: a syntax error when the text
// follows its key on one line or continues on an indented line, "must be a string, got a
// mapping" when the text starts on the next line, and an unknown key when a continuation line
// sits at the key's own indentation. Each is reported as what it is.
const (
	colonMsg  = "a colon followed by a space inside unquoted text starts a mapping"
	colonHint = "quote the text or write it as a block with >-"
)

var (
	// blockKeyLine is "  key: rest" or "  - key: rest" (rest may be empty).
	blockKeyLine = regexp.MustCompile(`^(\s*(?:-\s+)?)([A-Za-z_][\w.:-]*?):(?:\s+(.*))?$`)
	// flowColon is "{key: text: " or ", key: text: " inside a flow mapping.
	flowColon = regexp.MustCompile(`[{,]\s*([A-Za-z_][\w-]*): +([^\s"'{\[|>&*!#,}][^,}#]*?): `)
)

// plainText reports whether a value written after "key: " is unquoted text (not a quoted
// string, a flow collection, a block scalar, an alias, an anchor, a tag or a comment).
func plainText(rest string) bool {
	rest = strings.TrimSpace(rest)
	return rest != "" && !strings.ContainsRune(`"'{[|>&*!#`, rune(rest[0]))
}

// stripComment drops a " #" comment from a line (good enough for plain text: a quoted "#"
// is not plain text anyway).
func stripComment(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		return line[:i]
	}
	return line
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// colonInText looks for the unquoted ": " that broke the YAML at the lines reported (1-based)
// or the line after each: the text after "key: " on one line, a flow mapping's value, or (on
// a reported line only) an indented continuation line of a plain multi-line value. It returns
// where that colon is and the key whose text holds it.
func colonInText(src []byte, reported ...int) (Pos, string, bool) {
	all := strings.Split(string(src), "\n")
	line := func(n int) string {
		if n < 1 || n > len(all) {
			return ""
		}
		return stripComment(strings.TrimRight(all[n-1], "\r"))
	}
	sameLine := func(n int) (Pos, string, bool) {
		l := line(n)
		if m := blockKeyLine.FindStringSubmatchIndex(l); m != nil && m[6] >= 0 && plainText(l[m[6]:m[7]]) {
			if i := strings.Index(l[m[6]:m[7]], ": "); i >= 0 {
				return Pos{n, m[6] + i + 1}, l[m[4]:m[5]], true
			}
		}
		if m := flowColon.FindStringSubmatchIndex(l); m != nil {
			return Pos{n, m[5] + 1}, l[m[2]:m[3]], true
		}
		return Pos{}, "", false
	}
	for _, n := range reported {
		if p, key, ok := sameLine(n); ok {
			return p, key, true
		}
		if p, key, ok := continuation(line, n); ok {
			return p, key, true
		}
	}
	for _, n := range reported {
		if p, key, ok := sameLine(n + 1); ok {
			return p, key, true
		}
	}
	return Pos{}, "", false
}

// continuation reports whether line n has ": " and continues the plain text of a "key: text"
// line above it (more indented than that key, past any earlier continuation lines).
func continuation(line func(int) string, n int) (Pos, string, bool) {
	l := line(n)
	i := strings.Index(l, ": ")
	if i < 0 {
		return Pos{}, "", false
	}
	for p := n - 1; p >= 1 && p >= n-20; p-- {
		prev := line(p)
		if strings.TrimSpace(prev) == "" {
			continue
		}
		m := blockKeyLine.FindStringSubmatchIndex(prev)
		if m == nil {
			continue // an earlier continuation line of the same text
		}
		keyIndent := m[3] // where the key starts, after any "- "
		if m[6] >= 0 && plainText(prev[m[6]:m[7]]) && indentOf(l) > keyIndent {
			return Pos{n, i + 1}, prev[m[4]:m[5]], true
		}
		break
	}
	return Pos{}, "", false
}

// textKey reports whether an unknown key of a spec mapping (whose value is val) is really
// text: spec keys are snake_case words, so a key with a space, or a capitalised key whose
// value is words ("Note: never the text."), is a sentence that a ": " turned into a key.
func textKey(k, val *yaml.Node) bool {
	if k.Kind != yaml.ScalarNode || k.Style != 0 {
		return false
	}
	if strings.Contains(k.Value, " ") {
		return true
	}
	return strings.ContainsFunc(k.Value, unicode.IsUpper) && words(val)
}

// words reports whether n is unquoted text of more than one word.
func words(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Style == 0 && strings.Contains(n.Value, " ")
}

// continuesText reports whether the unknown key k (whose value is val) reads as the next line
// of the string before it (prevVal): a one-line plain text that does not end a sentence,
// followed by a key whose value is words.
func continuesText(prevVal, k, val *yaml.Node) bool {
	if prevVal == nil || !words(prevVal) {
		return false
	}
	if strings.ContainsAny(prevVal.Value[len(prevVal.Value)-1:], ".!?") || k.Line != prevVal.Line+1 {
		return false
	}
	return words(val)
}

// mappingIsText reports whether a mapping given for a string is text with ": " in it, written
// on the line after its key: a block mapping whose first key is plain text.
func mappingIsText(n *yaml.Node) bool {
	return n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 && len(n.Content) >= 2 &&
		n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Style == 0 && n.Content[1].Kind == yaml.ScalarNode
}

// colonPos is where the ": " after a plain key stands, when the key is on one line.
func colonPos(k *yaml.Node) Pos {
	if strings.Contains(k.Value, "\n") {
		return nodePos(k)
	}
	return Pos{k.Line, k.Column + len(k.Value)}
}

// quoteText quotes the line a ": " cut into a key and its value, shortened to a readable size.
func quoteText(k, val *yaml.Node) string {
	s := k.Value + ":"
	if val.Kind == yaml.ScalarNode && val.Value != "" {
		s += " " + val.Value
	}
	if r := []rune(s); len(r) > 48 {
		s = string(r[:47]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
