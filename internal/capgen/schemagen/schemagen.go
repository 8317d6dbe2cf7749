// Package schemagen is stage two of the generator: it reflects the generated capability types
// with invopop/jsonschema into JSON Schemas (draft 2020-12) and builds the OpenAPI 3.1 document
// from them. It runs inside the generated gen/schemagen command, which imports the generated
// types, so schemas always describe the Go types the server actually decodes and encodes.
package schemagen

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"github.com/google/uuid"
	"github.com/invopop/jsonschema"

	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// Pair is one capability's input and output types (zero values).
type Pair struct {
	ID     string
	Input  any
	Output any
}

// Reflector returns the reflector every schema is produced with: inlined (MCP clients dislike
// $ref roots), object roots, additionalProperties false, required only where tagged, and the
// project's own scalar types mapped to string formats.
func Reflector() *jsonschema.Reflector {
	return &jsonschema.Reflector{
		DoNotReference:             true,
		ExpandedStruct:             true,
		RequiredFromJSONSchemaTags: true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case reflect.TypeFor[uuid.UUID]():
				return &jsonschema.Schema{Type: "string", Format: "uuid"}
			case reflect.TypeFor[capability.Date]():
				return &jsonschema.Schema{Type: "string", Format: "date"}
			}
			return nil
		},
	}
}

// Schema reflects v into canonical JSON: no $schema/$id noise beyond the draft, stable order.
func Schema(v any) ([]byte, error) {
	s := Reflector().Reflect(v)
	s.Version = "https://json-schema.org/draft/2020-12/schema"
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshalling schema of %T: %w", v, err)
	}
	return append(b, '\n'), nil
}

// Files returns every schema file and the OpenAPI document, in memory.
func Files(s *spec.Spec, specPath string, types []Pair) (map[string][]byte, error) {
	out := map[string][]byte{}
	ins, outs := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for _, p := range types {
		in, err := Schema(p.Input)
		if err != nil {
			return nil, err
		}
		o, err := Schema(p.Output)
		if err != nil {
			return nil, err
		}
		out["gen/schemas/"+p.ID+".input.json"] = in
		out["gen/schemas/"+p.ID+".output.json"] = o
		ins[p.ID], outs[p.ID] = in, o
	}
	doc, err := OpenAPI(s, specPath, ins, outs)
	if err != nil {
		return nil, err
	}
	out["gen/openapi/openapi.json"] = doc
	return out, nil
}

// Main is the body of the generated gen/schemagen command. With -check it writes nothing and
// fails when a file on disk differs.
func Main(specPath string, types []Pair, args []string) error {
	fs := flag.NewFlagSet("schemagen", flag.ContinueOnError)
	root := fs.String("root", ".", "repository root")
	check := fs.Bool("check", false, "compare with the files on disk instead of writing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := spec.Load(filepath.Join(*root, specPath))
	if err != nil {
		return err
	}
	files, err := Files(s, specPath, types)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if *check {
		var stale []string
		for _, n := range names {
			cur, err := os.ReadFile(filepath.Join(*root, n))
			if err != nil || !bytes.Equal(cur, files[n]) {
				stale = append(stale, n)
			}
		}
		if len(stale) > 0 {
			return fmt.Errorf("stale generated files (run make generate): %v", stale)
		}
		return nil
	}
	// Wipe this stage's own outputs first, so a capability that left the spec leaves no schema.
	old, _ := filepath.Glob(filepath.Join(*root, "gen/schemas/*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("removing stale schema: %w", err)
		}
	}
	for _, n := range names {
		p := filepath.Join(*root, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", filepath.Dir(n), err)
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", n, err)
		}
	}
	return nil
}
