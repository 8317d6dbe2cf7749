package capgen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

func TestSchemaRelationsReadsTheViews(t *testing.T) {
	rel, err := SchemaRelations(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"church_id", "checkin_id", "child_id", "child_name", "class_id", "class_name", "service_date", "checked_in_at", "checked_out_at", "child_handle"}
	if d := cmp.Diff(want, rel["v_checkins"]); d != "" {
		t.Errorf("v_checkins columns (-want +got):\n%s", d)
	}
	if !slices.Contains(rel["children"], "birth_date") || slices.Contains(rel["children"], "PRIMARY") {
		t.Errorf("children columns = %v", rel["children"])
	}
	// The committed spec's queries all name real relations and columns.
	s, err := spec.Load(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckRelations(rel); err != nil {
		t.Error(err)
	}
}

func TestCheckRelationsPointsAtTheSpecLine(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	broken := string(src)
	broken = replaceOnce(t, broken, "select: [child_id, child_handle, child_name,", "select: [child_id, child_handle, chld_name,")
	broken = replaceOnce(t, broken, "from: v_attendance_daily", "from: v_attendance_dayly")
	dir := t.TempDir()
	file := filepath.Join(dir, "capabilities.yaml")
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := SchemaRelations(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var ds spec.Diagnostics
	if !errors.As(s.CheckRelations(rel), &ds) {
		t.Fatal("CheckRelations accepted an unknown view and column")
	}
	var got []string
	for _, d := range ds {
		d.File = "spec/capabilities.yaml"
		got = append(got, d.String())
	}
	want := []string{
		`spec/capabilities.yaml:` + lineOf(t, broken, "from: v_attendance_dayly") + `: resource "attendance_summary" reads unknown view "v_attendance_dayly" (did you mean "v_attendance_daily"?); create it in a migration under queries/schema/ or fix the name`,
		`spec/capabilities.yaml:` + lineOf(t, broken, "chld_name") + `: resource "checkins_by_date": selected column "chld_name" is not a column of v_checkins (did you mean "child_name"?); use one of: church_id, checkin_id, child_id, child_name, class_id, class_name, service_date, checked_in_at, checked_out_at, child_handle`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	i := strings.Index(s, old)
	if i < 0 {
		t.Fatalf("the spec has no %q", old)
	}
	return s[:i] + new + s[i+len(old):]
}

// lineOf returns "LINE:COL" of the first occurrence of the value after "key: " in s (the
// position a diagnostic about that value has).
func lineOf(t *testing.T, s, sub string) string {
	t.Helper()
	i := strings.Index(s, sub)
	if i < 0 {
		t.Fatalf("no %q", sub)
	}
	line := strings.Count(s[:i], "\n") + 1
	col := i - strings.LastIndex(s[:i], "\n")
	if j := strings.Index(sub, ": "); j >= 0 && !strings.HasPrefix(sub, "chld") {
		col += j + 2
	}
	return fmt.Sprintf("%d:%d", line, col)
}

// TestResourceViewsFollowTheViewRules: every view a resource's query reads follows the rules
// docs/adding-a-capability.md §6 names: created WITH (security_invoker = true), so the tables'
// row-level security applies to the caller, and granted to neemias_app for SELECT only.
func TestResourceViewsFollowTheViewRules(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, SchemaDir, "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	var up strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sql := string(b)
		if loc := downSection.FindStringIndex(sql); loc != nil {
			sql = sql[:loc[0]]
		}
		up.WriteString(lineComment.ReplaceAllString(sql, "") + "\n")
	}
	grants := regexp.MustCompile(`(?is)GRANT\s+([\w\s,]+?)\s+ON\s+(?:TABLE\s+)?([\w\s,]+?)\s+TO\s+neemias_app`)
	n := 0
	for _, c := range repoModel(t).Caps {
		if c.Query == nil {
			continue
		}
		n++
		v := c.Query.From
		invoker := regexp.MustCompile(`(?is)CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+` + v + `\s+WITH\s*\(\s*security_invoker\s*=\s*(?:true|on)\s*\)`)
		if !invoker.MatchString(up.String()) {
			t.Errorf("resource %q reads %s, which is not created WITH (security_invoker = true)", c.ID, v)
		}
		var privs []string
		for _, m := range grants.FindAllStringSubmatch(up.String(), -1) {
			if slices.Contains(strings.Fields(strings.ReplaceAll(m[2], ",", " ")), v) {
				privs = append(privs, strings.ToUpper(strings.Join(strings.Fields(m[1]), " ")))
			}
		}
		if !slices.Equal(privs, []string{"SELECT"}) {
			t.Errorf("resource %q reads %s, granted to neemias_app as %v; want exactly one GRANT SELECT", c.ID, v, privs)
		}
	}
	if n == 0 {
		t.Error("no resource reads a view")
	}
}
