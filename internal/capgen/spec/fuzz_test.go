package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary bytes, starting from every spec under testdata/ and the real
// spec. Load must never panic, and every diagnostic must point into the file (line and column
// at least 1) and say what is wrong. Crashers the fuzzer finds are kept under
// testdata/fuzz/FuzzParse and rerun by plain `go test`.
//
//	go test ./internal/capgen/spec -run '^$' -fuzz FuzzParse -fuzztime 1m
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	broken, err := filepath.Glob("testdata/broken/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, broken...)
	seeds = append(seeds, "../../../spec/capabilities.yaml")
	for _, file := range seeds {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		const file = "fuzz.yaml"
		s, err := Parse(file, src)
		if err == nil {
			if s == nil {
				t.Fatal("Parse returned neither a spec nor an error")
			}
			return
		}
		var ds Diagnostics
		if !errors.As(err, &ds) || len(ds) == 0 {
			t.Fatalf("Parse error is %T %q; want non-empty Diagnostics", err, err)
		}
		for _, d := range ds {
			if d.File != file || d.Pos.Line < 1 || d.Pos.Col < 1 || strings.TrimSpace(d.Msg) == "" {
				t.Errorf("malformed diagnostic %#v", d)
			}
		}
	})
}
