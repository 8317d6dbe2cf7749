package spec

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ExampleNames is the fixed vocabulary of named fixture values a capability's example
// arguments may refer to, written "$name" (docs/spec-reference.md, "Examples"). The tests
// resolve them against their fixture church (internal/logic: the fixture of fixture_test.go);
// adding a name means teaching that fixture its value.
var ExampleNames = []string{
	"birth_date",         // a birth date (YYYY-MM-DD) that places a child in the fixture's class c1
	"checkin",            // an open check-in id of the fixture (ck1, of child k1 in class c1)
	"child",              // a child id of the fixture (k1, in class c1, with a guardian)
	"child_handle",       // the handle of the fixture's child k1
	"class",              // a class id of the fixture (c1, the volunteer's)
	"day",                // the fixture's service day (YYYY-MM-DD), with check-ins
	"duplicate_child",    // a child id of the fixture with no check-in (k4), to merge into $child
	"duplicate_guardian", // a guardian id of the fixture (g1, of the RESPONSAVEL account), to merge into $guardian
	"fresh_name",         // a child name not yet enrolled, new at every resolution
	"guardian",           // a guardian id of the fixture (g2, the father of k1, who has another guardian)
	"leaving_child",      // a child id of the fixture not in class today (k4, in no class), to archive
	"pickup_adult",       // the name of an adult authorized to take the fixture's child k1 home
	"pickup_adult_id",    // the id of a trusted adult on the pick-up list of the fixture's child k1
	"pickup_code",        // the pick-up code of the fixture's check-ins
}

// Example is one example argument value: a YAML scalar, list or mapping, as JSON would hold it.
// A string "$name" refers to [ExampleNames].
type Example struct{ Value any }

// JSONSchemaAlias describes an example value as any JSON value.
func (Example) JSONSchemaAlias() any { return new(any) }

type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, path string)
}

func (e *Example) decodeNode(d *decoder, n *yaml.Node, path string) {
	var v any
	if err := n.Decode(&v); err != nil {
		d.badValue(n, path, "write a YAML value: a string, number, boolean, list or mapping", "%s is not a value: %v", describe(path), err)
		return
	}
	e.Value = normalizeExample(v)
}

// normalizeExample turns yaml.v3's decoded values into JSON's (map[string]any keys).
func normalizeExample(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, m := range x {
			x[k] = normalizeExample(m)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, m := range x {
			out[fmt.Sprint(k)] = normalizeExample(m)
		}
		return out
	case []any:
		for i, m := range x {
			x[i] = normalizeExample(m)
		}
		return x
	}
	return v
}

// ExampleRefs returns the "$name" references in v, in no particular order.
func ExampleRefs(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "$") {
			out = append(out, strings.TrimPrefix(x, "$"))
		}
	case map[string]any:
		for _, m := range x {
			out = append(out, ExampleRefs(m)...)
		}
	case []any:
		for _, m := range x {
			out = append(out, ExampleRefs(m)...)
		}
	}
	slices.Sort(out)
	return out
}

// examples checks a capability's example arguments: every member names an input, every
// reference is one of [ExampleNames], and every required input has an example.
func (v *validator) examples(p, what, name string, c Capability) {
	known := "$" + strings.Join(ExampleNames, ", $")
	refs := make([]string, len(ExampleNames))
	for i, n := range ExampleNames {
		refs[i] = "$" + n
	}
	for _, e := range c.Example {
		ep := p + ".example." + e.Name
		if _, ok := c.Input.Get(e.Name); !ok {
			v.errorf(v.keyAt(ep), "give examples of declared inputs only", "%s %q: example of unknown input %q%s", what, name, e.Name, v.didYouMean(e.Name, c.Input.Names()))
			continue
		}
		for _, ref := range ExampleRefs(e.Value.Value) {
			if !slices.Contains(ExampleNames, ref) {
				v.errorf(v.at(ep), "use a literal or one of the fixture's named values: "+known,
					"%s %q: example of %q refers to unknown fixture value $%s%s", what, name, e.Name, ref, v.didYouMean("$"+ref, refs))
			}
		}
	}
	for _, in := range c.Input {
		if !in.Value.Required {
			continue
		}
		if _, ok := c.Example.Get(in.Name); !ok {
			at := v.keyAt(p + ".input." + in.Name)
			if len(c.Example) > 0 {
				at = v.keyAt(p + ".example")
			}
			v.errorf(at, fmt.Sprintf("add example: {%s: …} with a literal or one of %s, for the matrix tests", in.Name, known),
				"%s %q: required input %q has no example", what, name, in.Name)
		}
	}
}
