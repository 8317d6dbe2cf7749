package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// busyDay is the busiest Sunday's check-ins (testsupport.BusyDay).
func busyDay() *capapi.CheckinsByDateOutput { return testsupport.BusyDay() }

// TestEncodeMatchesEncodingJSON: the pipeline's encoder produces exactly what encoding/json
// would, for the generated types (omitempty pointers, uuid, time, Date, HTML escaping), for
// an empty list, and for a value whose MarshalJSON fails.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for name, v := range map[string]any{
		"busy day":      busyDay(),
		"no check-ins":  &capapi.CheckinsByDateOutput{Date: capability.NewDate(2026, 1, 1), Classes: []capapi.CheckinsByDateOutputClassesItem{}},
		"roster counts": &capapi.RosterChildrenOutput{TotalChildren: 3, Classes: []capapi.RosterChildrenOutputClassesItem{{ClassID: uuid.New(), ClassName: "Berçário", MaxAge: 2, Children: 3}}},
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pipeline.Encode(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: encodings differ\n got %.300s\nwant %.300s", name, got, want)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	v := busyDay()
	for name, enc := range map[string]func(any) ([]byte, error){"encoding/json": json.Marshal, "pipeline.Encode": pipeline.Encode} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := enc(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
