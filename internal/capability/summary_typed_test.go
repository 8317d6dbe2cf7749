package capability_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
)

// busyDayJSON is the finalized output of checkins_by_date on a day of 212 check-ins in 6
// classes, half of them picked up and named.
func busyDayJSON(t testing.TB) []byte {
	o := &capapi.CheckinsByDateOutput{Date: capability.NewDate(2026, 7, 5)}
	at := time.Date(2026, 7, 5, 9, 30, 0, 123456789, time.FixedZone("-03", -3*3600))
	classes := make([]uuid.UUID, 6)
	for i := range classes {
		classes[i] = uuid.New()
	}
	for i := range 212 {
		name := "Maria Eduarda <Santos> & Oliveira"
		out := at.Add(time.Duration(i) * time.Minute)
		item := capapi.CheckinsByDateOutputCheckinsItem{CheckinID: uuid.New(), ChildID: uuid.New(), ClassID: classes[i%6],
			ClassName: "Maternal II", CheckedInAt: at}
		if i%2 == 0 {
			item.ChildName, item.CheckedOutAt = &name, &out
		}
		o.Checkins = append(o.Checkins, item)
	}
	b, err := pipeline.Encode(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRenderSummary: numbers print as integers, missing keys as zero values, distinct counts
// distinct values and skips nulls, and the sentence is trimmed onto one line.
func TestRenderSummary(t *testing.T) {
	for _, tc := range []struct{ tmpl, output, want string }{
		{`{{len .checkins}} check-ins on {{.date}} in {{distinct .checkins "class_id"}} classes.`,
			string(busyDayJSON(t)), "212 check-ins on 2026-07-05 in 6 classes."},
		{`{{.total}} from {{.from}}`, `{"total": 123456789012, "from": "2026-06-01"}`, "123456789012 from 2026-06-01"},
		{`{{.total}} {{.absent}}`, `{"total": 1.5}`, "1.5 <no value>"},
		{"  a \n\t {{if .flag}}yes{{else}}no{{end}}  ", `{"flag": false}`, "a no"},
		{`{{distinct .days "class_id"}}`, `{"days": [{"class_id": "a"}, {"class_id": null}, {"class_id": "a"}, {}, {"class_id": "b"}]}`, "2"},
		{`{{distinct .days "class_id"}}`, `{}`, "0"},
	} {
		tmpl, err := capability.ParseSummary(tc.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		got, err := capability.RenderSummary(tmpl, []byte(tc.output))
		if err != nil || got != tc.want {
			t.Errorf("%q over %.60s = %q, %v; want %q", tc.tmpl, tc.output, got, err, tc.want)
		}
	}
	tmpl, _ := capability.ParseSummary(`{{.a}}`)
	for _, bad := range []string{`[1]`, `{"a":`} {
		if _, err := capability.RenderSummary(tmpl, []byte(bad)); err == nil {
			t.Errorf("RenderSummary(%q) succeeded", bad)
		}
	}
}

// BenchmarkRenderSummary: the check-ins summary over the busiest day's 212 check-ins (what
// every tools/call of the read tool twin pays on top of the read).
func BenchmarkRenderSummary(b *testing.B) {
	out := busyDayJSON(b)
	tmpl, err := capability.ParseSummary(`{{len .checkins}} check-ins on {{.date}} in {{distinct .checkins "class_id"}} classes.`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := capability.RenderSummary(tmpl, out); err != nil {
			b.Fatal(err)
		}
	}
}
