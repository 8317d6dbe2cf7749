package spec

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"

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

// decoder turns a YAML node tree into the Go model, strictly: unknown keys, duplicate keys and
// type mismatches are diagnostics, never panics, and decoding goes on to find every problem.
type decoder struct {
	file  string
	pos   positions
	diags Diagnostics
}

func (d *decoder) errorf(p Pos, hint, format string, args ...any) {
	d.diags = append(d.diags, Diagnostic{File: d.file, Pos: p, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func nodePos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

// decodeFile parses src and decodes it into a Spec.
func decodeFile(file string, src []byte) (*Spec, positions, Diagnostics) {
	d := &decoder{file: file, pos: positions{key: map[string]Pos{}, val: map[string]Pos{}}}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&root); err != nil {
		line, msg := yamlErrorLine(err)
		d.errorf(Pos{line, 1}, "fix the YAML syntax", "%s", msg)
		return nil, d.pos, d.diags
	}
	if len(root.Content) == 0 {
		d.errorf(Pos{1, 1}, "start from the example in docs/spec-reference.md", "the spec is empty")
		return nil, d.pos, d.diags
	}
	var s Spec
	d.value(root.Content[0], reflect.ValueOf(&s).Elem(), "")
	return &s, d.pos, d.diags
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
		name := k.Value
		p := join(path, name)
		if first, dup := seen[name]; dup {
			d.errorf(nodePos(k), "rename or remove one of them", "duplicate name %q (first defined at line %d)", name, first.Line)
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

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.pos.val[path] = nodePos(n)
	if v.Addr().Type().Implements(entryDecoderType) {
		if n.Kind != yaml.MappingNode {
			if n.Tag == "!!null" {
				return
			}
			d.errorf(nodePos(n), "write a mapping of name: value", "%s must be a mapping, got %s", describe(path), kindName(n))
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
			d.errorf(nodePos(n), "write a list, for example [a, b]", "%s must be a list, got %s", describe(path), kindName(n))
			return
		}
		sl := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.value(item, sl.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(sl)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			d.errorf(nodePos(n), "write a string", "%s must be a string, got %s", describe(path), kindName(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			d.errorf(nodePos(n), "write true or false", "%s must be true or false, got %s", describe(path), kindName(n))
			return
		}
		v.SetBool(n.Value == "true")
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 10, 64)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil {
			d.errorf(nodePos(n), "write a whole number", "%s must be an integer, got %s", describe(path), kindName(n))
			return
		}
		v.SetInt(i)
	default:
		panic(fmt.Sprintf("spec model field of unsupported kind %s at %s", v.Kind(), path)) // a bug in model.go, not in a spec
	}
}

func (d *decoder) structValue(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(nodePos(n), "write a mapping of key: value", "%s must be a mapping, got %s", describe(path), kindName(n))
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
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.errorf(nodePos(k), "remove one of them", "duplicate key %q (first at line %d)", k.Value, first.Line)
			continue
		}
		seen[k.Value] = nodePos(k)
		idx, ok := fields[k.Value]
		if !ok {
			d.errorf(nodePos(k), "remove it or use one of: "+strings.Join(names, ", "),
				"unknown key %q in %s%s", k.Value, describe(path), didYouMean(k.Value, names))
			continue
		}
		d.pos.key[p] = nodePos(k)
		d.value(val, v.Field(idx), p)
	}
}

// describe renders a path for a message: "the spec", "resources.roster_child.scope".
func describe(path string) string {
	if path == "" {
		return "the spec"
	}
	return path
}
