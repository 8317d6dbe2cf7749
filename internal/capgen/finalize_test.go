package capgen_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/capability"
	golden "github.com/neemias/neemias-mcp/internal/capgen/testdata/golden/minimal/gen/capapi"
)

// TestGoldenFinalizeShortensNames calls the Finalize the generator wrote for the golden
// fixture: TestGolden proves that code compiles and is what the template emits, this proves it
// does what `otherwise: short_name` promises. A caller without visible_with's scope receives
// each name shortened (top level, required or optional; in a list, made distinct within the
// list, each field on its own), a caller with it the full names; a handoff secret and a nil
// optional name pass through untouched, and only the redactable field is left out.
func TestGoldenFinalizeShortensNames(t *testing.T) {
	ptr := func(s string) *string { return &s }
	thing := func() golden.ThingOutput {
		return golden.ThingOutput{
			Label:     "Bench",
			OwnerName: ptr("Olga Prado"),
			MakerName: "Ana Clara Souza",
			Helpers: []golden.ThingOutputHelpersItem{
				{Name: "Bruno Lima", DeputyName: ptr("Bruno Lopes")},
				{Name: "Bruno Leite"},
				{Name: "Carla Dias", DeputyName: ptr("Davi Rocha")},
			},
		}
	}
	made := func() golden.ThingMakeOutput {
		return golden.ThingMakeOutput{ApproverName: ptr("Eva Maria Moreira"), ClaimCode: ptr("K7Q2MX")}
	}
	tests := []struct {
		name      string
		granted   capability.ScopeSet
		wantThing func(*golden.ThingOutput)
		wantMade  func(*golden.ThingMakeOutput)
	}{
		{
			name:    "without secrets:read",
			granted: capability.NewScopeSet("things:read", "things:write"),
			wantThing: func(o *golden.ThingOutput) {
				o.OwnerName = nil
				o.MakerName = "Ana S."
				// The two helpers named Bruno are lengthened until distinct, over the whole
				// list (an element shortened on its own would give "Bruno L." twice); Carla
				// keeps her initial. The deputies are shortened as a list of their own: the
				// deputy Bruno Lopes is compared with no helper, so "Bruno L." is enough.
				o.Helpers[0].Name, o.Helpers[1].Name, o.Helpers[2].Name = "Bruno Li.", "Bruno Le.", "Carla D."
				o.Helpers[0].DeputyName, o.Helpers[2].DeputyName = ptr("Bruno L."), ptr("Davi R.")
			},
			wantMade: func(o *golden.ThingMakeOutput) { o.ApproverName = ptr("Eva M.") },
		},
		{
			name:      "with secrets:read",
			granted:   capability.NewScopeSet("things:read", "things:write", "secrets:read"),
			wantThing: func(*golden.ThingOutput) {},
			wantMade:  func(*golden.ThingMakeOutput) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := thing(), thing()
			got.Finalize(tt.granted)
			tt.wantThing(&want)
			want.Tags = []string{} // a required list is never null
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("ThingOutput.Finalize (-want +got):\n%s", d)
			}
			gotMade, wantMade := made(), made()
			gotMade.Finalize(tt.granted)
			tt.wantMade(&wantMade)
			if d := cmp.Diff(wantMade, gotMade); d != "" {
				t.Errorf("ThingMakeOutput.Finalize (-want +got):\n%s", d)
			}
			var none golden.ThingMakeOutput // no approver: nothing to shorten, no panic
			none.Finalize(tt.granted)
			if none.ApproverName != nil {
				t.Errorf("a nil approver_name became %q", *none.ApproverName)
			}
		})
	}
}
