package capability

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// RenderText renders a capability's JSON output as the text of an MCP tool result: the part
// most hosts hand to the model (docs/tool-output.md). The JSON of a busy Sunday spends most of
// its tokens on quotes, repeated keys and ids no next call takes; this says the same in plain
// lines, in the output's own field order:
//
//	date: 2026-10-25
//	checkins (202):
//	child_handle | child_label | class_name | checked_in_at | checked_out_at
//	7ACTYB | Alice M. | Berçário | 2026-10-25T12:00:14Z | 2026-10-25T13:46:45Z
//
// Scalars are "name: value" lines; a list of flat objects is a table, one header line of
// field names and one line per item, trailing empty cells dropped; a list whose items hold
// lists is one "- name: value, …" line per item followed by its own lists, indented; a list
// of scalars is one comma-separated line; an empty list says "none"; nested objects flatten
// to "parent.name". Nulls are left out, and so is every field at a path of notInText
// ("classes[].children[].checkin_id", the spec's in_text: false). data is the finalized JSON
// (after redaction), so the text shows nothing structuredContent does not.
func RenderText(data []byte, notInText []string) (string, error) {
	root, err := parseNode(data)
	if err != nil {
		return "", fmt.Errorf("capability: render text: %w", err)
	}
	r := textRenderer{omit: notInText}
	r.b.Grow(len(data) / 2) // the text is about a third of the JSON: no keys, quotes or ids
	if root.kind != nodeObject {
		r.value(&r.b, "", "", root)
	} else {
		r.object("", "", "", root)
	}
	return strings.TrimRight(r.b.String(), "\n"), nil
}

type nodeKind int

const (
	nodeScalar nodeKind = iota
	nodeNull
	nodeObject
	nodeArray
)

// node is a JSON value with its object keys in document order (a map would lose the order the
// spec gives the fields, which is the order a reader expects).
type node struct {
	kind   nodeKind
	scalar string   // a scalar's text: a string's value, a number or boolean as written
	keys   []string // an object's keys, in order
	vals   []node   // an object's values (by keys) or an array's items
}

func (n node) field(key string) (node, bool) {
	if i := slices.Index(n.keys, key); i >= 0 {
		return n.vals[i], true
	}
	return node{}, false
}

type textRenderer struct {
	b    strings.Builder
	omit []string
}

func (r *textRenderer) omitted(path string) bool { return slices.Contains(r.omit, path) }

// object writes the members of an object, each on its own line(s), at indent. path is the
// object's JSON path ("" at the root, "classes[]" for an item), label the prefix of a nested
// object's names ("guardian.").
func (r *textRenderer) object(indent, path, label string, n node) {
	for i, k := range n.keys {
		p := join(path, k)
		v := n.vals[i]
		if v.kind == nodeNull || r.omitted(p) {
			continue
		}
		switch v.kind {
		case nodeObject:
			r.object(indent, p, label+k+".", v)
		case nodeArray:
			r.list(indent, p, label+k, v)
		default:
			fmt.Fprintf(&r.b, "%s%s%s: %s\n", indent, label, k, cell(v.scalar))
		}
	}
}

// list writes a list: a table of flat objects, blocks of objects that hold lists, or a line
// of scalars.
func (r *textRenderer) list(indent, path, name string, n node) {
	if len(n.vals) == 0 {
		fmt.Fprintf(&r.b, "%s%s: none\n", indent, name)
		return
	}
	item := path + "[]"
	objects, nested := true, false
	for _, v := range n.vals {
		if v.kind != nodeObject {
			objects = false
			break
		}
		for i, k := range v.keys {
			if c := v.vals[i].kind; (c == nodeArray || c == nodeObject) && !r.omitted(join(item, k)) {
				nested = true
			}
		}
	}
	switch {
	case !objects:
		parts := make([]string, 0, len(n.vals))
		for _, v := range n.vals {
			var b strings.Builder
			r.value(&b, item, "", v)
			parts = append(parts, strings.TrimSpace(b.String()))
		}
		fmt.Fprintf(&r.b, "%s%s: %s\n", indent, name, strings.Join(parts, ", "))
	case nested:
		fmt.Fprintf(&r.b, "%s%s (%d):\n", indent, name, len(n.vals))
		for _, v := range n.vals {
			var head []string
			for i, k := range v.keys {
				c := v.vals[i]
				if c.kind == nodeScalar && !r.omitted(join(item, k)) {
					head = append(head, k+": "+cell(c.scalar))
				}
			}
			fmt.Fprintf(&r.b, "%s- %s\n", indent, strings.Join(head, ", "))
			for i, k := range v.keys {
				c := v.vals[i]
				p := join(item, k)
				if r.omitted(p) {
					continue
				}
				switch c.kind {
				case nodeArray:
					r.list(indent+"  ", p, k, c)
				case nodeObject:
					r.object(indent+"  ", p, k+".", c)
				}
			}
		}
	default:
		r.table(indent, item, name, n)
	}
}

// table writes a list of flat objects: the columns are the items' fields in first-seen order.
func (r *textRenderer) table(indent, item, name string, n node) {
	var cols []string
	for _, v := range n.vals {
		for _, k := range v.keys {
			if !slices.Contains(cols, k) && !r.omitted(join(item, k)) {
				cols = append(cols, k)
			}
		}
	}
	fmt.Fprintf(&r.b, "%s%s (%d):\n%s%s\n", indent, name, len(n.vals), indent, strings.Join(cols, " | "))
	cells := make([]*node, len(cols))
	for _, v := range n.vals {
		last := -1
		for j, col := range cols {
			cells[j] = nil
			if i := slices.Index(v.keys, col); i >= 0 && v.vals[i].kind == nodeScalar {
				cells[j], last = &v.vals[i], j
			}
		}
		r.b.WriteString(indent)
		for j, c := range cells[:last+1] {
			if j > 0 {
				r.b.WriteString(" | ")
			}
			if c != nil {
				writeCell(&r.b, c.scalar)
			}
		}
		r.b.WriteByte('\n')
	}
}

// value writes a lone value (the root when it is not an object, an item of a mixed list).
func (r *textRenderer) value(b *strings.Builder, path, label string, n node) {
	switch n.kind {
	case nodeScalar:
		b.WriteString(cell(n.scalar))
	case nodeObject:
		sub := textRenderer{omit: r.omit}
		sub.object("", path, label, n)
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(sub.b.String()), "\n", "; "))
	case nodeArray:
		sub := textRenderer{omit: r.omit}
		sub.list("", path, "items", n)
		b.WriteString(strings.TrimSpace(sub.b.String()))
	}
}

// cell is a scalar as one line: a string that could be misread (empty, with a line break, a
// column separator or surrounding spaces) is quoted as JSON.
func cell(s string) string {
	if misread(s) {
		q, _ := json.Marshal(s)
		return string(q)
	}
	return s
}

// writeCell writes cell(s) to b without building the cell.
func writeCell(b *strings.Builder, s string) {
	if misread(s) {
		b.WriteString(cell(s))
		return
	}
	b.WriteString(s)
}

func misread(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\n' || c == '\r' || c == '|' {
			return true
		}
	}
	return false
}
