package capgen

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const module = "github.com/neemias/neemias-mcp"

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../.."

// TestGolden generates every fixture spec into testdata/golden/<name>/ (with -update) or
// compares with it, then builds the golden tree: goldens must compile, not just match.
func TestGolden(t *testing.T) {
	fixtures, err := filepath.Glob("testdata/fixtures/*.yaml")
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, fx := range fixtures {
		name := strings.TrimSuffix(filepath.Base(fx), ".yaml")
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "golden", name)
			src, err := os.ReadFile(fx)
			if err != nil {
				t.Fatal(err)
			}
			s, err := spec.Parse("spec/capabilities.yaml", src)
			if err != nil {
				t.Fatalf("fixture must load:\n%v", err)
			}
			m := NewModel(s, "spec/capabilities.yaml", module)
			m.GenImport = module + "/internal/capgen/testdata/golden/" + name + "/gen"
			files, err := Generate(m)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(dir, "spec"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "spec", "capabilities.yaml"), src, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := Write(dir, files); err != nil {
					t.Fatal(err)
				}
				ogenInto(t, filepath.Join(dir, "gen", "openapi"), filepath.Join(dir, "gen", "openapi", "oas"))
			}
			for _, f := range files {
				want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
				if err != nil {
					t.Errorf("%s: missing golden (run go test ./internal/capgen -run TestGolden -update): %v", f.Path, err)
					continue
				}
				if diff := cmp.Diff(string(want), string(f.Content)); diff != "" {
					t.Errorf("%s differs from golden (-want +got):\n%s", f.Path, diff)
				}
			}
			if t.Failed() {
				return
			}
			// ogen's output for the golden document: regenerate into a temp dir and compare.
			tmp := t.TempDir()
			ogenInto(t, filepath.Join(dir, "gen", "openapi"), tmp)
			compareDirs(t, filepath.Join(dir, "gen", "openapi", "oas"), tmp)
			runGo(t, "vet", "./internal/capgen/"+filepath.ToSlash(dir)+"/gen/...")
		})
	}
}

func runGo(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

// TestGenerateIsDeterministic generates the real spec twice and compares byte for byte.
func TestGenerateIsDeterministic(t *testing.T) {
	s, err := spec.Load(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Generate(NewModel(s, "spec/capabilities.yaml", module))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(NewModel(s, "spec/capabilities.yaml", module))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two generations differ:\n%s", diff)
	}
}

// TestCommittedOutputIsCurrent is the in-process half of make check-generated: the files
// capgen owns on disk (JSON Schemas and OpenAPI included) equal what the committed spec implies.
func TestCommittedOutputIsCurrent(t *testing.T) {
	s, err := spec.Load(filepath.Join(repoRoot, "spec", "capabilities.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(NewModel(s, "spec/capabilities.yaml", module))
	if err != nil {
		t.Fatal(err)
	}
	changed, err := Diff(repoRoot, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) > 0 {
		t.Fatalf("generated files are stale; run make generate:\n%s", strings.Join(changed, "\n"))
	}
}

// ogenInto runs ogen as make generate does (runOgen: ogen.yml's features) on
// openapiDir/openapi.json into target.
func ogenInto(t *testing.T, openapiDir, target string) {
	t.Helper()
	ogen := tool(t, "ogen", "github.com/ogen-go/ogen/cmd/ogen")
	if out, err := runOgen(ogen, t.TempDir(), filepath.Join(openapiDir, "openapi.json"), target); err != nil {
		t.Fatalf("ogen: %v\n%s", err, out)
	}
}

func compareDirs(t *testing.T, want, got string) {
	t.Helper()
	entries, err := os.ReadDir(got)
	if err != nil {
		t.Fatal(err)
	}
	wantEntries, err := os.ReadDir(want)
	if err != nil {
		t.Fatalf("golden ogen output missing (run with -update): %v", err)
	}
	if len(entries) != len(wantEntries) {
		t.Errorf("%s: %d files, regenerated %d", want, len(wantEntries), len(entries))
	}
	for _, e := range entries {
		g, _ := os.ReadFile(filepath.Join(got, e.Name()))
		w, err := os.ReadFile(filepath.Join(want, e.Name()))
		if err != nil || !bytes.Equal(g, w) {
			t.Errorf("%s/%s differs from regenerated ogen output (run with -update)", want, e.Name())
		}
	}
}

// TestOgenOutputIsTheRouter: ogen.yml is honoured in the committed tree and the golden one:
// the router is there, no client (request encoders, response decoders) and no OpenTelemetry.
func TestOgenOutputIsTheRouter(t *testing.T) {
	for _, dir := range []string{filepath.Join(repoRoot, OgenDir), filepath.Join("testdata", "golden", "minimal", OgenDir)} {
		for _, f := range []string{"oas_client_gen.go", "oas_request_encoders_gen.go", "oas_response_decoders_gen.go", "oas_labeler_gen.go"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%s/%s exists: ogen ran without ogen.yml's features", dir, f)
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "oas_router_gen.go")); err != nil || !bytes.Contains(b, []byte("func (s *Server) FindPath(")) {
			t.Errorf("%s: no router (Server.FindPath): %v", dir, err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(`"go.opentelemetry.io/`)) {
				t.Errorf("%s imports OpenTelemetry: ogen/otel is on", f)
			}
		}
	}
}
