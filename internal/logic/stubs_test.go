package logic

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capgen"
)

// TestUnimplementedStubsAreListed keeps the list of capabilities whose scaffolded stub still
// returns errs.ErrNotImplemented explicit and current: testdata/unimplemented.txt must name
// exactly those. A new capability therefore shows up in review, and the domain-logic work is
// done when the file is empty.
func TestUnimplementedStubsAreListed(t *testing.T) {
	got, err := capgen.Unimplemented("../..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/unimplemented.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			want = append(want, line)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("unimplemented stubs are %v, but testdata/unimplemented.txt lists %v; update the list (or implement the stubs)", got, want)
	}
	if len(got) > 0 {
		t.Logf("capabilities still unimplemented: %s", strings.Join(got, ", "))
	}
}
