package capgen

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The directories the external generators own wholly, replaced as a whole.
const (
	SQLCDir = "gen/db"          // sqlc's, from queries/sqlc.yaml
	OgenDir = "gen/openapi/oas" // ogen's, from OpenAPIPath
)

// ogenConfig is ogen's configuration (ogen.yml beside this file): only the router and what it
// needs are generated, no client and no OpenTelemetry.
//
//go:embed ogen.yml
var ogenConfig []byte

// Tools are the external generators make generate runs on capgen's output: sqlc turns the
// queries (queries/generated/ included) and the migrations (00090 included) into SQLCDir, ogen
// turns the OpenAPI document into OgenDir with [ogenConfig]. An empty path skips that step.
type Tools struct {
	SQLC, Ogen string
	Log        io.Writer // the tools' output worth reading (ogen's INFO lines are dropped); nil for none
}

// Apply is make generate's one transaction: it writes files into a staging directory under
// root, runs sqlc and ogen there on the staged queries, migrations and OpenAPI document, checks
// that every generated Go file is gofmt'd, and only when every step succeeded moves the result
// into the tree (SQLCDir and OgenDir swapped by rename, capgen's files renamed over theirs, the
// stale ones deleted). A failing capgen, sqlc or ogen leaves every generated file as it was.
func Apply(root string, files []File, tools Tools) (err error) {
	if tools.Log == nil {
		tools.Log = io.Discard
	}
	stale, err := Stale(root, files)
	if err != nil {
		return err
	}
	stage, err := os.MkdirTemp(root, ".capgen-stage-")
	if err != nil {
		return fmt.Errorf("creating the staging directory: %w", err)
	}
	defer os.RemoveAll(stage)
	for _, f := range files {
		if err := writeAtomically(filepath.Join(stage, filepath.FromSlash(f.Path)), f.Content); err != nil {
			return fmt.Errorf("staging %s: %w", f.Path, err)
		}
	}
	var swaps []string
	if tools.SQLC != "" {
		if err := stageQueries(root, stage, stale); err != nil {
			return err
		}
		out, err := runTool(filepath.Join(stage, "queries"), tools.SQLC, "generate", "-f", "sqlc.yaml")
		tools.Log.Write(out)
		if err != nil {
			return fmt.Errorf("sqlc failed (%w); nothing was written, the previous %s and every generated file are as they were", err, SQLCDir)
		}
		swaps = append(swaps, SQLCDir)
	}
	if tools.Ogen != "" {
		doc := filepath.Join(stage, filepath.FromSlash(OpenAPIPath))
		out, err := runOgen(tools.Ogen, stage, doc, filepath.Join(stage, filepath.FromSlash(OgenDir)))
		if err != nil {
			tools.Log.Write(out)
			return fmt.Errorf("ogen failed (%w); nothing was written, the previous %s and every generated file are as they were", err, OgenDir)
		}
		tools.Log.Write(ogenNoise(out))
		swaps = append(swaps, OgenDir)
	}
	if err := gofmtd(stage); err != nil {
		return err
	}
	for _, d := range swaps {
		if _, err := os.Stat(filepath.Join(stage, filepath.FromSlash(d))); err != nil {
			return fmt.Errorf("%s was not generated: %w", d, err)
		}
	}
	// Commit: only renames and removals from here on.
	for _, d := range swaps {
		if err := swapDir(filepath.Join(stage, filepath.FromSlash(d)), filepath.Join(root, filepath.FromSlash(d))); err != nil {
			return err
		}
	}
	return Write(root, files)
}

// stageQueries copies root/queries into the stage, beside the generated queries and migration
// already staged, leaving out the generated files that are stale: sqlc sees exactly the
// queries and migrations the tree will hold.
func stageQueries(root, stage string, stale []string) error {
	skip := map[string]bool{}
	for _, p := range stale {
		skip[p] = true
	}
	src := filepath.Join(root, "queries")
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(stage, rel)
		if skip[filepath.ToSlash(rel)] {
			return nil
		}
		if _, err := os.Stat(dst); err == nil {
			return nil // generated: the staged version wins
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return writeAtomically(dst, b)
	})
}

// runOgen runs ogen on the OpenAPI document doc into the directory target with [ogenConfig],
// which it writes into scratch (a directory the caller removes); ogen runs there, on absolute
// paths.
func runOgen(bin, scratch, doc, target string) ([]byte, error) {
	var err error
	if scratch, err = filepath.Abs(scratch); err != nil {
		return nil, err
	}
	if doc, err = filepath.Abs(doc); err != nil {
		return nil, err
	}
	if target, err = filepath.Abs(target); err != nil {
		return nil, err
	}
	config := filepath.Join(scratch, "ogen.yml")
	if err := os.WriteFile(config, ogenConfig, 0o644); err != nil {
		return nil, fmt.Errorf("writing ogen's configuration: %w", err)
	}
	return runTool(scratch, bin, "--config", config, "--target", target, "--package", "oas", "--clean", doc)
}

func runTool(dir, bin string, args ...string) ([]byte, error) {
	if strings.ContainsRune(bin, filepath.Separator) {
		if abs, err := filepath.Abs(bin); err == nil {
			bin = abs // it runs in another directory
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// ogenNoise keeps the lines of ogen's output worth reading: not its INFO lines, nor its note
// that it ensures "status" matching HTTP status codes.
func ogenNoise(out []byte) []byte {
	var keep bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "INFO") || strings.Contains(l, `Ensuring "status" matching HTTP status`) {
			continue
		}
		keep.WriteString(l + "\n")
	}
	return keep.Bytes()
}

// gofmtd fails when a staged Go file is not gofmt'd: the tree never receives one.
func gofmtd(stage string) error {
	var bad []string
	err := filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if f, err := format.Source(b); err != nil || !bytes.Equal(f, b) {
			rel, _ := filepath.Rel(stage, p)
			bad = append(bad, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("generated Go is not gofmt'd (nothing was written):\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

// swapDir puts the directory src in dst's place: dst is renamed aside, src renamed in, and the
// old one removed; if src cannot be moved in, the old one is put back.
func swapDir(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Chmod(src, 0o755); err != nil {
		return err
	}
	old := ""
	if _, err := os.Stat(dst); err == nil {
		aside, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".old-")
		if err != nil {
			return err
		}
		old = filepath.Join(aside, filepath.Base(dst))
		if err := os.Rename(dst, old); err != nil {
			os.Remove(aside)
			return fmt.Errorf("moving %s aside: %w", dst, err)
		}
		defer os.RemoveAll(aside)
	}
	if err := os.Rename(src, dst); err != nil {
		if old != "" {
			err = errors.Join(err, os.Rename(old, dst))
		}
		return fmt.Errorf("moving the new %s in: %w", dst, err)
	}
	return nil
}
