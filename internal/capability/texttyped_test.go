package capability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// specOutputTypes are the output types of every capability of the spec: the result types of
// the generated Handler's capability methods, func(context.Context, *I) (*O, error).
func specOutputTypes(t testing.TB) []reflect.Type {
	h := reflect.TypeFor[capapi.Handler]()
	var out []reflect.Type
	for i := range h.NumMethod() {
		m := h.Method(i).Type
		if m.NumIn() == 2 && m.In(0) == reflect.TypeFor[context.Context]() && m.In(1).Kind() == reflect.Pointer &&
			m.NumOut() == 2 && m.Out(0).Kind() == reflect.Pointer && m.Out(0).Elem().Kind() == reflect.Struct {
			out = append(out, m.Out(0).Elem())
		}
	}
	if want := len(capapi.Capabilities()); len(out) != want {
		t.Fatalf("capapi.Handler has %d capability methods, func(context.Context, *I) (*O, error), for %d capabilities", len(out), want)
	}
	return out
}

// Shapes the spec's outputs do not have today but a capability may declare, and the corners
// of the encoding's rules: omitempty on every kind the plan follows, null and absent
// columns in first-seen order, objects inside list items, lists of scalars, unsigned numbers.
type (
	cornerRow struct {
		A string  `json:"a,omitempty"`
		B *string `json:"b"`
		C int64   `json:"c,omitempty"`
		D *bool   `json:"d,omitempty"`
		E bool    `json:"e,omitempty"`
		F []int64 `json:"f"`
		G uint16  `json:"g"`
	}
	cornerItem struct {
		Name  string      `json:"name"`
		Owner *cornerLeaf `json:"owner,omitempty"`
		Tags  []string    `json:"tags,omitempty"`
		Rows  []cornerRow `json:"rows"`
		When  *time.Time  `json:"when"`
	}
	cornerLeaf struct {
		ID    uuid.UUID         `json:"id"`
		Day   *capability.Date  `json:"day,omitempty"`
		Label string            `json:"label"`
		Inner cornerInnerObject `json:"inner"`
	}
	cornerInnerObject struct {
		N int `json:"n"`
	}
	cornerOutput struct {
		Title  string       `json:"title"`
		Leaf   cornerLeaf   `json:"leaf"`
		Items  []cornerItem `json:"items"`
		Rows   []cornerRow  `json:"rows,omitempty"`
		Counts []int32      `json:"counts"`
		Hidden string       `json:"-"`
		quiet  string
	}
)

// Types the plan leaves to the JSON path: their encoding follows rules it does not.
type (
	withMap       struct{ M map[string]string }
	withFloat     struct{ F float64 }
	withInterface struct{ X any }
	withEmbedded  struct{ cornerInnerObject }
	withStringOpt struct {
		N int `json:"n,string"`
	}
	withBytes     struct{ B []byte }
	withMarshaler struct{ R json.RawMessage }
	withStructOE  struct {
		T time.Time `json:"t,omitempty"`
	}
)

// TestTypedTextCovers: every output type of the spec renders from its fields, and the types
// whose encoding the plan does not follow are left to the JSON.
func TestTypedTextCovers(t *testing.T) {
	for _, ty := range append(specOutputTypes(t), reflect.TypeFor[cornerOutput]()) {
		if !capability.TypedText(ty) {
			t.Errorf("%v renders its text from the JSON: a field type the typed text does not follow; extend planScalar or planField (texttyped.go)", ty)
		}
	}
	for _, ty := range []reflect.Type{reflect.TypeFor[withMap](), reflect.TypeFor[withFloat](), reflect.TypeFor[withInterface](),
		reflect.TypeFor[withEmbedded](), reflect.TypeFor[withStringOpt](), reflect.TypeFor[withBytes](), reflect.TypeFor[withMarshaler](),
		reflect.TypeFor[withStructOE](), reflect.TypeFor[time.Time](), reflect.TypeFor[int]()} {
		if capability.TypedText(ty) {
			t.Errorf("%v renders from its fields; its encoding follows rules the plan does not", ty)
		}
	}
}

// FuzzTextOfMatchesJSON: over random values of every output type of the spec (and the corner
// type above), with any of their paths left out, the text AppendTextOf renders from the
// fields is byte for byte RenderText's text of the value's encoding; a value with a string
// that is not UTF-8 is left to the JSON path, and still renders the same.
func FuzzTextOfMatchesJSON(f *testing.F) {
	types := append(specOutputTypes(f), reflect.TypeFor[cornerOutput]())
	for i := range 2 * len(types) {
		f.Add(uint64(i), uint64(i*7919), uint8(i))
	}
	f.Fuzz(func(t *testing.T, seed, omitBits uint64, which uint8) {
		ty := types[int(which)%len(types)]
		rng := rand.New(rand.NewPCG(seed, omitBits))
		v := reflect.New(ty)
		g := valueGen{rng: rng}
		g.fill(v.Elem(), 0)
		data, err := pipeline.Encode(v.Interface())
		if err != nil {
			t.Fatalf("encoding %v: %v", ty, err)
		}
		var omit []string
		for i, p := range textPaths(ty, "") {
			if omitBits&(1<<(i%64)) != 0 {
				omit = append(omit, p)
			}
		}
		want, err := capability.RenderText(data, omit)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := capability.AppendTypedText([]byte("head\n"), v.Interface(), omit)
		if !ok && !g.badUTF8 {
			t.Fatalf("%v: the typed path refused a value whose strings are all UTF-8:\n%s", ty, data)
		}
		if !ok {
			if string(got) != "head\n" {
				t.Fatalf("%v: a refused typed render left %q in the buffer", ty, got)
			}
			got, err = capability.AppendTextOf([]byte("head\n"), v.Interface(), data, omit)
			if err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != "head\n"+want {
			t.Fatalf("%v omit %q:\n%s\ntyped:\n%s\njson:\n%s", ty, omit, data, strings.TrimPrefix(string(got), "head\n"), want)
		}
	})
}

// TestTextOfBusyDay: the busiest Sunday renders the same from its fields as from its JSON,
// with the spec's own left-out paths.
func TestTextOfBusyDay(t *testing.T) {
	v := busyDay()
	data := busyDayJSON(t)
	omit := entryNotInText(t, capapi.CapCheckinsByDate)
	want, err := capability.RenderText(data, omit)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := capability.AppendTypedText(nil, v, omit)
	if !ok || string(got) != want {
		t.Fatalf("typed (%v):\n%.400s\njson:\n%.400s", ok, got, want)
	}
}

func entryNotInText(t testing.TB, id string) []string {
	for _, c := range capapi.Capabilities() {
		if c.ID == id {
			return c.NotInText
		}
	}
	t.Fatalf("no capability %q", id)
	return nil
}

// BenchmarkTextOf: the busiest Sunday's text from its fields against from its JSON, with
// the fixture's labels (< > & in each, which the JSON escapes and its parse unescapes) and
// with plain ones, as real names are.
func BenchmarkTextOf(b *testing.B) {
	plain := busyDay()
	for _, c := range plain.Classes {
		for i := range c.Checkins {
			c.Checkins[i].ChildLabel = "Maria Eduarda S."
		}
	}
	omit := entryNotInText(b, capapi.CapCheckinsByDate)
	buf := make([]byte, 0, 64<<10)
	for _, doc := range []struct {
		name string
		v    *capapi.CheckinsByDateOutput
	}{{"escaped labels", busyDay()}, {"plain labels", plain}} {
		data, err := pipeline.Encode(doc.v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(doc.name+"/typed", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := capability.AppendTextOf(buf[:0], doc.v, data, omit); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(doc.name+"/json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := capability.AppendText(buf[:0], data, omit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// textPaths are the JSON paths of t's fields, as the spec's in_text: false names them.
func textPaths(t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			path += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[time.Time]() || t == reflect.TypeFor[capability.Date]() {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		p := name
		if path != "" {
			p = path + "." + name
		}
		out = append(out, p)
		out = append(out, textPaths(sf.Type, p)...)
	}
	return out
}

// valueGen fills values at random, weighted to the cases the text's rules turn on: nil and
// empty, zero, strings a reader could misread, a string that is not UTF-8.
type valueGen struct {
	rng     *rand.Rand
	badUTF8 bool
}

var genStrings = []string{"", "Ana S.", "Berçário", " padded ", "a|b", "line\nbreak", "cr\rx", "tab\t", "\u0085nel", `quo"te`, "<&>", "K7Q2MX", "\x01ctl", "émoji 🙂", "\\back"}

func (g *valueGen) fill(v reflect.Value, depth int) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		zones := []*time.Location{time.UTC, time.FixedZone("-03", -3*3600), time.FixedZone("+0530", 5*3600+1800)}
		at := time.Date(2000+g.rng.IntN(40), time.Month(1+g.rng.IntN(12)), 1+g.rng.IntN(28), g.rng.IntN(24), g.rng.IntN(60), g.rng.IntN(60), []int{0, 123456789, 500000000, 1000}[g.rng.IntN(4)], zones[g.rng.IntN(len(zones))])
		v.Set(reflect.ValueOf(at))
		return
	case v.Type() == reflect.TypeFor[capability.Date]():
		v.Set(reflect.ValueOf(capability.NewDate(2000+g.rng.IntN(40), time.Month(1+g.rng.IntN(12)), 1+g.rng.IntN(28))))
		return
	case v.Type() == reflect.TypeFor[uuid.UUID]():
		if g.rng.IntN(4) > 0 {
			var id uuid.UUID
			for i := range id {
				id[i] = byte(g.rng.Uint32())
			}
			v.Set(reflect.ValueOf(id))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if g.rng.IntN(3) == 0 || depth > 6 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		g.fill(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				g.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		switch n := g.rng.IntN(6); {
		case n == 0 || depth > 6:
			return // nil
		case n == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range n - 1 {
				g.fill(v.Index(i), depth+1)
			}
		}
	case reflect.String:
		if g.rng.IntN(40) == 0 {
			g.badUTF8 = true
			v.SetString("bad \xff byte")
			return
		}
		v.SetString(genStrings[g.rng.IntN(len(genStrings))])
	case reflect.Bool:
		v.SetBool(g.rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := []int64{0, 1, -1, 212, 1 << 40}[g.rng.IntN(5)]
		if v.OverflowInt(n) {
			n = 127
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint([]uint64{0, 1, 65535}[g.rng.IntN(3)])
	default:
		panic(fmt.Sprintf("valueGen: no rule for %v", v.Type()))
	}
}
