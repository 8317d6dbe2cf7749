package capability

import (
	"strings"
	"testing"
)

// TestSummaryPlural: plural agrees the noun with counts from len, distinct and output numbers,
// 0/1/2 of each.
func TestSummaryPlural(t *testing.T) {
	for _, tc := range []struct {
		name, tmpl, output, want string
	}{
		{"len 0", `{{plural (len .xs) "check-in" "check-ins"}}`, `{"xs":[]}`, "0 check-ins"},
		{"len 1", `{{plural (len .xs) "check-in" "check-ins"}}`, `{"xs":[{"c":"a"}]}`, "1 check-in"},
		{"len 2", `{{plural (len .xs) "check-in" "check-ins"}}`, `{"xs":[{"c":"a"},{"c":"a"}]}`, "2 check-ins"},
		{"distinct 0", `in {{plural (distinct .xs "c") "class" "classes"}}.`, `{"xs":[]}`, "in 0 classes."},
		{"distinct 1", `in {{plural (distinct .xs "c") "class" "classes"}}.`, `{"xs":[{"c":"a"},{"c":"a"}]}`, "in 1 class."},
		{"distinct 2", `in {{plural (distinct .xs "c") "class" "classes"}}.`, `{"xs":[{"c":"a"},{"c":"b"}]}`, "in 2 classes."},
		{"number 0", `{{plural .n "day" "days"}}`, `{"n":0}`, "0 days"},
		{"number 1", `{{plural .n "day" "days"}}`, `{"n":1}`, "1 day"},
		{"number 2", `{{plural .n "day" "days"}}`, `{"n":2}`, "2 days"},
		{"number 212", `{{plural .n "day" "days"}}`, `{"n":212}`, "212 days"},
		{"missing", `{{plural .n "day" "days"}}`, `{}`, "0 days"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseSummary(tc.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			got, err := RenderSummary(tmpl, []byte(tc.output))
			if err != nil || got != tc.want {
				t.Errorf("%s over %s = %q, %v; want %q", tc.tmpl, tc.output, got, err, tc.want)
			}
		})
	}
	tmpl, _ := ParseSummary(`{{plural .n "day" "days"}}`)
	if got, err := RenderSummary(tmpl, []byte(`{"n":"x"}`)); err == nil {
		t.Errorf("plural of a string = %q, want an error", got)
	}
}

// FuzzAppendFieldsMatchesFields: appendFields is strings.Join(strings.Fields(s), " "), also
// in place over its own bytes.
func FuzzAppendFieldsMatchesFields(f *testing.F) {
	for _, s := range []string{"", " ", "a", "  a \n\t b  ", "a\u00a0b\u2028c", "\xff \xfe", "a\u0085b", " x  y z "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := "head " + strings.Join(strings.Fields(s), " ")
		if got := string(appendFields([]byte("head "), []byte(s))); got != want {
			t.Fatalf("appendFields(%q) = %q, want %q", s, got, want)
		}
		b := append([]byte("head "), s...)
		if got := string(appendFields(b[:5], b[5:])); got != want {
			t.Fatalf("in place over %q: %q, want %q", s, got, want)
		}
	})
}
