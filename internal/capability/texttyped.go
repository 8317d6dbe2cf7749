package capability

import (
	"encoding"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// AppendTextOf appends RenderText's text of data, the JSON encoding of the typed output v
// (the pipeline's one encoding of the finalized value), reading v's fields instead of parsing
// data: a busy Sunday's text costs two thirds of the parse and render of its JSON, a quarter
// when its strings carry escapes, and no allocation per value (BenchmarkTextOf). The rules are RenderText's, applied to what the encoding would say
// of each field: a nil pointer or slice is null (absent with omitempty, as an empty string,
// number or list is), a struct is an object, a slice a list, time.Time, Date and any
// TextMarshaler their text. A type whose encoding the plan does not follow (maps, interfaces,
// floats, embedded fields, other Marshalers, ",string"), and a value whose text would differ
// (a string that is not UTF-8, which the encoder replaces), render from data with AppendText.
// FuzzTextOfMatchesJSON holds the two paths equal over every output type of the spec.
func AppendTextOf(dst []byte, v any, data []byte, notInText []string) ([]byte, error) {
	if b, ok := appendTypedText(slices.Grow(dst, TextSizeHint(data)), v, notInText); ok {
		return b, nil
	}
	return AppendText(dst, data, notInText)
}

// appendTypedText is AppendTextOf's typed path; false (and dst as it was) when v is not a
// pointer to a struct the plan covers, or holds a value only its JSON renders right.
func appendTypedText(dst []byte, v any, notInText []string) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return dst, false
	}
	plan := textPlanOf(rv.Type().Elem())
	if plan == nil {
		return dst, false
	}
	r := typedText{omit: notInText, b: dst}
	r.object("", "", "", plan, rv.Elem(), true)
	if r.failed {
		return r.b[:len(dst)], false
	}
	return trimTrailingLines(r.b, len(dst)), true
}

// TypedText reports whether AppendTextOf renders outputs of type t (a struct) from their
// fields rather than from their JSON.
func TypedText(t reflect.Type) bool { return textPlanOf(t) != nil }

// trimTrailingLines drops the line breaks that end b[start:].
func trimTrailingLines(b []byte, start int) []byte {
	end := len(b)
	for end > start && b[end-1] == '\n' {
		end--
	}
	return b[:end]
}

// textStruct is how a struct type's fields encode, in encoding order (the struct's).
type textStruct struct {
	fields []textField
	// containers reports a field that encodes as an object or a list: only then can a list
	// of these structs be more than a table.
	containers bool
}

type textField struct {
	name      string
	index     int
	omitEmpty bool
	ptr       bool // a pointer: nil encodes as null
	shape     textShape
	scalar    scalarText  // shapeScalar
	object    *textStruct // shapeObject, and the items of a shapeList of objects
	items     scalarText  // the items of a shapeList of scalars
}

type textShape uint8

const (
	shapeScalar textShape = iota
	shapeObject
	shapeList
)

// scalarText appends a scalar's text, as decoding its JSON would give it; false when the
// typed path cannot say (the caller falls back to the JSON).
type scalarText func(b []byte, v reflect.Value) ([]byte, bool)

// textPlans caches textStruct by struct type; a nil plan is a type left to the JSON path.
var textPlans sync.Map // reflect.Type → *textStruct

func textPlanOf(t reflect.Type) *textStruct {
	if p, ok := textPlans.Load(t); ok {
		return p.(*textStruct)
	}
	p := planStruct(t, 0)
	textPlans.Store(t, p)
	return p
}

var (
	timeType = reflect.TypeFor[time.Time]()
	dateType = reflect.TypeFor[Date]()
)

// maxPlanDepth bounds a plan's nesting; deeper (or recursive) types take the JSON path.
const maxPlanDepth = 8

func planStruct(t reflect.Type, depth int) *textStruct {
	if t.Kind() != reflect.Struct || depth > maxPlanDepth || encodingOf(t) != encodesByKind {
		return nil
	}
	fields := jsonFieldsOf(t)
	if fields == nil {
		return nil
	}
	s := &textStruct{}
	for _, jf := range fields.list {
		if !plainName(jf.name) {
			return nil
		}
		f := textField{name: jf.name, index: jf.index, omitEmpty: jf.omitEmpty}
		ft := t.Field(jf.index).Type
		if ft.Kind() == reflect.Pointer {
			f.ptr, ft = true, ft.Elem()
		}
		if !planField(&f, ft, depth) {
			return nil
		}
		s.containers = s.containers || f.shape != shapeScalar
		s.fields = append(s.fields, f)
	}
	return s
}

// planField fills f's shape for the (dereferenced) type t.
func planField(f *textField, t reflect.Type, depth int) bool {
	if f.scalar = planScalar(t); f.scalar != nil {
		f.shape = shapeScalar
		// omitempty drops empty strings, numbers and booleans; on other scalars (time.Time,
		// Date, a TextMarshaler) only pointers are followed here.
		return !f.omitEmpty || f.ptr || isKind(t, reflect.String, reflect.Bool) || isInteger(t)
	}
	switch t.Kind() {
	case reflect.Struct:
		f.shape, f.object = shapeObject, planStruct(t, depth+1)
		return f.object != nil && (!f.omitEmpty || f.ptr)
	case reflect.Slice:
		if f.ptr || encodingOf(t) != encodesByKind {
			return false
		}
		f.shape = shapeList
		e := t.Elem()
		if f.items = planScalar(e); f.items != nil {
			return e.Kind() != reflect.Uint8 // []byte encodes as base64
		}
		f.object = planStruct(e, depth+1)
		return f.object != nil
	}
	return false
}

// planScalar is the text of a scalar type, nil for a type that is not one this follows.
func planScalar(t reflect.Type) scalarText {
	switch {
	case t == timeType:
		return func(b []byte, v reflect.Value) ([]byte, bool) {
			return valueAs[time.Time](v).AppendFormat(b, time.RFC3339Nano), true
		}
	case t == dateType:
		return func(b []byte, v reflect.Value) ([]byte, bool) {
			return valueAs[Date](v).t.AppendFormat(b, time.DateOnly), true
		}
	case encodingOf(t) == encodesAsJSON:
		return nil // its own JSON, or a pointer-receiver method whose use depends on addressability
	case encodingOf(t) == encodesAsText:
		return func(b []byte, v reflect.Value) ([]byte, bool) {
			m, ok := v.Interface().(encoding.TextMarshaler)
			if v.CanAddr() {
				m, ok = v.Addr().Interface().(encoding.TextMarshaler)
			}
			if !ok {
				return b, false
			}
			text, err := m.MarshalText()
			if err != nil || !utf8.Valid(text) {
				return b, false
			}
			return appendCell(b, string(text)), true
		}
	case t.Kind() == reflect.String:
		return func(b []byte, v reflect.Value) ([]byte, bool) {
			s := v.String()
			class := cellClass(s)
			if class&cellMultibyte != 0 && !utf8.ValidString(s) {
				return b, false // the encoder writes U+FFFD for the bad bytes
			}
			return appendClassedCell(b, s, class), true
		}
	case t.Kind() == reflect.Bool:
		return func(b []byte, v reflect.Value) ([]byte, bool) { return strconv.AppendBool(b, v.Bool()), true }
	case isKind(t, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64):
		return func(b []byte, v reflect.Value) ([]byte, bool) { return strconv.AppendInt(b, v.Int(), 10), true }
	case isKind(t, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64):
		return func(b []byte, v reflect.Value) ([]byte, bool) { return strconv.AppendUint(b, v.Uint(), 10), true }
	}
	return nil
}

// valueAs is v's value as a T, through its address when it has one: boxing a time.Time in an
// interface would allocate, twice a row.
func valueAs[T any](v reflect.Value) T {
	if v.CanAddr() {
		return *v.Addr().Interface().(*T)
	}
	return v.Interface().(T)
}

func isKind(t reflect.Type, kinds ...reflect.Kind) bool { return slices.Contains(kinds, t.Kind()) }

func isInteger(t reflect.Type) bool {
	return isKind(t, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64)
}

// plainName is a JSON name the encoder writes as it is and the text shows as it is.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// presence is what the encoding of a field says: nothing, null, or a value.
type presence uint8

const (
	absent presence = iota
	null
	present
)

// value is the field of struct s as encoded: its presence and, when present, its value with
// any pointer followed.
func (f *textField) value(s reflect.Value) (presence, reflect.Value) {
	v := s.Field(f.index)
	if f.ptr {
		if v.IsNil() {
			if f.omitEmpty {
				return absent, v
			}
			return null, v
		}
		return present, v.Elem()
	}
	switch {
	case f.shape == shapeList && v.IsNil():
		if f.omitEmpty {
			return absent, v
		}
		return null, v
	case f.omitEmpty && isEmptyJSON(v):
		return absent, v
	}
	return present, v
}

// typedText renders a typed output as RenderText renders its JSON; each method mirrors the
// textRenderer method of its name.
type typedText struct {
	omit   []string
	b      []byte
	failed bool // a scalar the typed path cannot render: the caller renders the JSON
}

func (r *typedText) scalar(f scalarText, v reflect.Value) {
	var ok bool
	if r.b, ok = f(r.b, v); !ok {
		r.failed = true
	}
}

func (r *typedText) object(indent, path, label string, s *textStruct, v reflect.Value, scalars bool) {
	for i := range s.fields {
		f := &s.fields[i]
		p, fv := f.value(v)
		if p != present || omittedAt(r.omit, path, f.name) {
			continue
		}
		switch f.shape {
		case shapeObject:
			r.object(indent, join(path, f.name), label+f.name+".", f.object, fv, true)
		case shapeList:
			r.list(indent, join(path, f.name), label+f.name, f, fv)
		default:
			if !scalars {
				continue
			}
			r.b = append(r.b, indent...)
			r.b = append(r.b, label...)
			r.b = append(r.b, f.name...)
			r.b = append(r.b, ": "...)
			r.scalar(f.scalar, fv)
			r.b = append(r.b, '\n')
		}
	}
}

func (r *typedText) list(indent, path, name string, l *textField, v reflect.Value) {
	n := v.Len()
	if n == 0 {
		r.b = append(append(append(r.b, indent...), name...), ": none\n"...)
		return
	}
	item := path + "[]"
	if l.object == nil { // a list of scalars: one line
		r.b = append(append(append(r.b, indent...), name...), ": "...)
		for i := range n {
			if i > 0 {
				r.b = append(r.b, ", "...)
			}
			r.scalar(l.items, v.Index(i))
		}
		r.b = append(r.b, '\n')
		return
	}
	s := l.object
	if r.nested(item, s, v) {
		r.b = appendCount(r.b, indent, name, n)
		for i := range n {
			e := v.Index(i)
			r.b = append(r.b, indent...)
			r.b = append(r.b, "- "...)
			first := true
			for j := range s.fields {
				f := &s.fields[j]
				if p, fv := f.value(e); p == present && f.shape == shapeScalar && !omittedAt(r.omit, item, f.name) {
					if !first {
						r.b = append(r.b, ", "...)
					}
					first = false
					r.b = append(append(r.b, f.name...), ": "...)
					r.scalar(f.scalar, fv)
				}
			}
			r.b = append(r.b, '\n')
			r.object(indent+"  ", item, "", s, e, false)
		}
		return
	}
	r.table(indent, item, name, s, v)
}

// nested reports whether an item of the list v holds an object or a list the text shows.
func (r *typedText) nested(item string, s *textStruct, v reflect.Value) bool {
	if !s.containers {
		return false
	}
	for i := range v.Len() {
		e := v.Index(i)
		for j := range s.fields {
			f := &s.fields[j]
			if f.shape == shapeScalar {
				continue
			}
			if p, _ := f.value(e); p == present && !omittedAt(r.omit, item, f.name) {
				return true
			}
		}
	}
	return false
}

// table writes a list of flat objects: the columns are the fields the items encode (null
// ones too), in first-seen order, as RenderText finds them.
func (r *typedText) table(indent, item, name string, s *textStruct, v reflect.Value) {
	n := v.Len()
	var colsBuf [16]int
	cols := colsBuf[:0] // field indexes
	var seenBuf [32]bool
	var seen []bool
	if len(s.fields) <= len(seenBuf) {
		seen = seenBuf[:len(s.fields)]
	} else {
		seen = make([]bool, len(s.fields))
	}
	for i := range n {
		e := v.Index(i)
		for j := range s.fields {
			if seen[j] {
				continue
			}
			if p, _ := s.fields[j].value(e); p != absent {
				seen[j] = true
				if !omittedAt(r.omit, item, s.fields[j].name) {
					cols = append(cols, j)
				}
			}
		}
	}
	r.b = appendCount(r.b, indent, name, n)
	r.b = append(r.b, indent...)
	for k, j := range cols {
		if k > 0 {
			r.b = append(r.b, " | "...)
		}
		r.b = append(r.b, s.fields[j].name...)
	}
	r.b = append(r.b, '\n')
	for i := range n {
		e := v.Index(i)
		last := -1
		for k, j := range cols {
			if f := &s.fields[j]; f.shape == shapeScalar {
				if p, _ := f.value(e); p == present {
					last = k
				}
			}
		}
		r.b = append(r.b, indent...)
		for k, j := range cols[:last+1] {
			if k > 0 {
				r.b = append(r.b, " | "...)
			}
			if f := &s.fields[j]; f.shape == shapeScalar {
				if p, fv := f.value(e); p == present {
					r.scalar(f.scalar, fv)
				}
			}
		}
		r.b = append(r.b, '\n')
	}
}
