package capability_test

import (
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// TestRenderText: each shape of output as the model reads it. The cases are the shapes the
// spec's outputs take: scalars, a table of flat items, items that hold lists (the class
// list), lists of scalars, nested objects, nulls and omitted paths, values that need quoting.
func TestRenderText(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		omit       []string
		want       string
	}{
		{"scalars in order", `{"to":"2026-06-30","from":"2026-06-01","children":276,"covers":null,"ok":true}`, nil,
			"to: 2026-06-30\nfrom: 2026-06-01\nchildren: 276\nok: true"},
		{"a table, trailing empty cells dropped, omitted column", `{"days":[{"date":"2026-06-07","class_id":"u1","class_name":"Berçário","checkins":49},{"date":"2026-06-14","class_id":"u2","class_name":"Jardim"}]}`,
			[]string{"days[].class_id"},
			"days (2):\ndate | class_name | checkins\n2026-06-07 | Berçário | 49\n2026-06-14 | Jardim"},
		{"a column only later items have", `{"k":[{"a":"1"},{"a":"2","b":"x"}]}`, nil,
			"k (2):\na | b\n1\n2 | x"},
		{"a middle cell left empty", `{"k":[{"a":"1","b":null,"c":"3"}]}`, nil,
			"k (1):\na | b | c\n1 |  | 3"},
		{"items holding lists are blocks", `{"classes":[{"class_id":"u","class_name":"Maternal","headcount":2,"children":[{"handle":"K7Q2MX","label":"Ana S.","checkin_id":"c1","status":"checked_in"}]},{"class_name":"Jardim","children":[]}]}`,
			[]string{"classes[].class_id", "classes[].children[].checkin_id"},
			"classes (2):\n- class_name: Maternal, headcount: 2\n  children (1):\n  handle | label | status\n  K7Q2MX | Ana S. | checked_in\n- class_name: Jardim\n  children: none"},
		{"an omitted list is not a block", `{"k":[{"a":"1","ids":[{"x":"1"}]}]}`, []string{"k[].ids"},
			"k (1):\na\n1"},
		{"list of scalars, empty list", `{"scopes":["a:read","b:write"],"none":[]}`, nil,
			"scopes: a:read, b:write\nnone: none"},
		{"nested object flattened", `{"guardian":{"name":"Maria","phone":{"e164":"+55"}},"id":"g1"}`, nil,
			"guardian.name: Maria\nguardian.phone.e164: +55\nid: g1"},
		{"quoting what could be misread", `{"a":"","b":"x | y","c":"two\nlines","d":" pad","e":"plain text"}`, nil,
			"a: \"\"\nb: \"x | y\"\nc: \"two\\nlines\"\nd: \" pad\"\ne: plain text"},
		{"a root that is not an object", `[1,2]`, nil, "items: 1, 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := capability.RenderText([]byte(tc.json), tc.omit)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRenderTextRefusesBrokenJSON(t *testing.T) {
	for _, doc := range []string{``, `{`, `{"a":1} {"b":2}`, `{"a":}`} {
		if got, err := capability.RenderText([]byte(doc), nil); err == nil {
			t.Errorf("RenderText(%q) = %q, want an error", doc, got)
		} else if !strings.Contains(err.Error(), "render text") {
			t.Errorf("RenderText(%q) error %q does not say what failed", doc, err)
		}
	}
}
