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
	"unicode"
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
	return string(appendFields(nil, buf.Bytes())), nil
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
// JSON), and the template runs compiled (summaryProgram). Any other template shape, or a v
// that is not a pointer to a plain struct, renders over output with RenderSummary.
// TestRenderSummaryOfMatchesJSON and FuzzSummaryOfMatchesJSON hold the paths equal.
func RenderSummaryOf(t *template.Template, v any, output []byte) (string, error) {
	b, err := AppendSummaryOf(nil, t, v, output)
	return string(b), err
}

// AppendSummaryOf appends RenderSummaryOf's sentence to dst.
func AppendSummaryOf(dst []byte, t *template.Template, v any, output []byte) ([]byte, error) {
	b, data, ok := runCompiled(dst, summaryPlanOf(t), v)
	switch {
	case ok:
		return b, nil
	case data == nil:
		s, err := RenderSummary(t, output)
		return append(dst, s...), err
	}
	var buf bytes.Buffer // a value the program does not follow: text/template says what it prints
	if err := t.Execute(&buf, data); err != nil {
		return dst, fmt.Errorf("summary: %w", err)
	}
	return appendFields(dst, buf.Bytes()), nil
}

// runCompiled appends the sentence of plan's program over the typed output v. data is the
// program's data (nil when the plan has no program or v is not a struct it projects); ok is
// false when there is no sentence, also when the program met a value it leaves to
// text/template, which then runs over data.
func runCompiled(dst []byte, plan summaryPlan, v any) (b []byte, data map[string]any, ok bool) {
	if plan.prog == nil {
		return dst, nil, false
	}
	data, ok = projectFields(reflect.ValueOf(v), plan.need)
	if !ok {
		return dst, nil, false
	}
	start := len(dst)
	if b, ok = plan.prog.run(dst, data); !ok {
		return dst, data, false
	}
	return appendFields(b[:start], b[start:]), data, true
}

// appendFields appends text with its runs of white space made one space and trimmed:
// strings.Join(strings.Fields(text), " "). text may be the bytes right after dst's (in place:
// what is written never passes what is read).
func appendFields(dst, text []byte) []byte {
	space, word := false, false
	for i := 0; i < len(text); {
		c, size := rune(text[i]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRune(text[i:])
		}
		if unicode.IsSpace(c) {
			space = true
			i += size
			continue
		}
		if space && word {
			dst = append(dst, ' ')
		}
		space, word = false, true
		dst = append(dst, text[i:i+size]...)
		i += size
	}
	return dst
}

// TypedSummary reports whether RenderSummaryOf renders t from the typed output (rather than
// falling back to decoding the JSON).
func TypedSummary(t *template.Template) bool { return summaryPlanOf(t).prog != nil }

// summaryPlans keeps a summaryPlan by template: a summary is parsed once at start-up and
// never changes, and walking its tree on every call cost a fifth of rendering it.
var summaryPlans sync.Map // *template.Template → summaryPlan

// summaryPlan is what a template uses of the output's fields, and the template compiled; a
// nil prog is a template of another shape.
type summaryPlan struct {
	need map[string]*fieldNeed
	prog summaryProgram
}

func summaryPlanOf(t *template.Template) summaryPlan {
	if p, ok := summaryPlans.Load(t); ok {
		return p.(summaryPlan)
	}
	var plan summaryPlan
	if t.Tree != nil && t.Tree.Root != nil {
		if prog, ok := compileSummary(t.Tree.Root); ok {
			plan = summaryPlan{need: map[string]*fieldNeed{}, prog: prog}
			prog.needs(plan.need)
		}
	}
	summaryPlans.Store(t, plan)
	return plan
}

// fieldNeed is what a template uses of one top-level field: all of it, or only its length and
// some members of its elements.
type fieldNeed struct {
	whole   bool
	members map[string]bool
}

// A summaryProgram is a summary template compiled: text, {{expr}}, and {{if expr}} … {{else}}
// … {{end}}, where expr is .x, len .x, distinct .x "m" or plural A "one" "many" with A an expr
// (the shapes summaries have). It runs over projectFields' data as text/template would, and
// reports a value it does not follow (a null, a list where a number goes) instead of guessing
// what text/template prints or which error it gives: the caller then runs the template.
type summaryProgram []summaryOp

type summaryOp struct {
	text      string       // literal text, when expr and cond are nil
	expr      *summaryExpr // {{expr}}
	cond      *summaryExpr // {{if cond}} then {{else}} els {{end}}
	then, els summaryProgram
}

type summaryExpr struct {
	fn        string // "" (the field itself), "len", "distinct", "plural"
	field     string // the top-level field, for all but plural
	member    string // distinct's member
	arg       *summaryExpr
	one, many string // plural's nouns
}

// compileSummary compiles the template tree n; false for any node beyond summaryProgram's.
func compileSummary(n parse.Node) (summaryProgram, bool) {
	switch n := n.(type) {
	case nil:
		return nil, true
	case *parse.ListNode:
		if n == nil {
			return nil, true
		}
		var prog summaryProgram
		for _, c := range n.Nodes {
			p, ok := compileSummary(c)
			if !ok {
				return nil, false
			}
			prog = append(prog, p...)
		}
		return prog, true
	case *parse.TextNode:
		return summaryProgram{{text: string(n.Text)}}, true
	case *parse.ActionNode:
		e, ok := compileExpr(n.Pipe)
		return summaryProgram{{expr: e}}, ok
	case *parse.IfNode:
		cond, ok := compileExpr(n.Pipe)
		then, okThen := compileSummary(n.List)
		var els summaryProgram
		okElse := true
		if n.ElseList != nil {
			els, okElse = compileSummary(n.ElseList)
		}
		return summaryProgram{{cond: cond, then: then, els: els}}, ok && okThen && okElse
	}
	return nil, false
}

func compileExpr(p *parse.PipeNode) (*summaryExpr, bool) {
	if p == nil || len(p.Decl) > 0 || len(p.Cmds) != 1 {
		return nil, false
	}
	args := p.Cmds[0].Args
	top := func(n parse.Node) (string, bool) {
		f, ok := n.(*parse.FieldNode)
		if !ok || len(f.Ident) != 1 {
			return "", false
		}
		return f.Ident[0], true
	}
	id, ok := args[0].(*parse.IdentifierNode)
	if !ok {
		name, ok := top(args[0])
		return &summaryExpr{field: name}, ok && len(args) == 1
	}
	switch {
	case id.Ident == "len" && len(args) == 2:
		name, ok := top(args[1])
		return &summaryExpr{fn: "len", field: name}, ok
	case id.Ident == "distinct" && len(args) == 3:
		name, ok := top(args[1])
		m, isStr := args[2].(*parse.StringNode)
		if !isStr {
			return nil, false
		}
		return &summaryExpr{fn: "distinct", field: name, member: m.Text}, ok
	case id.Ident == "plural" && len(args) == 4:
		one, okOne := args[2].(*parse.StringNode)
		many, okMany := args[3].(*parse.StringNode)
		if !okOne || !okMany {
			return nil, false
		}
		e := &summaryExpr{fn: "plural", one: one.Text, many: many.Text}
		if name, ok := top(args[1]); ok {
			e.arg = &summaryExpr{field: name}
			return e, true
		}
		sub, ok := args[1].(*parse.PipeNode) // (len .x), (distinct .x "m")
		if !ok {
			return nil, false
		}
		e.arg, ok = compileExpr(sub)
		return e, ok
	}
	return nil, false
}

// needs records in need what the program uses of each field.
func (prog summaryProgram) needs(need map[string]*fieldNeed) {
	for _, op := range prog {
		op.expr.needs(need)
		op.cond.needs(need)
		op.then.needs(need)
		op.els.needs(need)
	}
}

func (e *summaryExpr) needs(need map[string]*fieldNeed) {
	if e == nil {
		return
	}
	if e.fn == "plural" {
		e.arg.needs(need)
		return
	}
	n := need[e.field]
	if n == nil {
		n = &fieldNeed{members: map[string]bool{}}
		need[e.field] = n
	}
	switch e.fn {
	case "":
		n.whole = true
	case "distinct":
		n.members[e.member] = true
	}
}

// run appends the program's text over data; false when a value is not one it follows.
func (prog summaryProgram) run(b []byte, data map[string]any) ([]byte, bool) {
	for _, op := range prog {
		switch {
		case op.expr != nil:
			v, ok := op.expr.eval(data)
			if !ok || v == nil {
				return b, false
			}
			switch v := v.(type) {
			case string:
				b = append(b, v...)
			case gojson.Number:
				b = append(b, v...)
			case int:
				b = strconv.AppendInt(b, int64(v), 10)
			case bool:
				b = strconv.AppendBool(b, v)
			default:
				return b, false
			}
		case op.cond != nil:
			v, ok := op.cond.eval(data)
			if !ok {
				return b, false
			}
			var truth bool
			switch v := v.(type) {
			case nil: // null or missing: false, as text/template's if says of a nil value
			case string:
				truth = v != ""
			case gojson.Number:
				truth = v != ""
			case int:
				truth = v != 0
			case bool:
				truth = v
			case []any:
				truth = len(v) > 0
			default:
				return b, false
			}
			branch := op.els
			if truth {
				branch = op.then
			}
			if b, ok = branch.run(b, data); !ok {
				return b, false
			}
		default:
			b = append(b, op.text...)
		}
	}
	return b, true
}

// eval is the expression's value over data: a field's (nil for a null or missing one), an
// int for len and distinct, plural's string.
func (e *summaryExpr) eval(data map[string]any) (any, bool) {
	if e.fn == "plural" {
		n, ok := e.arg.eval(data)
		if !ok || n == nil {
			return nil, false
		}
		s, err := plural(n, e.one, e.many)
		return s, err == nil
	}
	v := data[e.field]
	switch e.fn {
	case "len":
		switch v := v.(type) {
		case []any:
			return len(v), true
		case string:
			return len(v), true
		}
		return nil, false
	case "distinct":
		if _, ok := v.([]any); !ok {
			return nil, false
		}
		n, err := distinct(v, e.member)
		return n, err == nil
	}
	return v, true
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
// whose JSON names follow rules not followed here (jsonFieldsOf).
func jsonField(s reflect.Value, name string) (f reflect.Value, omitEmpty, found, ok bool) {
	fs := jsonFieldsOf(s.Type())
	if fs == nil {
		return reflect.Value{}, false, false, false
	}
	i := slices.IndexFunc(fs.list, func(f structField) bool { return f.name == name })
	if i < 0 {
		return reflect.Value{}, false, false, true
	}
	return s.Field(fs.list[i].index), fs.list[i].omitEmpty, true, true
}

// structFields are a struct type's fields as the encoder names them, in encoding order.
type structFields struct{ list []structField }

type structField struct {
	name      string
	index     int
	omitEmpty bool
}

// jsonFields caches jsonFieldsOf by struct type.
var jsonFields sync.Map // reflect.Type → *structFields

// jsonFieldsOf is t's exported fields by JSON name, in order; nil for a struct with embedded
// fields, duplicate names or ",string", whose encoding follows encoding/json rules not
// followed here. The summaries' projection and the typed text both read it.
func jsonFieldsOf(t reflect.Type) *structFields {
	if m, ok := jsonFields.Load(t); ok {
		return m.(*structFields)
	}
	fs := &structFields{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			fs = nil
			break
		}
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		n, opts, _ := strings.Cut(tag, ",")
		if n == "" {
			n = sf.Name
		}
		o := strings.Split(opts, ",")
		if slices.ContainsFunc(fs.list, func(f structField) bool { return f.name == n }) || slices.Contains(o, "string") {
			fs = nil
			break
		}
		fs.list = append(fs.list, structField{name: n, index: i, omitEmpty: slices.Contains(o, "omitempty")})
	}
	jsonFields.Store(t, fs)
	return fs
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
