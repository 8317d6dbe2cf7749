package capgen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWalkthrough performs docs/adding-a-capability.md on a copy of the repository: the YAML
// and the Go come from the page itself, the commands are the Makefile's. It checks each
// artefact the page promises, that the build breaks before the stub exists, and that the
// tree builds once the stub is filled.
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

	root := copyRepo(t)
	specPath := filepath.Join(root, "spec", "capabilities.yaml")
	spec, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	// Insert the new resource at the end of resources:, i.e. right before tools:.
	i := bytes.Index(spec, []byte("\ntools:"))
	if i < 0 {
		t.Fatal("spec has no tools: section to insert before")
	}
	spec = append(append(append([]byte{}, spec[:i+1]...), []byte(yamlBlock+"\n")...), spec[i+1:]...)
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		t.Fatal(err)
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
		"gen/scopes/scopes_gen.go":                    {`"attendance_by_class": "attendance:read"`},
		"docs/scope-matrix.md":                        {"| `neemias://attendance/classes/{class_id}{?from,to}` | resource_template | `attendance:read` |"},
		"docs/inspect/voluntario.md":                  {"## resource `neemias://attendance/classes/{class_id}{?from,to}`"},
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
	} else if !strings.Contains(out, "missing method AttendanceByClass") {
		t.Errorf("build failed for the wrong reason:\n%s", out)
	}

	out := run(t, root, "go", "run", "./cmd/capgen", "scaffold")
	stubFile := filepath.Join(root, "internal", "logic", "attendance_by_class.go")
	if !strings.Contains(out, "created internal/logic/attendance_by_class.go") {
		t.Fatalf("scaffold did not create the stub:\n%s", out)
	}
	if out := run(t, root, "go", "run", "./cmd/capgen", "scaffold"); !strings.Contains(out, "nothing to do") {
		t.Errorf("a second scaffold must change nothing:\n%s", out)
	}
	filled := "package logic\n\nimport (\n\t\"context\"\n\n\t\"github.com/neemias/neemias-mcp/gen/capapi\"\n\t\"github.com/neemias/neemias-mcp/internal/errs\"\n)\n\n// capgen:capability attendance_by_class\n\n" + stubBlock + "\n"
	if err := os.WriteFile(stubFile, []byte(filled), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, root, "go", "build", "./...")
	run(t, root, "go", "vet", "./gen/...", "./internal/logic/")
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
