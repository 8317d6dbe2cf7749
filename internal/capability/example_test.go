package capability

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExampleArgs(t *testing.T) {
	fixture := map[string]func() any{"child": func() any { return "k1" }, "day": func() any { return "2026-06-07" }}
	c := Capability{ID: "x", Example: []byte(`{"id":"$child","when":{"days":["$day","2026-01-01"]},"n":3}`)}
	got, err := c.ExampleArgs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": "k1", "when": map[string]any{"days": []any{"2026-06-07", "2026-01-01"}}, "n": float64(3)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ExampleArgs (-want +got):\n%s", d)
	}
	if got, err := (&Capability{ID: "none"}).ExampleArgs(fixture); err != nil || len(got) != 0 {
		t.Errorf("no example: %v, %v; want {}", got, err)
	}
	_, err = (&Capability{ID: "y", Source: "spec y", Example: []byte(`{"id":"$chlid"}`)}).ExampleArgs(fixture)
	if err == nil || !strings.Contains(err.Error(), "unknown fixture value $chlid (known: $child, $day)") {
		t.Errorf("unknown reference: err = %v", err)
	}
}
