package mcp

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capability"
)

// TestTakeHandoffs: only top-level members named by a handoff rule are removed; the other
// members keep their order and bytes (escapes included); absent and null members hand off
// nothing; a member of the same name nested deeper stays; a non-object is left alone; a
// non-string value is an error (never let through).
func TestTakeHandoffs(t *testing.T) {
	fields := handoffFields(&capability.Capability{OutputPII: []capability.FieldRule{
		{Path: "child_name", Category: capability.PIIChildName},
		{Path: "pickup_code", Category: capability.PIISecret, Handoff: "Give it to the guardian."},
	}})
	if len(fields) != 1 || fields[0].name != "pickup_code" {
		t.Fatalf("handoffFields = %v, want pickup_code alone", fields)
	}
	if got := handoffFields(&capability.Capability{OutputPII: []capability.FieldRule{{Path: "child_name", Category: capability.PIIChildName}}}); got != nil {
		t.Errorf("handoffFields of a capability without handoff rules = %v, want nil", got)
	}
	tests := []struct {
		name, in, want string
		values         []string
		wantErr        bool
	}{
		{"middle", `{"a":1,"pickup_code":"4839","b":"x\u003cy"}`, `{"a":1,"b":"x\u003cy"}`, []string{"4839"}, false},
		{"first", `{"pickup_code":"4839","a":[1,2]}`, `{"a":[1,2]}`, []string{"4839"}, false},
		{"alone", `{"pickup_code":"4839"}`, `{}`, []string{"4839"}, false},
		{"escaped value", `{"pickup_code":"48\"39"}`, `{}`, []string{`48"39`}, false},
		{"absent", `{"a":1,"b":{"pickup_code":"nested"}}`, `{"a":1,"b":{"pickup_code":"nested"}}`, nil, false},
		{"null", `{"pickup_code":null,"a":1}`, `{"a":1}`, nil, false},
		{"not an object", `[{"pickup_code":"4839"}]`, `[{"pickup_code":"4839"}]`, nil, false},
		{"not a string", `{"pickup_code":4839}`, ``, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, values, err := takeHandoffs(json.RawMessage(tt.in), fields)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			var vs []string
			for _, v := range values {
				vs = append(vs, v.value)
			}
			if string(got) != tt.want || !slices.Equal(vs, tt.values) {
				t.Errorf("takeHandoffs(%s) = %s, %v; want %s, %v", tt.in, got, vs, tt.want, tt.values)
			}
		})
	}
}
