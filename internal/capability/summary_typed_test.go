package capability_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// busyDay is the busiest Sunday's check-ins (testsupport.BusyDay).
func busyDay() *capapi.CheckinsByDateOutput { return testsupport.BusyDay() }

func busyDayJSON(t testing.TB) []byte {
	b, err := pipeline.Encode(busyDay())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRenderSummary: numbers print as integers, missing keys as zero values, distinct counts
// distinct values and skips nulls, and the sentence is trimmed onto one line.
func TestRenderSummary(t *testing.T) {
	for _, tc := range []struct{ tmpl, output, want string }{
		{`{{.total}} check-ins on {{.date}} in {{len .classes}} classes.`,
			string(busyDayJSON(t)), "212 check-ins on 2026-07-05 in 6 classes."},
		{`{{.total}} from {{.from}}`, `{"total": 123456789012, "from": "2026-06-01"}`, "123456789012 from 2026-06-01"},
		{`{{.total}} {{.absent}}`, `{"total": 1.5}`, "1.5 <no value>"},
		{`{{plural (len .checkins) "check-in" "check-ins"}} in {{plural (distinct .checkins "class_id") "class" "classes"}}, {{plural .n "day" "days"}}`,
			`{"checkins": [{"class_id": "a"}], "n": 2}`, "1 check-in in 1 class, 2 days"},
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
// every tools/call of the read tool twin pays on top of the read), over the JSON and over
// the typed output.
func BenchmarkRenderSummary(b *testing.B) {
	v := busyDay()
	out := busyDayJSON(b)
	tmpl, err := capability.ParseSummary(`{{plural .total "check-in" "check-ins"}} on {{.date}} in {{plural (len .classes) "class" "classes"}}.`)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := capability.RenderSummary(tmpl, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := capability.RenderSummaryOf(tmpl, v, out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRenderSummaryOfMatchesJSON: over the typed output, every summary of the spec (and
// templates of other shapes, which fall back to the JSON) renders exactly as over the JSON,
// for outputs with nil pointers, empty and nil lists, zero values and text to escape.
func TestRenderSummaryOfMatchesJSON(t *testing.T) {
	at := time.Date(2026, 7, 5, 9, 30, 0, 123456789, time.FixedZone("-03", -3*3600))
	name := "Ana <&> \"Bia\""
	class := uuid.New()
	outputs := []any{
		busyDay(),
		&capapi.CheckinsByDateOutput{Date: capability.NewDate(2026, 1, 1), Classes: []capapi.CheckinsByDateOutputClassesItem{}},
		&capapi.CheckinsByDateOutput{Date: capability.NewDate(2026, 1, 1)},
		&capapi.AttendanceSummaryOutput{From: capability.NewDate(2026, 6, 1), To: capability.NewDate(2026, 6, 30), TotalCheckins: 212,
			Days:    []capapi.AttendanceSummaryOutputDaysItem{{Date: capability.NewDate(2026, 6, 7), ClassName: "Maternal", Checkins: 200}, {Date: capability.NewDate(2026, 6, 14), ClassName: "Jardim", Checkins: 12}, {Date: capability.NewDate(2026, 6, 14), ClassName: "Maternal"}},
			Classes: []capapi.AttendanceSummaryOutputClassesItem{{ClassID: class, ClassName: "Maternal", Children: 150, Checkins: 200}, {ClassID: uuid.New(), ClassName: "Jardim", Children: 12, Checkins: 12}}},
		&capapi.AttendanceSummaryOutput{},
		&capapi.CheckinRegisterOutput{CheckinID: uuid.New(), ChildID: uuid.New(), ClassID: class, ServiceDate: capability.NewDate(2026, 7, 5), CheckedInAt: at, AlreadyCheckedIn: true, PickupCode: &name},
		&capapi.CheckinRegisterOutput{},
		&capapi.CheckoutRegisterOutput{CheckinID: uuid.New(), ChildID: uuid.New(), CheckedOutAt: at},
		&capapi.RosterChildOutput{ChildID: uuid.New(), Name: name, BirthDate: capability.NewDate(2020, 2, 29)},
		&capapi.RosterChildOutput{ChildID: uuid.New(), Name: name, ClassID: &class},
	}
	templates := []string{
		`{{.no_such_field}} {{len .checkins}} {{distinct .checkins "no_member"}}`,
		`{{.checkins}}|{{.days}}|{{.name}}|{{.class_id}}|{{.birth_date}}|{{.checked_in_at}}|{{.total_checkins}}`,
		`{{if .already_checked_in}}yes{{else}}no{{end}} {{if .class_id}}placed{{end}} {{if .checkins}}some{{end}}`,
		`{{distinct .checkins "child_name"}} {{distinct .checkins "checked_out_at"}} {{distinct .days "checkins"}}`,
		`{{range .checkins}}{{.class_id}}{{end}}`, // falls back to the JSON
		`{{with .date}}{{.}}{{end}} {{.date | printf "%s"}}`,
		`{{plural .total_checkins "x" "xs"}} {{plural (len .days) "d" "ds"}} {{plural (distinct .checkins "child_name") "n" "ns"}} {{plural .no_such "y" "ys"}}`,
	}
	for _, c := range capapi.Capabilities() {
		if c.Summary == "" {
			continue
		}
		templates = append(templates, c.Summary)
		if tmpl, err := capability.ParseSummary(c.Summary); err != nil || !capability.TypedSummary(tmpl) {
			t.Errorf("%s: the spec's summary does not render from the typed output (%v)", c.ID, err)
		}
	}
	for _, src := range templates {
		tmpl, err := capability.ParseSummary(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range outputs {
			out, err := pipeline.Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := capability.RenderSummary(tmpl, out)
			got, gotErr := capability.RenderSummaryOf(tmpl, v, out)
			if got != want || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("%q over %T:\n typed %q, %v\n  json %q, %v", src, v, got, gotErr, want, wantErr)
			}
		}
	}
}

// summaryTemplates are the templates FuzzSummaryOfMatchesJSON renders: every summary of the
// spec, and the shapes of TestRenderSummaryOfMatchesJSON that print lists, branch on numbers
// and call plural on text.
func summaryTemplates(t testing.TB) []string {
	out := []string{
		`{{.classes}} {{.total}} {{.next_offset}} {{len .classes}} {{distinct .classes "class_name"}}`,
		`{{if .next_offset}}more{{else}}last{{end}} {{if .classes}}some{{end}} {{if len .classes}}n{{end}}`,
		`{{plural .date "d" "ds"}} {{plural .next_offset "o" "os"}} {{plural (distinct .classes "checkins") "c" "cs"}}`,
	}
	for _, c := range capapi.Capabilities() {
		if c.Summary != "" {
			out = append(out, c.Summary)
		}
	}
	return out
}

// FuzzSummaryOfMatchesJSON: over random values of every output type of the spec, every
// summary renders from the typed output (compiled, or through text/template for a value the
// program leaves to it) exactly as over the JSON, errors included; and the spec's own
// summary of a capability runs compiled over its outputs without nulls.
func FuzzSummaryOfMatchesJSON(f *testing.F) {
	types := specOutputTypes(f)
	templates := summaryTemplates(f)
	own := map[reflect.Type]int{} // the type's own summary, by its index in templates
	for _, c := range capapi.Capabilities() {
		for _, ty := range types {
			if c.Summary != "" && strings.EqualFold(ty.Name(), strings.ReplaceAll(c.ID, "_", "")+"Output") {
				own[ty] = slices.Index(templates, c.Summary)
			}
		}
	}
	if len(own) == 0 {
		f.Fatal("no output type matched its capability's summary: the generated type names changed")
	}
	var parsed []*template.Template
	for _, src := range templates {
		tmpl, err := capability.ParseSummary(src)
		if err != nil {
			f.Fatal(err)
		}
		parsed = append(parsed, tmpl)
	}
	for i := range 2 * len(types) {
		f.Add(uint64(i), uint8(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, which, tmplIndex uint8) {
		ty := types[int(which)%len(types)]
		v := reflect.New(ty)
		g := valueGen{rng: rand.New(rand.NewPCG(seed, uint64(which)))}
		g.fill(v.Elem(), 0)
		out, err := pipeline.Encode(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		i := int(tmplIndex) % len(parsed)
		if j, ok := own[ty]; ok && tmplIndex%2 == 0 {
			i = j // half the time, the summary the type is rendered with
		}
		want, wantErr := capability.RenderSummary(parsed[i], out)
		got, gotErr := capability.RenderSummaryOf(parsed[i], v.Interface(), out)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q over %v %s:\n typed %q, %v\n  json %q, %v", templates[i], ty, out, got, gotErr, want, wantErr)
		}
		if s, ok := capability.RunSummaryProgram(parsed[i], v.Interface()); ok && (s != want || wantErr != nil) {
			t.Fatalf("%q over %v %s:\n compiled %q\n      json %q, %v", templates[i], ty, out, s, want, wantErr)
		}
	})
}

// TestSummaryCompiledOverBusyDay: the spec's check-ins summary runs compiled over the busiest
// day, and says what text/template says over its JSON.
func TestSummaryCompiledOverBusyDay(t *testing.T) {
	var src string
	for _, c := range capapi.Capabilities() {
		if c.ID == capapi.CapCheckinsByDate {
			src = c.Summary
		}
	}
	tmpl, err := capability.ParseSummary(src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := capability.RenderSummary(tmpl, busyDayJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := capability.RunSummaryProgram(tmpl, busyDay())
	if !ok || got != want {
		t.Fatalf("compiled: %q (%v); text/template: %q", got, ok, want)
	}
}
