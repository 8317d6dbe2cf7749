package pipeline_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// busyDay is the output of checkins_by_date on the demo church's busiest day: 212 check-ins.
func busyDay() *capapi.CheckinsByDateOutput {
	o := &capapi.CheckinsByDateOutput{Date: capability.NewDate(2026, 7, 5)}
	at := time.Date(2026, 7, 5, 9, 30, 0, 123456789, time.FixedZone("-03", -3*3600))
	for i := range 212 {
		name := "Maria Eduarda <Santos> & Oliveira"
		out := at.Add(time.Duration(i) * time.Minute)
		item := capapi.CheckinsByDateOutputCheckinsItem{CheckinID: uuid.New(), ChildID: uuid.New(), ClassID: uuid.New(),
			ClassName: "Maternal II", CheckedInAt: at}
		if i%2 == 0 {
			item.ChildName, item.CheckedOutAt = &name, &out
		}
		o.Checkins = append(o.Checkins, item)
	}
	return o
}

// TestEncodeMatchesEncodingJSON: the pipeline's encoder produces exactly what encoding/json
// would, for the generated types (omitempty pointers, uuid, time, Date, HTML escaping), for
// an empty list, and for a value whose MarshalJSON fails.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for name, v := range map[string]any{
		"busy day":      busyDay(),
		"no check-ins":  &capapi.CheckinsByDateOutput{Date: capability.NewDate(2026, 1, 1), Checkins: []capapi.CheckinsByDateOutputCheckinsItem{}},
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
