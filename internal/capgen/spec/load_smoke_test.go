package spec

import "testing"

// TestLoadRealSpec: the committed spec loads, with at least one resource and one tool (how many
// is the spec's business, not this test's).
func TestLoadRealSpec(t *testing.T) {
	s, err := Load("../../../spec/capabilities.yaml")
	if err != nil {
		t.Fatalf("the committed spec must load:\n%v", err)
	}
	if len(s.Resources) == 0 || len(s.Tools) == 0 {
		t.Errorf("resources = %d, tools = %d; the real spec has both", len(s.Resources), len(s.Tools))
	}
}
