package uritemplate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMatch(t *testing.T) {
	child := MustCompile("neemias://roster/children/{id}")
	summary := MustCompile("neemias://attendance/summary{?from,to,class_id}")
	fixed := MustCompile("neemias://roster/children")
	tests := []struct {
		tmpl *Template
		uri  string
		want map[string]string // nil: no match
	}{
		{child, "neemias://roster/children/3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60", map[string]string{"id": "3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60"}},
		{child, "neemias://roster/children/abc_DEF.1~2", map[string]string{"id": "abc_DEF.1~2"}},
		{child, "neemias://roster/children/..", nil},
		{child, "neemias://roster/children/.", nil},
		{child, "neemias://roster/children/", nil},
		{child, "neemias://roster/children/a/b", nil},
		{child, "neemias://roster/children/..%2F..%2Fadmin", nil},
		{child, "neemias://roster/children/%252e%252e", nil},
		{child, "neemias://roster/children/a%00", nil},
		{child, "NEEMIAS://roster/children/a", nil},
		{child, "neemias://roster/children/a/", nil},
		{child, "neemias://roster/children/a#x", nil},
		{child, "neemias://roster/children/a?id=b", nil},
		{child, "xneemias://roster/children/a", nil},
		{fixed, "neemias://roster/children", map[string]string{}},
		{fixed, "neemias://roster/children/", nil},
		{summary, "neemias://attendance/summary", map[string]string{}},
		{summary, "neemias://attendance/summary?from=2026-06-01&to=2026-06-30", map[string]string{"from": "2026-06-01", "to": "2026-06-30"}},
		{summary, "neemias://attendance/summary?class_id=x", map[string]string{"class_id": "x"}},
		{summary, "neemias://attendance/summary?", nil},
		{summary, "neemias://attendance/summary?from=", nil},
		{summary, "neemias://attendance/summary?from", nil},
		{summary, "neemias://attendance/summary?from=a&from=b", nil},
		{summary, "neemias://attendance/summary?role=admin", nil},
		{summary, "neemias://attendance/summary?from=a&", nil},
		{summary, "neemias://attendance/summary?from=a%20b", nil},
	}
	for _, tc := range tests {
		t.Run(tc.uri, func(t *testing.T) {
			got, ok := tc.tmpl.Match(tc.uri)
			if ok != (tc.want != nil) {
				t.Fatalf("Match ok = %v, want %v (%v)", ok, tc.want != nil, got)
			}
			if diff := cmp.Diff(tc.want, got); ok && diff != "" {
				t.Errorf("vars (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tmpl := range []string{"a://{", "a://}", "a://{+x}", "a://{x}/{x}", "a://{?x}/more", "a://{#x}", "a://{x y}", "a://p?q={x}", "a://{a{b}}"} {
		if _, err := Compile(tmpl); err == nil {
			t.Errorf("Compile(%q) succeeded", tmpl)
		}
	}
}

// FuzzMatch checks the matcher's invariants on arbitrary URIs: it never panics, and every value
// it returns is non-empty, unreserved-only and never "." or "..".
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"neemias://roster/children/abc", "neemias://roster/children/..", "neemias://roster/children/%2e%2e",
		"neemias://attendance/summary?from=2026-01-01&to=2026-01-31", "neemias://attendance/summary?from=a&from=b", ""} {
		f.Add(s)
	}
	templates := []*Template{MustCompile("neemias://roster/children/{id}"), MustCompile("neemias://attendance/summary{?from,to,class_id}"), MustCompile("x://{a}-{b}/c")}
	f.Fuzz(func(t *testing.T, uri string) {
		for _, tm := range templates {
			vars, ok := tm.Match(uri)
			if !ok {
				continue
			}
			for k, v := range vars {
				if v == "" || v == "." || v == ".." || !isUnreserved(v) {
					t.Fatalf("%s matched %q with %s=%q", tm, uri, k, v)
				}
			}
		}
	})
}
