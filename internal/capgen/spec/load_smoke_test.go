package spec

import "testing"

func TestLoadRealSpec(t *testing.T) {
	s, err := Load("../../../spec/capabilities.yaml")
	if err != nil {
		t.Fatalf("the committed spec must load:\n%v", err)
	}
	if got := len(s.Resources) + len(s.Tools); got != 7 {
		t.Errorf("capabilities = %d, want 7", got)
	}
}
