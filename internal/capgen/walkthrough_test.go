package capgen

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// TestWalkthrough performs docs/adding-a-capability.md on a copy of the repository: the YAML,
// SQL and Go come from the page itself (a block after <!-- walkthrough:file PATH --> is
// written to PATH), the commands are the Makefile's. It checks each artefact the page
// promises, that the build breaks before the stubs exist, that the tree builds once they are
// filled, and that the page's tool passes its tests there (with PostgreSQL; skipped without).
func TestWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the repository and builds it; skipped with -short")
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "adding-a-capability.md"))
	if err != nil {
		t.Fatal(err)
	}
	yamlBlock := fenced(t, doc, "walkthrough:spec", "yaml")
	stubBlock := fenced(t, doc, "walkthrough:stub", "go")
	toolBlock := fenced(t, doc, "walkthrough:tool-spec", "yaml")
	files := docFiles(t, doc)

	root := copyRepo(t)
	specPath := filepath.Join(root, "spec", "capabilities.yaml")
	spec, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	// The new resource goes at the end of resources:, the tool at the end of tools:, wherever
	// those sections sit among the others.
	spec = appendToSection(t, spec, "resources", yamlBlock)
	spec = appendToSection(t, spec, "tools", toolBlock)
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	// The migration's number is the one capgen prints on this tree, as section 7.3 says.
	for path, body := range files {
		if name, ok := strings.CutPrefix(path, SchemaDir+"/"+migrationPlaceholder+"_"); ok {
			next := strings.TrimSpace(run(t, root, "go", "run", "./cmd/capgen", "next-migration", strings.TrimSuffix(name, ".sql")))
			if _, err := os.Stat(filepath.Join(root, next)); err == nil || !strings.HasPrefix(next, SchemaDir+"/") {
				t.Fatalf("capgen next-migration printed %q, which exists or is not under %s", next, SchemaDir)
			}
			delete(files, path)
			files[next] = body
		}
	}
	// The tool's SQL and migration exist before generating (sqlc reads them); its Go after
	// scaffolding.
	for path, body := range files {
		if !strings.HasSuffix(path, ".go") {
			writeFile(t, root, path, body)
		}
	}

	sqlc, ogen := tool(t, "sqlc", "github.com/sqlc-dev/sqlc/cmd/sqlc"), tool(t, "ogen", "github.com/ogen-go/ogen/cmd/ogen")
	run(t, root, "make", "generate", "SQLC="+sqlc, "OGEN="+ogen)

	expect := map[string][]string{
		"gen/capapi/types_gen.go":                     {"type AttendanceByClassInput struct", "type AttendanceByClassOutput struct"},
		"gen/capapi/names_gen.go":                     {`CapAttendanceByClass = "attendance_by_class"`, `ResourceTemplateAttendanceByClass = "neemias://attendance/classes/{class_id}{?from,to}"`},
		"gen/capapi/handler_gen.go":                   {"AttendanceByClass(ctx context.Context, in *AttendanceByClassInput) (*AttendanceByClassOutput, error)"},
		"gen/schemas/attendance_by_class.input.json":  {`"class_id"`, `"format": "uuid"`},
		"gen/schemas/attendance_by_class.output.json": {`"days"`},
		"queries/generated/capabilities.sql":          {"-- name: AttendanceByClass :many", "FROM v_attendance_daily", "class_id = sqlc.arg(class_id)::uuid"},
		"gen/db/capabilities.sql.go":                  {"func (q *Queries) AttendanceByClass("},
		"gen/openapi/openapi.json":                    {`"/attendance/classes/{class_id}"`, `"operationId": "attendanceByClass"`},
		"gen/openapi/oas/oas_server_gen.go":           {"AttendanceByClass(ctx context.Context, params AttendanceByClassParams)"},
		"gen/capapi/catalog_gen.go":                   {`ID: CapAttendanceByClass,`, `Scope: "attendance:read",`, `h.AttendanceByClass)`},
		"docs/scope-matrix.md":                        {"| `neemias://attendance/classes/{class_id}{?from,to}` | resource_template | `attendance:read` |"},
		"docs/inspect/voluntario.md":                  {"## resource `neemias://attendance/classes/{class_id}{?from,to}`"},
		"gen/db/checkin_notes.sql.go":                 {"func (q *Queries) AddCheckinNote("},
		"docs/inspect/responsavel.md":                 {"neemias_checkin_note"},
	}
	// The tool's, in the files shared with the resource.
	for file, wants := range map[string][]string{
		"gen/capapi/types_gen.go":   {"type CheckinNoteInput struct", "type CheckinNoteOutput struct"},
		"gen/capapi/names_gen.go":   {`CapCheckinNote = "neemias_checkin_note"`},
		"gen/capapi/handler_gen.go": {"CheckinNote(ctx context.Context, in *CheckinNoteInput) (*CheckinNoteOutput, error)"},
		"gen/capapi/catalog_gen.go": {`ID: CapCheckinNote,`, `Operation: "CheckinNote",`, `h.CheckinNote)`},
	} {
		expect[file] = append(expect[file], wants...)
	}
	for file, wants := range expect {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(collapse(string(b)), collapse(w)) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
	}

	// The compile-time assertion breaks the build until a stub exists.
	if out, err := goCmd(root, "build", "./internal/logic/"); err == nil {
		t.Error("the build must fail before the stub is scaffolded")
	} else if !strings.Contains(out, "missing method AttendanceByClass") && !strings.Contains(out, "missing method CheckinNote") {
		t.Errorf("build failed for the wrong reason:\n%s", out)
	}

	out := run(t, root, "go", "run", "./cmd/capgen", "scaffold")
	stubFile := filepath.Join(root, "internal", "logic", "attendance_by_class.go")
	if !strings.Contains(out, "created internal/logic/attendance_by_class.go") {
		t.Fatalf("scaffold did not create the stub:\n%s", out)
	}
	if !strings.Contains(out, "created internal/logic/neemias_checkin_note.go") {
		t.Fatalf("scaffold did not create the tool's stub:\n%s", out)
	}
	if out := run(t, root, "go", "run", "./cmd/capgen", "scaffold"); !strings.Contains(out, "nothing to do") {
		t.Errorf("a second scaffold must change nothing:\n%s", out)
	}
	filled := "package logic\n\nimport (\n\t\"context\"\n\n\t\"github.com/neemias/neemias-mcp/gen/capapi\"\n\t\"github.com/neemias/neemias-mcp/gen/db\"\n" +
		"\t\"github.com/neemias/neemias-mcp/internal/capability\"\n\t\"github.com/neemias/neemias-mcp/internal/errs\"\n)\n\n// capgen:capability attendance_by_class\n\n" + stubBlock + "\n"
	if err := os.WriteFile(stubFile, []byte(filled), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, body := range files {
		if strings.HasSuffix(path, ".go") {
			writeFile(t, root, path, body)
		}
	}
	run(t, root, "go", "build", "./...")
	run(t, root, "go", "vet", "./gen/...", "./internal/logic/")

	// The tool's tests, as section 8 says to run them: its behaviour, the matrix tests (the
	// write policy admits exactly the roles the spec grants checkins:write) and the row
	// filter check of its SQL. Only the new capabilities' subtests, to keep this affordable.
	run(t, root, "go", "test", "-count=1", "-run", "TestToolQueriesCallTheirRowFilters", "./internal/capgen/")
	if !databaseAnswers() {
		t.Log("no PostgreSQL: the tool's database tests are not run")
		return
	}
	for _, c := range []struct{ pattern, pkg, want string }{
		{"^(TestCheckinNote|TestUnimplementedStubsAreListed)$", "./internal/logic/", "--- PASS: TestCheckinNote/another_church"},
		{"^(TestRLSMatchesScopeMatrix|TestEveryCapabilityForEveryRole)$/^(attendance_by_class|neemias_checkin_note)$",
			"./internal/logic/", "--- PASS: TestRLSMatchesScopeMatrix/neemias_checkin_note/RESPONSAVEL"},
		{"^TestMigrationsGoDownAndUpAgain$", "./internal/store/", "--- PASS: TestMigrationsGoDownAndUpAgain"},
	} {
		if out := run(t, root, "go", "test", "-count=1", "-v", "-run", c.pattern, c.pkg); !strings.Contains(out, c.want) {
			t.Errorf("go test -run %q %s did not run what the page promises (no %q):\n%s", c.pattern, c.pkg, c.want, out)
		}
	}
}

// migrationPlaceholder stands for the next migration number in the page's file names.
const migrationPlaceholder = "NNNNN"

// walkthroughSpec is the real spec with the page's resource and tool appended, as
// TestWalkthrough writes it, after edit changed them.
func walkthroughSpec(t *testing.T, doc []byte, edit func(string) string) []byte {
	t.Helper()
	yamlBlock := edit(fenced(t, doc, "walkthrough:spec", "yaml"))
	toolBlock := edit(fenced(t, doc, "walkthrough:tool-spec", "yaml"))
	src, err := os.ReadFile(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return appendToSection(t, appendToSection(t, src, "resources", yamlBlock), "tools", toolBlock)
}

// mistakeMarker is a mistake the page shows the loader's message for: OLD replaced by NEW in
// the page's YAML, then the message in backquotes, its line written LINE.
var mistakeMarker = regexp.MustCompile("<!-- walkthrough:mistake \"([^\"]+)\" => \"([^\"]+)\" -->\\s*`(spec/capabilities\\.yaml:LINE:[^`]+)`")

// TestWalkthroughQuotesTheLoader: every loader message docs/adding-a-capability.md quotes is
// the one the loader prints for the mistake it names, word for word (the line aside: it is
// where the reader's block sits), and the page names the next migration number through
// capgen, never as a number of its own.
func TestWalkthroughQuotesTheLoader(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "adding-a-capability.md"))
	if err != nil {
		t.Fatal(err)
	}
	good := walkthroughSpec(t, doc, func(s string) string { return s })
	blocks := fenced(t, doc, "walkthrough:spec", "yaml") + "\n" + fenced(t, doc, "walkthrough:tool-spec", "yaml")
	rel, err := SchemaRelations(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	marks := mistakeMarker.FindAllSubmatch(doc, -1)
	if len(marks) < 3 {
		t.Fatalf("the page shows %d loader messages with a <!-- walkthrough:mistake \"OLD\" => \"NEW\" --> marker; want its 3 (scope, colon, view)", len(marks))
	}
	if n := strings.Count(string(doc), "`spec/capabilities.yaml:"); n != len(marks)+1 { // +1: the sensitive scope of 7.4, pinned in spec's diagnostics_test
		t.Errorf("the page quotes %d loader messages but marks %d with the mistake that produces it; mark each", n, len(marks))
	}
	lineNo := regexp.MustCompile(`^spec/capabilities\.yaml:\d+:`)
	for _, m := range marks {
		old, bad, want := string(m[1]), string(m[2]), string(m[3])
		if strings.Count(blocks, old) != 1 {
			t.Errorf("mistake %q: the page's YAML has %d of %q, want exactly 1", bad, strings.Count(blocks, old), old)
			continue
		}
		src := walkthroughSpec(t, doc, func(s string) string { return strings.Replace(s, old, bad, 1) })
		var got []string
		s, err := spec.Parse("spec/capabilities.yaml", src)
		if err == nil {
			err = s.CheckRelations(rel)
		}
		var ds spec.Diagnostics
		if errors.As(err, &ds) {
			for _, d := range ds {
				got = append(got, lineNo.ReplaceAllString(d.String(), "spec/capabilities.yaml:LINE:"))
			}
		}
		if !slices.Contains(got, want) {
			t.Errorf("the page quotes, for %q:\n  %s\nthe loader prints:\n  %s", bad, want, strings.Join(got, "\n  "))
		}
	}
	if _, err := spec.Parse("spec/capabilities.yaml", good); err != nil {
		t.Errorf("the page's YAML must load on the real spec:\n%v", err)
	}
	for path := range docFiles(t, doc) {
		if strings.HasPrefix(path, SchemaDir+"/") && !strings.HasPrefix(path, SchemaDir+"/"+migrationPlaceholder+"_") {
			t.Errorf("the page writes %s: name it %s/%s_<name>.sql, the number capgen next-migration prints", path, SchemaDir, migrationPlaceholder)
		}
	}
	if !bytes.Contains(doc, []byte("go run ./cmd/capgen next-migration")) {
		t.Error("the page does not say how to get the next migration number (go run ./cmd/capgen next-migration)")
	}
}

// fileMarker is the comment that names the file the next fenced block is written to.
var fileMarker = regexp.MustCompile(`<!-- walkthrough:file (\S+) -->`)

// docFiles returns the blocks of the page that follow <!-- walkthrough:file PATH -->, by PATH.
func docFiles(t *testing.T, doc []byte) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, m := range fileMarker.FindAllSubmatchIndex(doc, -1) {
		f := fenceRE.FindSubmatch(doc[m[1]:])
		if f == nil {
			t.Fatalf("no fenced block after %s", doc[m[0]:m[1]])
		}
		files[string(doc[m[2]:m[3]])] = string(f[1])
	}
	if len(files) == 0 {
		t.Fatal("docs/adding-a-capability.md has no <!-- walkthrough:file PATH --> block")
	}
	return files
}

func writeFile(t *testing.T, root, path, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// databaseAnswers reports whether the PostgreSQL the store tests use accepts connections.
func databaseAnswers() bool {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		url = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable" // storetest.DefaultAdminURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	conn.Close(ctx)
	return true
}

var fenceRE = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")

// fenced returns the fenced block of lang that follows the <!-- marker --> comment.
func fenced(t *testing.T, doc []byte, marker, lang string) string {
	t.Helper()
	i := bytes.Index(doc, []byte("<!-- "+marker+" -->"))
	if i < 0 {
		t.Fatalf("docs/adding-a-capability.md lacks <!-- %s -->", marker)
	}
	rest := doc[i:]
	if !bytes.Contains(rest, []byte("```"+lang)) {
		t.Fatalf("no ```%s block after %s", lang, marker)
	}
	m := fenceRE.FindSubmatch(rest)
	return strings.TrimRight(string(m[1]), "\n")
}

// copyRepo copies the files git knows (tracked and untracked-but-not-ignored) to a temp dir.
func copyRepo(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("needs a git checkout: %v", err)
	}
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		src := filepath.Join(repoRoot, f)
		b, err := os.ReadFile(src)
		if err != nil {
			continue // deleted in the working tree
		}
		p := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// tool returns the pinned generator binary, building it from go.mod's version when the
// Makefile has not yet (the build cache makes this cheap after make check-generated).
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	abs, _ := filepath.Abs(filepath.Join(repoRoot, "bin", name))
	if _, err := os.Stat(abs); err == nil {
		return abs
	}
	p := filepath.Join(t.TempDir(), name)
	run(t, repoRoot, "go", "build", "-o", p, pkg)
	return p
}

func goCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	return string(b), err
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
	return string(b)
}

var spaces = regexp.MustCompile(`[ \t]+`)

// collapse folds runs of blanks, so expectations do not depend on gofmt's alignment.
func collapse(s string) string { return spaces.ReplaceAllString(s, " ") }

// appendToSection inserts block at the end of the top-level mapping section, i.e. before the
// next top-level key (a line starting with a letter) or at the end of the file.
func appendToSection(t *testing.T, spec []byte, section, block string) []byte {
	t.Helper()
	start := bytes.Index(spec, []byte("\n"+section+":"))
	if start < 0 {
		t.Fatalf("spec has no %s: section", section)
	}
	end := len(spec)
	for i := start + 1 + len(section); i < len(spec); i++ {
		if spec[i-1] == '\n' && spec[i] >= 'a' && spec[i] <= 'z' {
			end = i
			break
		}
	}
	head := bytes.TrimRight(spec[:end], "\n")
	out := append(append([]byte{}, head...), "\n\n"+block+"\n"...)
	if end < len(spec) {
		out = append(append(out, '\n'), spec[end:]...)
	}
	return out
}
