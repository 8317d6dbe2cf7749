package capability

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
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
	b, err := AppendText(nil, data, notInText)
	return string(b), err
}

// AppendText appends RenderText's text to dst: how a caller that sends the text with other
// parts (MCP's summary sentence) writes it without a copy of its own.
func AppendText(dst, data []byte, notInText []string) ([]byte, error) {
	d := textDocs.Get().(*textDoc)
	defer d.release()
	root, err := d.parse(data)
	if err != nil {
		return dst, fmt.Errorf("capability: render text: %w", err)
	}
	start := len(dst)
	r := textRenderer{doc: d, omit: notInText, b: slices.Grow(dst, TextSizeHint(data))}
	if root.kind != nodeObject {
		r.value("", "", &root)
	} else {
		r.object("", "", "", &root, true)
	}
	return trimTrailingLines(r.b, start), nil
}

// TextSizeHint is room enough for the text of data in all but odd documents: the text leaves
// out keys, quotes and ids, and comes to 40–60% of the JSON of the spec's outputs.
func TextSizeHint(data []byte) int { return len(data) * 3 / 4 }

// textDocs are parsed documents kept for the next render, so their arenas are reused.
var textDocs = sync.Pool{New: func() any { return new(textDoc) }}

// maxPooledNodes bounds the arena a pooled doc keeps: a rare huge document's is left to the
// collector.
const maxPooledNodes = 1 << 16

func (d *textDoc) release() {
	if cap(d.nodes) > maxPooledNodes || cap(d.stack) > maxPooledNodes {
		return
	}
	clear(d.unescaped) // the pool must not keep the document's strings alive, nor its bytes
	d.data, d.unescaped = nil, d.unescaped[:0]
	textDocs.Put(d)
}

type textRenderer struct {
	doc  *textDoc
	omit []string
	b    []byte
}

func (r *textRenderer) omitted(path, key string) bool { return omittedAt(r.omit, path, key) }

// omittedAt reports whether the field key of the object at path is one of the paths omit
// leaves out of the text; it compares in place, as join(path, key) == o, so the check costs
// no string per field.
func omittedAt(omit []string, path, key string) bool {
	for _, o := range omit {
		if path == "" {
			if o == key {
				return true
			}
			continue
		}
		if len(o) == len(path)+1+len(key) && o[len(path)] == '.' && o[:len(path)] == path && o[len(path)+1:] == key {
			return true
		}
	}
	return false
}

// object writes the members of an object, each on its own line(s), at indent. path is the
// object's JSON path ("" at the root, "classes[]" for an item), label the prefix of a nested
// object's names ("guardian."). Without scalars it writes only the member objects and lists:
// the rest of a list item whose scalars its "- " line holds.
func (r *textRenderer) object(indent, path, label string, n *textNode, scalars bool) {
	for i := range r.doc.members(n) {
		v := &r.doc.members(n)[i]
		k := r.doc.str(v.key)
		if v.kind == nodeNull || r.omitted(path, k) {
			continue
		}
		switch v.kind {
		case nodeObject:
			r.object(indent, join(path, k), label+k+".", v, true)
		case nodeArray:
			r.list(indent, join(path, k), label+k, v)
		default:
			if !scalars {
				continue
			}
			r.b = append(r.b, indent...)
			r.b = append(r.b, label...)
			r.b = append(r.b, k...)
			r.b = append(r.b, ": "...)
			r.b = appendCell(r.b, r.doc.str(v.scalar))
			r.b = append(r.b, '\n')
		}
	}
}

// list writes a list: a table of flat objects, blocks of objects that hold lists, or a line
// of scalars.
func (r *textRenderer) list(indent, path, name string, n *textNode) {
	items := r.doc.members(n)
	if len(items) == 0 {
		r.b = append(append(append(r.b, indent...), name...), ": none\n"...)
		return
	}
	item := path + "[]"
	objects, nested := true, false
	for i := range items {
		if items[i].kind != nodeObject {
			objects = false
			break
		}
		for _, m := range r.doc.members(&items[i]) {
			if (m.kind == nodeArray || m.kind == nodeObject) && !r.omitted(item, r.doc.str(m.key)) {
				nested = true
			}
		}
	}
	switch {
	case !objects:
		r.b = append(append(append(r.b, indent...), name...), ": "...)
		for i := range items {
			if i > 0 {
				r.b = append(r.b, ", "...)
			}
			sub := textRenderer{doc: r.doc, omit: r.omit}
			sub.value(item, "", &items[i])
			r.b = append(r.b, strings.TrimSpace(string(sub.b))...)
		}
		r.b = append(r.b, '\n')
	case nested:
		r.b = r.appendCount(indent, name, len(items))
		for i := range items {
			v := &items[i]
			r.b = append(r.b, indent...)
			r.b = append(r.b, "- "...)
			first := true
			for _, m := range r.doc.members(v) {
				if k := r.doc.str(m.key); m.kind == nodeScalar && !r.omitted(item, k) {
					if !first {
						r.b = append(r.b, ", "...)
					}
					first = false
					r.b = append(append(r.b, k...), ": "...)
					r.b = appendCell(r.b, r.doc.str(m.scalar))
				}
			}
			r.b = append(r.b, '\n')
			r.object(indent+"  ", item, "", v, false)
		}
	default:
		r.table(indent, item, name, items)
	}
}

// appendCount appends a list's heading, "name (count):".
func (r *textRenderer) appendCount(indent, name string, count int) []byte {
	return appendCount(r.b, indent, name, count)
}

func appendCount(b []byte, indent, name string, count int) []byte {
	b = append(append(append(b, indent...), name...), " ("...)
	return append(strconv.AppendInt(b, int64(count), 10), "):\n"...)
}

// table writes a list of flat objects: the columns are the items' fields in first-seen order.
func (r *textRenderer) table(indent, item, name string, items []textNode) {
	var colsBuf [16]string
	cols := colsBuf[:0]
	for i := range items {
		for _, m := range r.doc.members(&items[i]) {
			if k := r.doc.str(m.key); !slices.Contains(cols, k) && !r.omitted(item, k) {
				cols = append(cols, k)
			}
		}
	}
	r.b = r.appendCount(indent, name, len(items))
	r.b = append(r.b, indent...)
	for j, c := range cols {
		if j > 0 {
			r.b = append(r.b, " | "...)
		}
		r.b = append(r.b, c...)
	}
	r.b = append(r.b, '\n')
	var cellsBuf [16]*textNode
	cells := cellsBuf[:0]
	for range cols {
		cells = append(cells, nil)
	}
	for i := range items {
		members := r.doc.members(&items[i])
		last := -1
		for j, col := range cols {
			cells[j] = nil
			if k := r.doc.memberIndex(members, col, j); k >= 0 && members[k].kind == nodeScalar {
				cells[j], last = &members[k], j
			}
		}
		r.b = append(r.b, indent...)
		for j, c := range cells[:last+1] {
			if j > 0 {
				r.b = append(r.b, " | "...)
			}
			if c != nil {
				r.b = appendCell(r.b, r.doc.str(c.scalar))
			}
		}
		r.b = append(r.b, '\n')
	}
}

// memberIndex is the index of the first member named key, -1 for none. Items of one list
// almost always hold their fields in column order, so the member at guess is tried first; it
// is the first of its name when every member before it is a different column.
func (d *textDoc) memberIndex(members []textNode, key string, guess int) int {
	if guess < len(members) && d.str(members[guess].key) == key {
		aligned := true
		for k := 0; k < guess; k++ {
			if d.str(members[k].key) == key {
				aligned = false
				break
			}
		}
		if aligned {
			return guess
		}
	}
	for k := range members {
		if d.str(members[k].key) == key {
			return k
		}
	}
	return -1
}

// value writes a lone value (the root when it is not an object, an item of a mixed list).
func (r *textRenderer) value(path, label string, n *textNode) {
	switch n.kind {
	case nodeScalar:
		r.b = appendCell(r.b, r.doc.str(n.scalar))
	case nodeObject:
		sub := textRenderer{doc: r.doc, omit: r.omit}
		sub.object("", path, label, n, true)
		r.b = append(r.b, strings.ReplaceAll(strings.TrimSpace(string(sub.b)), "\n", "; ")...)
	case nodeArray:
		sub := textRenderer{doc: r.doc, omit: r.omit}
		sub.list("", path, "items", n)
		r.b = append(r.b, strings.TrimSpace(string(sub.b))...)
	}
}

// appendCell appends a scalar as one line: a string that could be misread (empty, with a line
// break, a column separator or surrounding spaces) is quoted as JSON.
func appendCell(b []byte, s string) []byte { return appendClassedCell(b, s, cellClass(s)) }

// appendClassedCell is appendCell of s whose cellClass is class.
func appendClassedCell(b []byte, s string, class uint8) []byte {
	if misreadClass(s, class) {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	return append(b, s...)
}

func misreadClass(s string, class uint8) bool {
	if s == "" || class&cellBreaks != 0 {
		return true
	}
	if first, last := s[0], s[len(s)-1]; first <= ' ' || first >= utf8.RuneSelf || last <= ' ' || last >= utf8.RuneSelf {
		return strings.TrimSpace(s) != s // only then can s start or end with a space
	}
	return false
}

// The classes of a cell's bytes (cellBytes): a line break or the column separator, which make
// it misread; a byte of a multi-byte character, which makes it worth a UTF-8 check.
const (
	cellBreaks = 1 << iota
	cellMultibyte
)

var cellBytes = func() (t [256]uint8) {
	t['\n'], t['\r'], t['|'] = cellBreaks, cellBreaks, cellBreaks
	for c := utf8.RuneSelf; c < len(t); c++ {
		t[c] = cellMultibyte
	}
	return t
}()

// cellClass is the union of the classes of s's bytes: one pass, no branch per byte.
func cellClass(s string) (class uint8) {
	for i := 0; i < len(s); i++ {
		class |= cellBytes[s[i]]
	}
	return class
}
