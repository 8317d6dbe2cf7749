package capability

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
)

// Summaries: a capability may declare a one-sentence narrative for the model (the spec's
// summary:), a Go text/template over its output as it goes on the wire, by JSON name:
//
//	{{plural (len .checkins) "check-in" "check-ins"}} on {{.date}} in {{plural (distinct .checkins "class_id") "class" "classes"}}
//
// It runs on the finalized output, after redaction (the typed value, RenderSummaryOf, or its
// JSON, RenderSummary), so it can never print what the caller's scopes leave out. The generator validates every template (fields, functions, no personal
// data); the runtime parses them again at start-up.

// SummaryFuncs are the functions a summary may call besides the builtin len.
var SummaryFuncs = template.FuncMap{"distinct": distinct, "plural": plural}

// ParseSummary parses a summary template.
func ParseSummary(src string) (*template.Template, error) {
	return template.New("summary").Option("missingkey=zero").Funcs(SummaryFuncs).Parse(src)
}

// RenderSummary executes t over the output JSON (an object) and returns the sentence, trimmed
// and on one line.
func RenderSummary(t *template.Template, output []byte) (string, error) {
	// goccy/go-json, the pipeline's encoder's library: a third of encoding/json's time and
	// allocations for the busiest day's 212 check-ins (BenchmarkRenderSummary), the same values.
	dec := gojson.NewDecoder(bytes.NewReader(output))
	dec.UseNumber() // 212 prints as 212, never 2.12e+02
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("summary: decoding output: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return "", fmt.Errorf("summary: %w", err)
	}
	return strings.Join(strings.Fields(buf.String()), " "), nil
}

// distinct counts the distinct values of member field among the objects of list.
func distinct(list any, field string) (int, error) {
	items, ok := list.([]any)
	if !ok {
		if list == nil {
			return 0, nil
		}
		return 0, fmt.Errorf("distinct: %T is not a list", list)
	}
	seen := map[string]bool{}
	for _, it := range items {
		obj, ok := it.(map[string]any)
		if !ok {
			return 0, fmt.Errorf("distinct: an element is %T, not an object", it)
		}
		if val, ok := obj[field]; ok && val != nil {
			seen[fmt.Sprint(val)] = true
		}
	}
	return len(seen), nil
}

// RenderSummaryOf renders t over the typed output v whose JSON encoding is output, without
// decoding output: when t only prints top-level fields, branches on them with if, and calls
// len, distinct and plural on them (every summary the spec has), the template's data is built from v's
// fields as the JSON names them, and only those, each value as decoding output would have
// given it (strings, json.Number for integers, nil for null; anything else through its own
// JSON). Any other template shape, or a v that is not a pointer to a plain struct, renders
// over output with RenderSummary. TestRenderSummaryOfMatchesJSON holds the two paths equal.
func RenderSummaryOf(t *template.Template, v any, output []byte) (string, error) {
	need, ok := summaryNeedsOf(t)
	if !ok {
		return RenderSummary(t, output)
	}
	data, ok := projectFields(reflect.ValueOf(v), need)
	if !ok {
		return RenderSummary(t, output)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return "", fmt.Errorf("summary: %w", err)
	}
	return strings.Join(strings.Fields(buf.String()), " "), nil
}

// TypedSummary reports whether RenderSummaryOf renders t from the typed output (rather than
// falling back to decoding the JSON).
func TypedSummary(t *template.Template) bool {
	_, ok := summaryNeedsOf(t)
	return ok
}

// summaryPlans keeps summaryNeeds by template: a summary is parsed once at start-up and never
// changes, and walking its tree on every call cost a fifth of rendering it.
var summaryPlans sync.Map // *template.Template → summaryPlan

type summaryPlan struct {
	need map[string]*fieldNeed
	ok   bool
}

func summaryNeedsOf(t *template.Template) (map[string]*fieldNeed, bool) {
	if p, ok := summaryPlans.Load(t); ok {
		plan := p.(summaryPlan)
		return plan.need, plan.ok
	}
	need, ok := summaryNeeds(t)
	summaryPlans.Store(t, summaryPlan{need, ok})
	return need, ok
}

// fieldNeed is what a template uses of one top-level field: all of it, or only its length and
// some members of its elements.
type fieldNeed struct {
	whole   bool
	members map[string]bool
}

// summaryNeeds walks t's tree; ok is false for any node beyond text, {{.x}}, {{if}}/{{else}}
// over such pipes, {{len .x}}, {{distinct .x "m"}} and {{plural A "one" "many"}} where A is
// .x, (len .x) or (distinct .x "m").
func summaryNeeds(t *template.Template) (map[string]*fieldNeed, bool) {
	if t.Tree == nil || t.Tree.Root == nil {
		return nil, false
	}
	need := map[string]*fieldNeed{}
	get := func(name string) *fieldNeed {
		n := need[name]
		if n == nil {
			n = &fieldNeed{members: map[string]bool{}}
			need[name] = n
		}
		return n
	}
	top := func(n parse.Node) (string, bool) {
		f, ok := n.(*parse.FieldNode)
		if !ok || len(f.Ident) != 1 {
			return "", false
		}
		return f.Ident[0], true
	}
	var pipe func(p *parse.PipeNode) bool
	var walk func(n parse.Node) bool
	cmd := func(args []parse.Node) bool {
		if id, ok := args[0].(*parse.IdentifierNode); ok {
			switch {
			case id.Ident == "len" && len(args) == 2:
				name, ok := top(args[1])
				if ok {
					get(name)
				}
				return ok
			case id.Ident == "distinct" && len(args) == 3:
				name, ok := top(args[1])
				m, isStr := args[2].(*parse.StringNode)
				if ok && isStr {
					get(name).members[m.Text] = true
				}
				return ok && isStr
			case id.Ident == "plural" && len(args) == 4:
				_, one := args[2].(*parse.StringNode)
				_, many := args[3].(*parse.StringNode)
				if !one || !many {
					return false
				}
				if name, ok := top(args[1]); ok {
					get(name).whole = true
					return true
				}
				sub, ok := args[1].(*parse.PipeNode) // (len .x), (distinct .x "m")
				return ok && pipe(sub)
			}
			return false
		}
		if len(args) != 1 {
			return false
		}
		name, ok := top(args[0])
		if ok {
			get(name).whole = true
		}
		return ok
	}
	pipe = func(p *parse.PipeNode) bool {
		if p == nil || len(p.Decl) > 0 || len(p.Cmds) != 1 {
			return false
		}
		return cmd(p.Cmds[0].Args)
	}
	walk = func(n parse.Node) bool {
		switch n := n.(type) {
		case nil:
			return true
		case *parse.ListNode:
			if n == nil {
				return true
			}
			for _, c := range n.Nodes {
				if !walk(c) {
					return false
				}
			}
			return true
		case *parse.TextNode:
			return true
		case *parse.ActionNode:
			return pipe(n.Pipe)
		case *parse.IfNode:
			return pipe(n.Pipe) && walk(n.List) && (n.ElseList == nil || walk(n.ElseList))
		}
		return false
	}
	return need, walk(t.Tree.Root)
}

var (
	jsonMarshaler = reflect.TypeFor[gojson.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// projectFields builds the template data of need from the struct v points to.
func projectFields(v reflect.Value, need map[string]*fieldNeed) (map[string]any, bool) {
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	s := v.Elem()
	data := make(map[string]any, len(need))
	for name, n := range need {
		f, omitEmpty, found, ok := jsonField(s, name)
		if !ok {
			return nil, false
		}
		if !found || (omitEmpty && isEmptyJSON(f)) {
			continue
		}
		if n.whole {
			val, ok := jsonValue(f)
			if !ok {
				return nil, false
			}
			data[name] = val
			continue
		}
		for f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface {
			if f.IsNil() {
				break
			}
			f = f.Elem()
		}
		switch {
		case (f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface) && f.IsNil():
			data[name] = nil
		case f.Kind() == reflect.Slice && f.IsNil():
			data[name] = nil
		case (f.Kind() == reflect.Slice || f.Kind() == reflect.Array) && f.Type().Elem().Kind() != reflect.Uint8 && !implementsJSON(f):
			list := make([]any, f.Len())
			for i := range list {
				if len(n.members) == 0 {
					continue // only len: the elements are never looked at
				}
				e := f.Index(i)
				if e.Kind() == reflect.Pointer {
					if e.IsNil() {
						continue
					}
					e = e.Elem()
				}
				if e.Kind() != reflect.Struct || implementsJSON(e) {
					return nil, false
				}
				obj := make(map[string]any, len(n.members))
				for m := range n.members {
					mf, omit, found, ok := jsonField(e, m)
					if !ok {
						return nil, false
					}
					if !found || (omit && isEmptyJSON(mf)) {
						continue
					}
					val, ok := jsonValue(mf)
					if !ok {
						return nil, false
					}
					obj[m] = val
				}
				list[i] = obj
			}
			data[name] = list
		default:
			val, ok := jsonValue(f)
			if !ok {
				return nil, false
			}
			data[name] = val
		}
	}
	return data, true
}

// jsonField finds the field of struct s that encodes as JSON name. ok is false for structs
// with embedded fields, whose JSON names follow rules this does not follow.
func jsonField(s reflect.Value, name string) (f reflect.Value, omitEmpty, found, ok bool) {
	fs := structFieldsOf(s.Type())
	if fs == nil {
		return reflect.Value{}, false, false, false
	}
	sf, found := fs[name]
	if !found {
		return reflect.Value{}, false, false, true
	}
	return s.Field(sf.index), sf.omitEmpty, true, true
}

type structField struct {
	index     int
	omitEmpty bool
}

// structFields caches, per struct type, its fields by JSON name (nil: has embedded fields).
var structFields sync.Map // reflect.Type → map[string]structField

func structFieldsOf(t reflect.Type) map[string]structField {
	if m, ok := structFields.Load(t); ok {
		return m.(map[string]structField)
	}
	m := map[string]structField{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			m = nil
			break
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		n, opts, _ := strings.Cut(tag, ",")
		if n == "" {
			n = sf.Name
		}
		o := strings.Split(opts, ",")
		if _, dup := m[n]; dup || slices.Contains(o, "string") {
			m = nil // duplicate names and ",string" follow encoding/json rules not followed here
			break
		}
		m[n] = structField{index: i, omitEmpty: slices.Contains(o, "omitempty")}
	}
	structFields.Store(t, m)
	return m
}

// How a type encodes: through MarshalJSON, through MarshalText only, or by its kind.
const (
	encodesByKind = iota
	encodesAsText
	encodesAsJSON
)

var encodings sync.Map // reflect.Type → int

func encodingOf(t reflect.Type) int {
	if e, ok := encodings.Load(t); ok {
		return e.(int)
	}
	e := encodesByKind
	switch {
	case t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler):
		e = encodesAsJSON
	case t.Implements(textMarshaler):
		e = encodesAsText
	case reflect.PointerTo(t).Implements(textMarshaler):
		e = encodesAsJSON // a pointer-receiver MarshalText: let the encoder decide
	}
	encodings.Store(t, e)
	return e
}

func implementsJSON(v reflect.Value) bool { return encodingOf(v.Type()) != encodesByKind }

// isEmptyJSON is encoding/json's omitempty rule.
func isEmptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// jsonValue is what decoding v's JSON encoding (UseNumber) gives: plain strings, booleans and
// integers directly, a TextMarshaler's text, anything else through its encoding.
func jsonValue(v reflect.Value) (any, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil, true
		}
		v = v.Elem()
	}
	switch encodingOf(v.Type()) {
	case encodesAsText:
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil || !utf8.Valid(b) {
			return nil, false
		}
		return string(b), true
	case encodesByKind:
		switch v.Kind() {
		case reflect.String:
			if s := v.String(); utf8.ValidString(s) {
				return s, true
			}
			return nil, false
		case reflect.Bool:
			return v.Bool(), true
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return gojson.Number(strconv.FormatInt(v.Int(), 10)), true
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return gojson.Number(strconv.FormatUint(v.Uint(), 10)), true
		}
	}
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface()
	}
	b, err := gojson.Marshal(x)
	if err != nil {
		return nil, false
	}
	dec := gojson.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, false
	}
	return out, true
}

// plural prints a count with the noun that agrees with it: {{plural 1 "class" "classes"}} is
// "1 class", and 0 or 2 give "0 classes", "2 classes" (English, as summaries are). n is an int
// (len, distinct) or an output number (a json.Number, since outputs decode with UseNumber); a
// missing field counts as 0.
func plural(n any, one, many string) (string, error) {
	var s string
	switch v := n.(type) {
	case nil:
		s = "0"
	case int:
		s = strconv.Itoa(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case gojson.Number: // = encoding/json.Number
		s = v.String()
	default:
		return "", fmt.Errorf("plural: %T is not a number", n)
	}
	if s == "1" {
		return s + " " + one, nil
	}
	return s + " " + many, nil
}
