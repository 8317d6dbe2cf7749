package specschema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gjs "github.com/google/jsonschema-go/jsonschema"
	"gopkg.in/yaml.v3"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// moduleRoot is the module root, from this package's directory.
const moduleRoot = "../../.."

// TestSchemaHeader: the document says what it is and where it comes from. Its encoding (and
// that the committed file is current) is capgen's, tested there with every other JSON file.
func TestSchemaHeader(t *testing.T) {
	s, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != "https://json-schema.org/draft/2020-12/schema" || s.ID != ID || s.Title == "" ||
		!strings.Contains(s.Comments, "internal/capgen/spec/model.go") || !strings.Contains(s.Comments, "DO NOT EDIT.") {
		t.Errorf("header = %q %q %q %q", s.Version, s.ID, s.Title, s.Comments)
	}
}

// resolved is the generated schema, ready to validate with github.com/google/jsonschema-go,
// an implementation independent of the one that wrote it.
func resolved(t *testing.T) *gjs.Resolved {
	t.Helper()
	schema, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s gjs.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("the generated schema does not resolve: %v", err)
	}
	return rs
}

// validate checks a YAML spec against the schema as an editor would: as JSON.
func validate(rs *gjs.Resolved, src []byte) error {
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return fmt.Errorf("not YAML the schema can see: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("not JSON-shaped: %w", err)
	}
	var instance any
	if err := json.Unmarshal(b, &instance); err != nil {
		return err
	}
	return rs.Validate(instance)
}

// TestValidSpecsMatchSchema: the specs the loader accepts, the schema accepts.
func TestValidSpecsMatchSchema(t *testing.T) {
	rs := resolved(t)
	for _, file := range []string{filepath.Join(moduleRoot, "spec/capabilities.yaml"), "../spec/testdata/valid.yaml"} {
		if _, err := spec.Load(file); err != nil {
			t.Fatalf("loader: %v", err)
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(rs, src); err != nil {
			t.Errorf("%s loads but breaks the schema: %v", file, err)
		}
	}
}

// loaderOnly lists the broken specs (internal/capgen/spec/testdata/broken) that the schema
// accepts, and why it cannot tell. Every other broken spec must break the schema too.
var loaderOnly = map[string]string{
	"duplicate_go_name":                  "Go names are the generator's concern",
	"example_missing_required":           "a cross-reference (the capability's required inputs)",
	"example_unknown_input":              "a cross-reference (the capability's inputs)",
	"example_unknown_ref":                "the fixture's named values are the loader's vocabulary",
	"format_on_integer":                  "which keys suit which type is left to the loader",
	"input_not_uri_variable":             "a cross-reference",
	"merge_key":                          "editors expand merge keys; the loader does not",
	"pii_on_array":                       "which keys suit which type is left to the loader",
	"pii_on_scalar_items":                "which keys suit which type is left to the loader",
	"pii_redactable_required":            "a cross-reference",
	"pii_unknown_scope":                  "a cross-reference",
	"pii_visible_with_on_input":          "input and output fields share a definition",
	"pii_otherwise_on_input":             "input and output fields share a definition",
	"pii_otherwise_without_visible_with": "which keys go together is left to the loader",
	"pii_otherwise_not_string":           "which keys suit which type is left to the loader",
	"pii_handoff_on_input":               "input and output fields share a definition",
	"in_text_on_input":                   "input and output fields share a definition",
	"pii_handoff_not_secret":             "which keys suit which category is left to the loader",
	"pii_handoff_required":               "which keys go together is left to the loader",
	"pii_handoff_nested":                 "top-level and nested fields share a definition",
	"role_unknown_scope":                 "a cross-reference",
	"sensitive_without_warning":          "which keys go together is left to the loader",
	"warning_without_sensitive":          "which keys go together is left to the loader",
	"summary_function":                   "a summary is a Go template, parsed by the loader",
	"summary_optional":                   "a summary is a Go template, parsed by the loader",
	"summary_pii":                        "a summary is a Go template, parsed by the loader",
	"summary_unknown_field":              "a summary is a Go template, parsed by the loader",
	"view_bad_file":                      "where view documents live is the loader's concern",
	"view_bad_uri":                       "the ui:// form is the loader's concern",
	"view_bad_visibility":                "the loader checks list members",
	"view_app_only_visibility":           "the loader checks list members",
	"view_visibility_twice":              "the loader checks list members",
	"view_unknown_capability":            "a cross-reference",
	"view_app_tool_unknown_tool":         "a cross-reference",
	"view_app_tool_name_taken":           "names across sections are the loader's concern",
	"row_filter_sqlc_arg":                "what the SQL may refer to is the loader's concern",
	"tool_query_name":                    "resources and tools share a definition; the loader checks tool-only keys",
	"resource_query_name":                "the loader checks query names (see tool_query_name)",
	"tool_without_audit_action":          "resources and tools share a definition; the loader checks tool-only keys",
	"tool_without_queries":               "resources and tools share a definition; the loader checks tool-only keys",
	"tool_name_prefix":                   "the prefix is data (server.tool_prefix)",
	"two_documents":                      "editors validate each document on its own",
	"undeclared_scope":                   "a cross-reference",
	"unknown_row_filter":                 "a cross-reference",
	"unreachable_capability":             "a cross-reference",
	"uri_template_bad_variable":          "RFC 6570 syntax is beyond a pattern worth keeping",
	"uri_template_no_scheme":             "RFC 6570 syntax is beyond a pattern worth keeping",
	"uri_template_unclosed":              "RFC 6570 syntax is beyond a pattern worth keeping",
	"uri_variable_not_input":             "a cross-reference",
	"where_input_not_input":              "a cross-reference",
	"upstream_unknown_scope":             "a cross-reference",
}

// schemaSays pins, for some broken specs the schema rejects, a word its error must contain, so
// they are rejected for the right reason.
var schemaSays = map[string]string{
	"unknown_key":                "colour",
	"unknown_key_typo":           "titel",
	"unknown_top_level_key":      `"tool"`,
	"invalid_type":               "strng",
	"invalid_format":             "uid",
	"pii_unknown_category":       "guardian_nmae",
	"pii_otherwise_unknown":      "short_nmae",
	"wrong_kind":                 "CapabilitySpec",
	"unsupported_schema_version": "schemaVersion",
	"tool_name_space":            "demo_thing rename",
	"tool_name_too_long":         "maxLength",
	"tool_with_query":            "query",
	"tool_without_annotations":   "annotations",
	"missing_church_filter":      "contains",
	"no_church_filter_declared":  "church",
	"empty_description":          "minLength",
	"role_name_not_upper_case":   "admin",
	"upstream_stdio_command":     "command",
	"upstream_tools_all":         "tools",
	"upstream_tools_empty":       "tools",
}

// TestBrokenSpecsAgainstSchema: the schema rejects every broken spec it can express, and the
// loader rejects all of them.
func TestBrokenSpecsAgainstSchema(t *testing.T) {
	rs := resolved(t)
	files, err := filepath.Glob("../spec/testdata/broken/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no broken specs: %v", err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := spec.Parse(file, src); err == nil {
				t.Fatal("the loader accepts it")
			}
			err = validate(rs, src)
			if why, ok := loaderOnly[name]; ok {
				if err == nil {
					return
				}
				t.Fatalf("listed as beyond the schema (%s), but the schema rejects it: %v; take it off loaderOnly", why, err)
			}
			if err == nil {
				t.Fatal("the schema accepts it; tighten the schema or list it in loaderOnly with the reason")
			}
			if word := schemaSays[name]; !strings.Contains(err.Error(), word) {
				t.Errorf("the schema rejects it, but not for %q: %v", word, err)
			}
		})
	}
	for name := range loaderOnly {
		if !seen[name] {
			t.Errorf("loaderOnly names %s, which is not under testdata/broken", name)
		}
	}
	for name := range schemaSays {
		if !seen[name] {
			t.Errorf("schemaSays names %s, which is not under testdata/broken", name)
		}
	}
}

// TestPatternsAgree: for names of every kind, the loader and the schema give the same verdict.
// Each case renames one thing in internal/capgen/spec/testdata/valid.yaml.
func TestPatternsAgree(t *testing.T) {
	rs := resolved(t)
	base, err := os.ReadFile("../spec/testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	long := func(n int) string { return "demo_" + strings.Repeat("x", n-len("demo_")) }
	kinds := []struct {
		kind  string
		old   string // replaced everywhere with each name
		names []string
	}{
		{"scope", "things:write", []string{"things:write_all", "things", "Things:write", "things:write:all", "things:", "9things:write"}},
		{"role", "ADMIN:", []string{"ADMIN_2:", "A:", "Admin:", "2ADMIN:", "ADMIN-X:"}},
		{"resource", "\n  thing:\n", []string{"\n  thing_2:\n", "\n  a1:\n", "\n  Thing:\n", "\n  thing__x:\n", "\n  thing-x:\n", "\n  _thing:\n"}},
		{"tool", "demo_thing_rename:", []string{"demo_thing_v2:", long(128) + ":", long(129) + ":", "demo_thingRename:", "demo_thing.rename:", "demo_thing-rename:"}},
		{"field", "\n      owner:\n", []string{"\n      owner_name:\n", "\n      Owner:\n", "\n      owner-name:\n", "\n      owner__name:\n"}},
		{"row filter", "\nroles:\n", []string{"\n  own_2: {description: d, sql: x = 1}\nroles:\n", "\n  Own: {description: d, sql: x = 1}\nroles:\n", "\n  own-x: {description: d, sql: x = 1}\nroles:\n"}},
		{"server name", "io.github.example/demo", []string{"example/demo", "io.github.example", "io github/demo", "a/b/c"}},
		{"server version", "0.1.0", []string{"1.2.3-rc.1", "1.2.3+build.5", "1.2", "v1.2.3", "1.2.3-"}},
	}
	for _, k := range kinds {
		for _, name := range k.names {
			src := strings.ReplaceAll(string(base), k.old, name)
			if src == string(base) {
				t.Fatalf("%s: %q is not in the base spec", k.kind, k.old)
			}
			_, loadErr := spec.Parse("renamed.yaml", []byte(src))
			schemaErr := validate(rs, []byte(src))
			if (loadErr == nil) != (schemaErr == nil) {
				t.Errorf("%s %q: loader error %v, schema error %v", k.kind, strings.TrimSpace(name), loadErr, schemaErr)
			}
		}
	}
}
