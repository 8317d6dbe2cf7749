package capgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// TestRealSpecViews: the repository's view documents check out (present, HTML5, nothing
// loaded from outside), and the spec's summaries render the sentences they promise.
func TestRealSpecViews(t *testing.T) {
	s, err := spec.Load(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := NewModel(s, "spec/capabilities.yaml", module)
	if err := m.CheckViewFilesIn(repoRoot); err != nil {
		t.Fatal(err)
	}
	if got := len(m.Views()); got != 2 {
		t.Fatalf("views = %d, want attendance_chart and checkin_sheet", got)
	}
	// Singular and plural: the summaries agree their nouns with the counts (plural).
	singular := map[string]struct{ output, want string }{
		"checkins_by_date": {`{"date":"2026-07-05","today":"2026-07-06","time_zone":"America/Sao_Paulo","total":1,"total_classes":1,"classes":[{"class_name":"a","checkins":[{}]}]}`,
			"1 check-in on 2026-07-05 in 1 class (today is 2026-07-06, America/Sao_Paulo)."},
		"attendance_summary": {`{"from":"2026-06-07","to":"2026-06-07","children":1,"total_checkins":1,"today":"2026-06-08","time_zone":"America/Sao_Paulo","days":[{"date":"2026-06-07","class_name":"a","checkins":1}],"classes":[{"class_id":"a","class_name":"a","children":1,"checkins":1}]}`,
			"From 2026-06-07 to 2026-06-07, 1 different child came: 1 check-in over 1 service day in 1 class. Today is 2026-06-08 (America/Sao_Paulo)."},
		"class_list": {`{"date":"2026-07-05","today":"2026-07-05","time_zone":"America/Sao_Paulo","classes":[{"class_id":"a"}]}`,
			"1 class on 2026-07-05 (today is 2026-07-05, America/Sao_Paulo)."},
		"pickup_adults": {`{"child_handle":"K7Q2MX","child_label":"Ana S.","authorized":[{"adult_id":"g1"}],"not_authorized":[]}`,
			"1 adult may take Ana S. (K7Q2MX) home; 0 must not."},
	}
	cases := map[string]struct{ output, want string }{
		"checkins_by_date": {`{"date":"2026-07-05","today":"2026-07-06","time_zone":"America/Sao_Paulo","total":3,"total_classes":2,"classes":[{"class_name":"a","checkins":[{},{}]},{"class_name":"b","checkins":[{}]}]}`,
			"3 check-ins on 2026-07-05 in 2 classes (today is 2026-07-06, America/Sao_Paulo)."},
		"attendance_summary": {`{"from":"2026-06-01","to":"2026-06-30","children":150,"total_checkins":212,"today":"2026-07-01","time_zone":"America/Sao_Paulo","covers":"your classes: Jardim, Primários","days":[{"date":"2026-06-07","class_name":"a","checkins":200},{"date":"2026-06-14","class_name":"b","checkins":12}],"classes":[{"class_id":"a","class_name":"a","children":140,"checkins":200},{"class_id":"b","class_name":"b","children":10,"checkins":12}]}`,
			"From 2026-06-01 to 2026-06-30, 150 different children came: 212 check-ins over 2 service days in 2 classes, counting only your classes: Jardim, Primários. Today is 2026-07-01 (America/Sao_Paulo)."},
		"class_list": {`{"date":"2026-07-05","today":"2026-07-06","time_zone":"America/Sao_Paulo","total_classes":5,"total_children":140,"next_offset":2,"classes":[{"class_id":"a"},{"class_id":"b"}]}`,
			"2 classes on 2026-07-05 (today is 2026-07-06, America/Sao_Paulo), 5 in all with 140 children: call again with offset 2 for the next classes."},
		// child_label is personal data a summary may name: it has otherwise: short_name, and
		// the summary runs on the finalized output, so it says what structuredContent says.
		"pickup_adults": {`{"child_handle":"K7Q2MX","child_label":"Ana S.","authorized":[{"adult_id":"g1"},{"adult_id":"g2"}],"not_authorized":[{"adult_id":"r1"}]}`,
			"2 adults may take Ana S. (K7Q2MX) home; 1 must not."},
		// The pick-up code is never in the summary (a secret; the checker refuses it there): the
		// handoff, not the summary, puts it in the text of clients without MCP Apps.
		"neemias_checkin_register": {`{"checkin_id":"c1","child_id":"k1","child_handle":"K7Q2MX","child_label":"Ana S.","class_id":"a","class_name":"Maternal","service_date":"2026-07-05","checked_in_at":"x","already_checked_in":true,"pickup_code":"SECRET"}`,
			"Ana S. (K7Q2MX) was already checked in to Maternal for 2026-07-05."},
		"neemias_checkout_register": {`{"checkin_id":"c1","child_id":"k1","child_handle":"K7Q2MX","child_label":"Ana S.","class_name":"Maternal","checked_out_at":"2026-07-05T12:00:00Z","picked_up_by":"Maria Souza","released_by":"Vera","already_checked_out":false}`,
			"Ana S. (K7Q2MX) was picked up from Maternal at 2026-07-05T12:00:00Z."},
		"neemias_pickup_adult_add": {`{"adult_id":"p1","child_handle":"K7Q2MX","authorized":false,"added_at":"x"}`,
			"An adult who must not take K7Q2MX home was recorded (entry p1)."},
		"neemias_pickup_adult_remove": {`{"adult_id":"p1","removed_at":"2026-07-05T12:00:00Z"}`,
			"Entry p1 is off the pick-up list since 2026-07-05T12:00:00Z."},
	}
	for _, c := range m.Caps {
		tc, ok := cases[c.ID]
		if !ok {
			continue
		}
		tmpl, err := capability.ParseSummary(c.Summary)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		got, err := capability.RenderSummary(tmpl, []byte(tc.output))
		if err != nil || got != tc.want {
			t.Errorf("%s summary = %q, %v; want %q", c.ID, got, err, tc.want)
		}
		if one, ok := singular[c.ID]; ok {
			if got, err := capability.RenderSummary(tmpl, []byte(one.output)); err != nil || got != one.want {
				t.Errorf("%s summary = %q, %v; want %q", c.ID, got, err, one.want)
			}
		}
		delete(cases, c.ID)
	}
	if len(cases) > 0 {
		t.Errorf("capabilities without the expected summary: %v", cases)
	}
}

// TestViewFileChecks: a document that loads something from outside, or is no HTML5 document,
// is refused with the spec line of its view.
func TestViewFileChecks(t *testing.T) {
	root := t.TempDir()
	src, err := os.ReadFile("spec/testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml := string(src) + "views:\n  thing_view:\n    uri: ui://demo/thing\n    title: Thing\n    description: A thing.\n    file: internal/views/thing.html\n    capabilities: [thing]\n"
	s, err := spec.Parse("spec/capabilities.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	m := NewModel(s, "spec/capabilities.yaml", module)
	if err := m.CheckViewFilesIn(root); err == nil || !strings.Contains(err.Error(), "cannot read internal/views/thing.html") {
		t.Errorf("missing file: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "internal", "views"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(root, "internal", "views", "thing.html"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("<html></html>")
	if err := m.CheckViewFilesIn(root); err == nil || !strings.Contains(err.Error(), "does not start with <!doctype html>") {
		t.Errorf("not HTML5: %v", err)
	}
	write("<!doctype html>\n<html>\n<script src=\"https://cdn.example/x.js\"></script></html>")
	if err := m.CheckViewFilesIn(root); err == nil || !strings.Contains(err.Error(), "internal/views/thing.html:3: view \"thing_view\" loads") {
		t.Errorf("external script: %v", err)
	}
	write("<!doctype html>\n<html><p>ok</p></html>")
	if err := m.CheckViewFilesIn(root); err != nil {
		t.Errorf("self-contained document refused: %v", err)
	}
}

// TestViewCSPGenerated: a view declaring CSP domains in the spec gets them in the generated
// registry (capability.ViewCSP, which internal/mcp emits as _meta.ui.csp) and in the docs
// table; a view declaring none gets empty lists and "none (host default)".
func TestViewCSPGenerated(t *testing.T) {
	src, err := os.ReadFile("spec/testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml := string(src) + `views:
  thing_view:
    uri: ui://demo/thing
    title: Thing
    description: A thing.
    file: internal/views/thing.html
    capabilities: [thing]
    csp:
      connect_domains: [https://api.example.com]
      resource_domains: [https://cdn.example.com, https://*.img.example.com]
  plain_view:
    uri: ui://demo/plain
    title: Plain
    description: A plain view.
    file: internal/views/plain.html
    capabilities: [demo_thing_rename]
`
	s, err := spec.Parse("spec/capabilities.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	files, err := viewFiles(NewModel(s, "spec/capabilities.yaml", module))
	if err != nil || len(files) != 2 {
		t.Fatalf("viewFiles: %d files, %v", len(files), err)
	}
	gen, doc := string(files[0].Content), string(files[1].Content)
	thing, plain, ok := strings.Cut(gen[strings.Index(gen, `ID:           "thing_view"`):], `ID:           "plain_view"`)
	if !ok {
		t.Fatalf("generated registry lacks the two views:\n%s", gen)
	}
	for _, want := range []string{
		`ConnectDomains:  []string{"https://api.example.com"}`,
		`ResourceDomains: []string{"https://cdn.example.com", "https://*.img.example.com"}`,
		`FrameDomains:    []string{}`,
	} {
		if !strings.Contains(thing, want) {
			t.Errorf("thing_view registry entry lacks %s:\n%s", want, thing)
		}
	}
	for _, want := range []string{`ConnectDomains:  []string{}`, `ResourceDomains: []string{}`} {
		if !strings.Contains(plain, want) {
			t.Errorf("plain_view registry entry lacks %s:\n%s", want, plain)
		}
	}
	if !strings.Contains(doc, "https://api.example.com https://cdn.example.com https://*.img.example.com") || !strings.Contains(doc, "| none (host default) |") {
		t.Errorf("docs table does not show the CSP domains and the default:\n%s", doc)
	}
}
