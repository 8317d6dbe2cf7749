package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	goyaml "github.com/goccy/go-yaml"
	goparser "github.com/goccy/go-yaml/parser"
	"gopkg.in/yaml.v3"
)

// positions maps a spec path ("resources.roster_child.scope", "roles.ADMIN.scopes[2]") to where
// its key and its value stand in the file, so validation can point at the exact spot.
type positions struct {
	key map[string]Pos
	val map[string]Pos
}

// at returns the position of the value at path, falling back to its key, then to the closest
// ancestor that has one.
func (p positions) at(path string) Pos {
	for {
		if v, ok := p.val[path]; ok {
			return v
		}
		if k, ok := p.key[path]; ok {
			return k
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return Pos{1, 1}
		}
		path = path[:i]
	}
}

// keyAt returns the position of the key at path (or of its value when it has no key).
func (p positions) keyAt(path string) Pos {
	if k, ok := p.key[path]; ok {
		return k
	}
	return p.at(path)
}

// missingAt returns where to report that path is absent: the key of the closest ancestor that
// is in the file ("thing:" for "resources.thing.description"), so the message points at the
// mapping that lacks it rather than at its first member.
func (p positions) missingAt(path string) Pos {
	for {
		if k, ok := p.key[path]; ok {
			return k
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return p.at(path)
		}
		path = path[:i]
	}
}

// present reports whether path was written in the file.
func (p positions) present(path string) bool {
	_, ok := p.key[path]
	return ok
}

// decoder turns a YAML node tree into the Go model, strictly: unknown keys, duplicate keys and
// type mismatches are diagnostics, never panics, and decoding goes on to find every problem.
type decoder struct {
	file  string
	pos   positions
	diags Diagnostics

	// expanding holds the anchors of the aliases being decoded, to reject an alias inside the
	// value it refers to (which would never end); budget bounds how many values aliases may
	// expand to (a "billion laughs" spec would otherwise take forever).
	expanding map[*yaml.Node]bool
	budget    int

	// bad holds the paths whose value could not be decoded, so validation does not pile a
	// second, misleading message ("is missing", "out of range") on the first.
	bad map[string]bool

	dropped int // diagnostics past maxDiags
}

// maxValues bounds the YAML values a spec may decode to, counting every alias expansion: room
// for about 500 capabilities (the real spec has 7, in about 700 values).
const maxValues = 50_000

// maxDiags bounds the diagnostics reported, as compilers stop after a screenful of errors.
const maxDiags = 100

func (d *decoder) errorf(p Pos, hint, format string, args ...any) {
	if d.full() {
		d.dropped++
		return
	}
	d.diags = append(d.diags, Diagnostic{File: d.file, Pos: p, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// full reports whether maxDiags diagnostics are in; later ones are only counted.
func (d *decoder) full() bool { return len(d.diags) >= maxDiags }

// didYouMean is the " (did you mean …?)" suffix of a message, skipped (it is the costly part)
// once the diagnostics are full.
func (d *decoder) didYouMean(got string, candidates []string) string {
	if d.full() {
		return ""
	}
	return didYouMean(got, candidates)
}

// result returns the diagnostics in file order, then one saying how many were left out.
func (d *decoder) result() Diagnostics {
	out := d.diags.sorted()
	if d.dropped > 0 && len(out) > 0 {
		out = append(out, Diagnostic{File: d.file, Pos: out[len(out)-1].Pos,
			Msg: fmt.Sprintf("too many problems: %d more not shown", d.dropped), Hint: "fix these and load the spec again"})
	}
	return out
}

// badValue reports that the value at path could not be decoded.
func (d *decoder) badValue(n *yaml.Node, path, hint, format string, args ...any) {
	d.bad[path] = true
	d.errorf(nodePos(n), hint, format, args...)
}

func nodePos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

// decodeFile parses src and decodes it into a Spec; the Spec is nil when src is not one YAML
// document. The decoder holds the positions and the diagnostics so far.
func decodeFile(file string, src []byte) (*Spec, *decoder) {
	d := &decoder{
		file:      file,
		pos:       positions{key: map[string]Pos{}, val: map[string]Pos{}},
		expanding: map[*yaml.Node]bool{},
		budget:    maxValues,
		bad:       map[string]bool{},
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	err := dec.Decode(&root)
	if err == nil && len(root.Content) == 0 {
		err = io.EOF // a file of comments only
	}
	switch {
	case errors.Is(err, io.EOF):
		d.errorf(Pos{1, 1}, "start from the example in docs/spec-reference.md", "the spec is empty")
		return nil, d
	case err != nil:
		p, msg, hint := syntaxError(src, err)
		d.errorf(p, hint, "invalid YAML: %s", msg)
		return nil, d
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && emptyDocument(&next) {
			continue // a trailing "---"
		}
		p := Pos{1, 1}
		if err == nil {
			p = nodePos(&next)
		} else {
			p.Line, _ = yamlErrorLine(err)
		}
		d.errorf(p, "remove the \"---\" and what follows, or merge it into the first document", "the spec holds more than one YAML document")
		return nil, d
	}
	var s Spec
	d.value(root.Content[0], reflect.ValueOf(&s).Elem(), "")
	return &s, d
}

// emptyDocument reports whether doc holds nothing (or an implicit null).
func emptyDocument(doc *yaml.Node) bool {
	for _, n := range doc.Content {
		if n.Tag != "!!null" || n.Value != "" {
			return false
		}
	}
	return true
}

// syntaxError locates a YAML syntax error. yaml.v3 names only a line, often the one where the
// enclosing block starts; goccy/go-yaml's parser points at the offending token, so its position
// and wording win when it fails too, at or after that line. An unquoted ": " in text, the
// usual cause, is named as such, at the colon.
func syntaxError(src []byte, err error) (Pos, string, string) {
	line, msg := yamlErrorLine(err)
	p := Pos{line, 1}
	var gerr goyaml.Error
	if _, perr := parseGoccy(src); errors.As(perr, &gerr) {
		if tk := gerr.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line >= line && tk.Position.Column >= 1 {
			p, msg = Pos{tk.Position.Line, tk.Position.Column}, gerr.GetMessage()
		}
	}
	if cp, key, ok := colonInText(src, p.Line, line); ok {
		return cp, fmt.Sprintf("the text of %s has \": \", and %s", key, colonMsg), colonHint
	}
	return p, msg, "fix the YAML syntax"
}

// parseGoccy runs goccy/go-yaml's parser, which is only asked where an error is; a panic in it
// counts as no answer.
func parseGoccy(src []byte) (_ any, err error) {
	defer func() {
		if recover() != nil {
			err = nil
		}
	}()
	return goparser.ParseBytes(src, 0)
}

// yamlErrorLine extracts "line N" from a yaml.v3 error message.
func yamlErrorLine(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		j := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if j > 0 {
			if n, e := strconv.Atoi(rest[:j]); e == nil {
				line = n
				msg = strings.TrimLeft(rest[j:], ": ")
			}
		}
	}
	return line, msg
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing (null)"
	}
	return fmt.Sprintf("the scalar %q", n.Value)
}

// entryDecoder is implemented by Map[T] so the reflective decoder can fill ordered maps.
type entryDecoder interface {
	decodeEntries(d *decoder, n *yaml.Node, path string)
}

func (m *Map[T]) decodeEntries(d *decoder, n *yaml.Node, path string) {
	seen := map[string]Pos{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !d.key(k, path) {
			continue
		}
		name := k.Value
		p := join(path, name)
		if first, dup := seen[name]; dup {
			d.errorf(nodePos(k), "rename or remove one of them", "duplicate name %q in %s (first defined at line %d)", name, describe(path), first.Line)
			continue
		}
		seen[name] = nodePos(k)
		d.pos.key[p] = nodePos(k)
		var t T
		d.value(v, reflect.ValueOf(&t).Elem(), p)
		*m = append(*m, Entry[T]{Name: name, Value: t})
	}
}

var entryDecoderType = reflect.TypeFor[entryDecoder]()

// key reports whether k can name a member of the mapping at path: a plain scalar, not a
// list, a mapping or a YAML merge key ("<<"), which this decoder does not expand.
func (d *decoder) key(k *yaml.Node, path string) bool {
	switch {
	case k.Tag == "!!merge":
		d.bad[path] = true // its other keys may well be missing
		d.errorf(nodePos(k), "write the keys out (anchors and aliases of whole values do work)", "YAML merge keys (<<) are not supported in %s", describe(path))
		return false
	case k.Kind != yaml.ScalarNode:
		d.errorf(nodePos(k), "use a plain name as the key", "a key in %s is %s", describe(path), kindName(k))
		return false
	}
	return true
}

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if d.budget--; d.budget < 0 {
		if d.budget == -1 {
			d.errorf(nodePos(n), "use fewer YAML aliases (*name) or write the values out",
				"the spec expands to more than %d values", maxValues)
		}
		return
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return // yaml.v3 rejects unknown anchors; stay safe anyway
		}
		if d.expanding[n.Alias] {
			d.badValue(n, path, "point the alias at a value defined outside this one", "alias *%s refers to a value that contains it", n.Value)
			return
		}
		d.expanding[n.Alias] = true
		defer delete(d.expanding, n.Alias)
		n = n.Alias
	}
	d.pos.val[path] = nodePos(n)
	if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
		nd.decodeNode(d, n, path)
		return
	}
	if v.Addr().Type().Implements(entryDecoderType) {
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return
			}
			if r, ok := v.Addr().Interface().(shapeRefuser); ok {
				if msg, hint := r.refuseShape(n); msg != "" {
					d.badValue(n, path, hint, "%s %s", describe(path), msg)
					return
				}
			}
			d.badValue(n, path, "write a mapping of name: value", "%s must be a mapping, got %s", describe(path), kindName(n))
			return
		}
		v.Addr().Interface().(entryDecoder).decodeEntries(d, n, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if n.Tag == "!!null" {
			return
		}
		nv := reflect.New(v.Type().Elem())
		d.value(n, nv.Elem(), path)
		v.Set(nv)
	case reflect.Struct:
		d.structValue(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.badValue(n, path, "write a list, for example [a, b]", "%s must be a list, got %s", describe(path), kindName(n))
			return
		}
		sl := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.value(item, sl.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(sl)
	case reflect.String:
		if n.Tag == "!!null" {
			return // as if empty: validation says whether the string may be
		}
		if mappingIsText(n) {
			d.bad[path] = true
			d.errorf(colonPos(n.Content[0]), colonHint, "%s must be a string, got a mapping: its text has \": \", and %s", describe(path), colonMsg)
			return
		}
		if n.Kind != yaml.ScalarNode {
			d.badValue(n, path, "write a string", "%s must be a string, got %s", describe(path), kindName(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		// yaml.v3 tags true, True and TRUE as !!bool; ParseBool also takes 1 and t, which the
		// tag check has already ruled out.
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || err != nil {
			d.badValue(n, path, "write true or false", "%s must be true or false, got %s", describe(path), kindName(n))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		// As yaml.v3 resolves them: 1_000, 0x10 and 0o17 are integers too.
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil {
			d.badValue(n, path, "write a whole number", "%s must be an integer, got %s", describe(path), kindName(n))
			return
		}
		v.SetInt(i)
	default:
		panic(fmt.Sprintf("spec model field of unsupported kind %s at %s", v.Kind(), path)) // a bug in model.go, not in a spec
	}
}

func (d *decoder) structValue(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.badValue(n, path, "write a mapping of key: value", "%s must be a mapping, got %s", describe(path), kindName(n))
		return
	}
	t := v.Type()
	fields := map[string]int{}
	var names []string
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			fields[tag] = i
			names = append(names, tag)
		}
	}
	seen := map[string]Pos{}
	var meant []string // keys suggested for misspelt ones
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		var prevKey, prevVal *yaml.Node
		if i >= 2 {
			prevKey, prevVal = n.Content[i-2], n.Content[i-1]
		}
		if !d.key(k, path) {
			continue
		}
		p := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.errorf(nodePos(k), "remove one of them", "duplicate key %q in %s (first at line %d)", k.Value, describe(path), first.Line)
			continue
		}
		seen[k.Value] = nodePos(k)
		idx, ok := fields[k.Value]
		if r, refuses := v.Addr().Interface().(keyRefuser); !ok && refuses {
			if msg, hint := r.refuseKey(k.Value); msg != "" {
				d.errorf(nodePos(k), hint, "%s in %s: %s", k.Value, describe(path), msg)
				continue
			}
		}
		if !ok && (textKey(k, val) || continuesText(prevVal, k, val)) {
			// Text that a ": " turned into a key, most likely the next line of the string
			// above it, written at the key's own indentation.
			hint := colonHint
			if prevKey != nil && prevKey.Kind == yaml.ScalarNode {
				if j, known := fields[prevKey.Value]; known && t.Field(j).Type.Kind() == reflect.String {
					hint = fmt.Sprintf("if it continues %s, quote the text or write it as a block with >-, its lines indented below %s:", prevKey.Value, prevKey.Value)
					d.bad[join(path, prevKey.Value)] = true // not also "is empty"
				}
			}
			d.errorf(colonPos(k), hint, "%s in %s reads as a key, not as text: %s", quoteText(k, val), describe(path), colonMsg)
			continue
		}
		if !ok {
			if s := suggest(k.Value, names); s != "" {
				d.errorf(nodePos(k), "rename it to "+s+" or remove it", "unknown key %q in %s (did you mean %q?)", k.Value, describe(path), s)
				meant = append(meant, s)
			} else {
				d.errorf(nodePos(k), "remove it or use one of: "+strings.Join(names, ", "), "unknown key %q in %s", k.Value, describe(path))
			}
			continue
		}
		d.pos.key[p] = nodePos(k)
		d.value(val, v.Field(idx), p)
	}
	// A misspelt key already says which key it meant; validation need not add that this key
	// is missing.
	for _, s := range meant {
		if _, present := seen[s]; !present {
			d.bad[join(path, s)] = true
		}
	}
}

// describe renders a path for a message: "the spec", "resources.roster_child.scope".
func describe(path string) string {
	if path == "" {
		return "the spec"
	}
	return path
}
