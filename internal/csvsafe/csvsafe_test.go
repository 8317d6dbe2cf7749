package csvsafe_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/csvsafe"
)

// TestCell pins the rule: each formula-leading character is neutralized, nothing else is.
func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"x\")": "'=HYPERLINK(\"x\")", "+55 11 9": "'+55 11 9", "-1": "'-1", "@SUM(A1)": "'@SUM(A1)",
		"\tx": "'\tx", "\rx": "'\rx", "Ana": "Ana", "": "", "a=b": "a=b", " =x": " =x", "'=x": "'=x",
	} {
		if got := csvsafe.Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRow(t *testing.T) {
	got := csvsafe.Row([]string{"1", "=cmd|' /C calc'!A0", "ok", "@x"})
	want := []string{"1", "'=cmd|' /C calc'!A0", "ok", "'@x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Row (-want +got):\n%s", diff)
	}
}
