package spec

import (
	"os"
	"reflect"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExampleNamesAreListedEverywhere: besides ExampleNames, the $names are spelled out where
// spec authors read them (the description of example: in the spec's JSON Schema, which editors
// show, and the tables of docs/spec-reference.md and docs/adding-a-capability.md). The checker
// reads only ExampleNames, so a name added there and missed in one of those would pass every
// other test and leave authors reaching for a value nobody told them about, or one that is gone.
func TestExampleNamesAreListedEverywhere(t *testing.T) {
	var want []string
	for _, n := range ExampleNames {
		want = append(want, "$"+n)
	}
	field, ok := reflect.TypeFor[Capability]().FieldByName("Example")
	if !ok {
		t.Fatal("Capability has no Example field")
	}
	desc := field.Tag.Get("jsonschema_description")
	// The description says "written $name (…)" and then lists the names.
	if got := regexp.MustCompile(`\$[a-z_]+`).FindAllString(desc, -1); len(got) == 0 || got[0] != "$name" || !cmp.Equal(got[1:], want) {
		t.Errorf("the jsonschema_description of Capability.Example lists %v, want $name then %v", got, want)
	}
	row := regexp.MustCompile("(?m)^\\| `(\\$[a-z_]+)` \\|")
	for _, doc := range []string{"../../../docs/spec-reference.md", "../../../docs/adding-a-capability.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range row.FindAllStringSubmatch(string(b), -1) {
			got = append(got, m[1])
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: the table of example names differs from spec.ExampleNames (-want +got):\n%s", doc, d)
		}
	}
}
