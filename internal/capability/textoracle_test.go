package capability

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The renderer the arena renderer (text.go) replaced, kept as the oracle of
// FuzzRenderTextMatchesOracle: a node tree from encoding/json's Decoder.Token
// (decodeWithTokens) rendered by the straightforward code below. It must never change; the
// rendering rules it pins are TestRenderText's.

// node is a JSON value with its object keys in document order.
type node struct {
	kind   nodeKind
	scalar string
	keys   []string
	vals   []node
}

func oracleRenderText(data []byte, notInText []string) (string, error) {
	root, err := decodeWithTokens(data)
	if err != nil {
		return "", err
	}
	r := oracleRenderer{omit: notInText}
	if root.kind != nodeObject {
		r.value(&r.b, "", "", root)
	} else {
		r.object("", "", "", root)
	}
	return strings.TrimRight(r.b.String(), "\n"), nil
}

type oracleRenderer struct {
	b    strings.Builder
	omit []string
}

func (r *oracleRenderer) omitted(path string) bool { return slices.Contains(r.omit, path) }

func (r *oracleRenderer) object(indent, path, label string, n node) {
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
			fmt.Fprintf(&r.b, "%s%s%s: %s\n", indent, label, k, oracleCell(v.scalar))
		}
	}
}

func (r *oracleRenderer) list(indent, path, name string, n node) {
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
					head = append(head, k+": "+oracleCell(c.scalar))
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

func (r *oracleRenderer) table(indent, item, name string, n node) {
	var cols []string
	for _, v := range n.vals {
		for _, k := range v.keys {
			if !slices.Contains(cols, k) && !r.omitted(join(item, k)) {
				cols = append(cols, k)
			}
		}
	}
	fmt.Fprintf(&r.b, "%s%s (%d):\n%s%s\n", indent, name, len(n.vals), indent, strings.Join(cols, " | "))
	for _, v := range n.vals {
		var cells []string
		last := -1
		for j, col := range cols {
			cells = append(cells, "")
			if i := slices.Index(v.keys, col); i >= 0 && v.vals[i].kind == nodeScalar {
				cells[j], last = oracleCell(v.vals[i].scalar), j
			}
		}
		r.b.WriteString(indent + strings.Join(cells[:last+1], " | ") + "\n")
	}
}

func (r *oracleRenderer) value(b *strings.Builder, path, label string, n node) {
	switch n.kind {
	case nodeScalar:
		b.WriteString(oracleCell(n.scalar))
	case nodeObject:
		sub := oracleRenderer{omit: r.omit}
		sub.object("", path, label, n)
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(sub.b.String()), "\n", "; "))
	case nodeArray:
		sub := oracleRenderer{omit: r.omit}
		sub.list("", path, "items", n)
		b.WriteString(strings.TrimSpace(sub.b.String()))
	}
}

func oracleCell(s string) string {
	if misreadClass(s, cellClass(s)) {
		q, _ := json.Marshal(s)
		return string(q)
	}
	return s
}

// tree is the arena node n of d as the oracle's node tree.
func (d *textDoc) tree(n *textNode) node {
	out := node{kind: n.kind}
	if n.kind == nodeScalar {
		out.scalar = d.str(n.scalar)
	}
	for i := range d.members(n) {
		m := &d.members(n)[i]
		if n.kind == nodeObject {
			out.keys = append(out.keys, d.str(m.key))
		}
		out.vals = append(out.vals, d.tree(m))
	}
	return out
}
