package capgen

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// generatedGo is the Go convention for generated files (go/ast.IsGenerated uses the same rule).
var generatedGo = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// TestGeneratedFilesSaySo: every file under gen/ (ours, sqlc's, ogen's) and every file capgen
// writes elsewhere carries the generated-code header, and no hand-written Go file does.
func TestGeneratedFilesSaySo(t *testing.T) {
	err := filepath.WalkDir(filepath.Join(repoRoot, "gen"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ok := HasHeader(b)
		if strings.HasSuffix(p, ".go") {
			ok = generatedGo.Match(b)
		}
		if !ok {
			t.Errorf("%s has no generated-code header", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every file capgen writes outside gen/, as Generate lists them (not a list kept by hand).
	for _, f := range realFiles(t) {
		p := f.Path
		if strings.HasPrefix(p, "gen/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !HasHeader(b) {
			t.Errorf("%s has no generated-code header", p)
		}
	}
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if generatedGo.Match(b) && filepath.ToSlash(p) != repoRoot+"/"+ViewsPackage+"/views_gen.go" {
				t.Errorf("%s is hand-written territory but says it is generated", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
