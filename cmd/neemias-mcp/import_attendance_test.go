package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

// TestImportAttendance follows docs/onboarding.md's past-attendance section: after the sample
// roster, the sample attendance imports (a dry run first), with the child the roster refused
// refused; a second import changes nothing and exits zero (every row already present); --lang
// gives one language; an import in which every row is refused exits non-zero; a header without
// the class column names what it found.
func TestImportAttendance(t *testing.T) {
	db := []string{"--database-url", storetest.NewEmptyDatabase(t)}
	must := func(args ...string) string {
		t.Helper()
		out, err := run(t, "", append(args, db...)...)
		if err != nil {
			t.Fatalf("neemias-mcp %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	must("church", "create", "--name", "Igreja Batista Central", "--slug", "central")
	for _, c := range [][3]string{{"Berçário", "0", "2"}, {"Maternal", "3", "5"}, {"Primários", "6", "8"}, {"Juniores", "9", "11"}} {
		must("class", "add", "--church", "central", "--name", c[0], "--min-age", c[1], "--max-age", c[2])
	}
	must("import", "roster", filepath.Join("..", "..", "docs", "examples", "roster-sample.csv"), "--church", "central")
	sample := filepath.Join("..", "..", "docs", "examples", "attendance-sample.csv")

	if out := must("import", "attendance", sample, "--church", "central", "--dry-run"); !strings.Contains(out, "dry run (--dry-run), nothing was written") ||
		!strings.Contains(out, "importadas / imported: 10; já presentes / already present: 0; recusadas / refused: 1") {
		t.Errorf("dry run:\n%s", out)
	}
	out := must("import", "attendance", sample, "--church", "central")
	for _, want := range []string{
		"Linhas lidas / rows read: 11; importadas / imported: 10; já presentes / already present: 0; recusadas / refused: 1",
		"crianças com check-ins novos / children with new check-ins: 8; dias de culto abertos / service days opened: 4",
		"linha / line 10: nenhuma criança desta igreja tem este nome completo",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import: want %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "Isaac") || strings.Contains(out, "2025") {
		t.Errorf("the report quotes a cell:\n%s", out)
	}
	if out := must("import", "attendance", sample, "--church", "central", "--lang", "en"); !strings.Contains(out, "rows read: 11; imported: 0; already present: 10; refused: 1") ||
		strings.Contains(out, "importadas") {
		t.Errorf("re-import, in English:\n%s", out)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "nobody.csv")
	if err := os.WriteFile(bad, []byte("Criança;Data;Turma\nIsaac Simulado;15/06/2025;Maternal\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "", append([]string{"import", "attendance", bad, "--church", "central", "--lang", "pt"}, db...)...); err == nil ||
		!strings.Contains(err.Error(), "no row was imported (1 refused)") || !strings.Contains(out, "recusadas: 1") {
		t.Errorf("an import of nothing: %v\n%s", err, out)
	}
	header := filepath.Join(dir, "header.csv")
	if err := os.WriteFile(header, []byte("Criança;Data;Sala de aula\nGael Inventado;15/06/2025;Juniores\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "", append([]string{"import", "attendance", header, "--church", "central"}, db...)...); err == nil ||
		!strings.Contains(err.Error(), `columns found: "Criança", "Data", "Sala de aula"; is column "Sala de aula" meant as "turma"?`) {
		t.Errorf("a header without the class: %v", err)
	}
	if _, err := run(t, "", append([]string{"import", "attendance", sample, "--church", "central", "--lang", "fr"}, db...)...); err == nil ||
		!strings.Contains(err.Error(), "--lang") {
		t.Errorf("--lang fr: %v", err)
	}
}
