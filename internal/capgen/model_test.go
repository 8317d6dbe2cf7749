package capgen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"text/template/parse"

	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

// templateSources returns every template of the package by constant name: the string
// constants of its non-test files that hold template actions, with concatenated constants
// (genHeader + `…`) resolved.
func templateSources(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	exprs := map[string]ast.Expr{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						exprs[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	var eval func(e ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		case *ast.BinaryExpr:
			a, ok1 := eval(e.X)
			b, ok2 := eval(e.Y)
			return a + b, ok1 && ok2 && e.Op == token.ADD
		case *ast.Ident:
			if x, ok := exprs[e.Name]; ok {
				return eval(x)
			}
		case *ast.ParenExpr:
			return eval(e.X)
		}
		return "", false
	}
	out := map[string]string{}
	for name, e := range exprs {
		if s, ok := eval(e); ok && strings.Contains(s, "{{") {
			out[name] = s
		}
	}
	return out
}

// TestTemplatesReadOnlyTheModel: no template reaches for a .Spec field (the raw spec); the
// model holds everything they need, so a naming or branching decision cannot hide in one.
func TestTemplatesReadOnlyTheModel(t *testing.T) {
	srcs := templateSources(t)
	if len(srcs) < 10 {
		t.Fatalf("found only %d templates; the source scan is broken", len(srcs))
	}
	for name, src := range srcs {
		tmpl, err := template.New(name).Funcs(funcs).Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, tt := range tmpl.Templates() {
			if tt.Tree == nil {
				continue
			}
			walkFields(tt.Tree.Root, func(ident []string) {
				for _, id := range ident {
					if id == "Spec" {
						t.Errorf("template %s reads .%s: put what it needs into the model", name, strings.Join(ident, "."))
					}
				}
			})
		}
	}
}

func walkFields(n parse.Node, visit func(ident []string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkFields(c, visit)
		}
	case *parse.ActionNode:
		walkFields(n.Pipe, visit)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkFields(c, visit)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walkFields(a, visit)
		}
	case *parse.FieldNode:
		visit(n.Ident)
	case *parse.ChainNode:
		visit(n.Field)
		walkFields(n.Node, visit)
	case *parse.VariableNode:
		visit(n.Ident)
	case *parse.IfNode:
		walkFields(n.Pipe, visit)
		walkFields(n.List, visit)
		walkFields(n.ElseList, visit)
	case *parse.RangeNode:
		walkFields(n.Pipe, visit)
		walkFields(n.List, visit)
		walkFields(n.ElseList, visit)
	case *parse.WithNode:
		walkFields(n.Pipe, visit)
		walkFields(n.List, visit)
		walkFields(n.ElseList, visit)
	case *parse.TemplateNode:
		walkFields(n.Pipe, visit)
	}
}

// TestModelHoldsNoRawSpec: the model's types, exported fields and unexported alike, carry no
// field named Spec and no type of the spec package at all, so emitters (Go code as well as
// templates) cannot read past the model.
func TestModelHoldsNoRawSpec(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(path string, tp reflect.Type)
	walk = func(path string, tp reflect.Type) {
		if seen[tp] {
			return
		}
		seen[tp] = true
		if strings.HasSuffix(tp.PkgPath(), "internal/capgen/spec") {
			t.Errorf("%s is the raw spec type spec.%s; give the model its own type", path, tp.Name())
			return
		}
		switch tp.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(path, tp.Elem())
			return
		case reflect.Map:
			walk(path+"[key]", tp.Key())
			walk(path, tp.Elem())
			return
		case reflect.Struct:
		default:
			return
		}
		for i := 0; i < tp.NumField(); i++ {
			f := tp.Field(i)
			if f.Name == "Spec" {
				t.Errorf("%s.Spec: the model must not expose the raw spec", path)
			}
			walk(path+"."+f.Name, f.Type)
		}
	}
	walk("Model", reflect.TypeFor[Model]())
}

// TestEmittersDeclareDistinctFiles: each emitter declares its own files; two claiming one
// path is a generator bug Generate reports instead of letting the later one win.
func TestEmittersDeclareDistinctFiles(t *testing.T) {
	m := repoModel(t)
	twice := []Emitter{TextTemplate{"docs/x.md", "a"}, TextTemplate{"docs/x.md", "b"}}
	if _, err := generate(m, twice); err == nil || err.Error() != "docs/x.md: emitted twice" {
		t.Errorf("generate = %v, want docs/x.md: emitted twice", err)
	}
	files, err := Generate(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gen/schemas/roster_child.input.json", OpenAPIPath, "gen/schemas/openapi.json", "server.json", RowFilterMigration} {
		if !slices.ContainsFunc(files, func(f File) bool { return f.Path == want }) {
			t.Errorf("Generate does not emit %s", want)
		}
	}
}

// TestPIIFormsInTheModel: how the model resolves each form of an output's personal data
// (testdata/fixtures/minimal.yaml, whose generated code TestGolden compiles and
// TestGoldenFinalizeShortensNames runs). A short-named field keeps its Go type (a required one
// is no pointer, unlike a redactable field), its element struct in a list leaves the
// shortening to the list's owner (so it needs no finalize of its own), a handoff secret is
// neither redacted nor shortened, and a rule whose visible_with is the capability's own scope
// reduces nothing, as every caller holds it.
func TestPIIFormsInTheModel(t *testing.T) {
	src, err := os.ReadFile("testdata/fixtures/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load := func(t *testing.T, src string) *Model {
		t.Helper()
		s, err := spec.Parse("spec/capabilities.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return NewModel(s, "spec/capabilities.yaml", module)
	}
	field := func(t *testing.T, st *Struct, name string) *Field {
		t.Helper()
		for _, f := range st.Fields {
			if f.JSONName == name {
				return f
			}
		}
		t.Fatalf("%s has no field %s", st.GoName, name)
		return nil
	}
	output := func(t *testing.T, m *Model, id string) *Struct {
		t.Helper()
		for _, c := range m.Caps {
			if c.ID == id {
				return c.Output
			}
		}
		t.Fatalf("no capability %s", id)
		return nil
	}
	type form struct {
		Redactable, ShortNamed, IsPtr bool
		Otherwise, Handoff            string
	}
	formOf := func(f *Field) form {
		return form{f.Redactable, f.ShortNamed, f.IsPtr, f.Otherwise, f.Handoff}
	}
	m := load(t, string(src))
	thing, made := output(t, m, "thing"), output(t, m, "demo_thing_make")
	helpers := field(t, thing, "helpers").Elem
	const handoff = "Give this code to the thing's owner now; it is shown only this once."
	tests := []struct {
		name string
		got  *Field
		want form
	}{
		{"left out without its scope", field(t, thing, "owner_name"), form{Redactable: true, IsPtr: true}},
		{"short name, required, top level", field(t, thing, "maker_name"), form{ShortNamed: true, Otherwise: "short_name"}},
		{"short name, optional, top level", field(t, made, "approver_name"), form{ShortNamed: true, IsPtr: true, Otherwise: "short_name"}},
		{"short name, required, in a list", field(t, helpers, "name"), form{ShortNamed: true, Otherwise: "short_name"}},
		{"short name, optional, in a list", field(t, helpers, "deputy_name"), form{ShortNamed: true, IsPtr: true, Otherwise: "short_name"}},
		{"handoff secret", field(t, made, "claim_code"), form{IsPtr: true, Handoff: handoff}},
	}
	for _, tt := range tests {
		if got := formOf(tt.got); got != tt.want {
			t.Errorf("%s (%s): %+v, want %+v", tt.name, tt.got.JSONName, got, tt.want)
		}
	}
	if !helpers.InList || helpers.NeedsFinalize() || helpers.UsesGranted() {
		t.Errorf("helpers[]: InList %v, NeedsFinalize %v, UsesGranted %v; want an element of a list with nothing to finalize itself",
			helpers.InList, helpers.NeedsFinalize(), helpers.UsesGranted())
	}
	var names []string
	for _, f := range helpers.ShortNamedFields() {
		names = append(names, f.JSONName)
	}
	if !slices.Equal(names, []string{"name", "deputy_name"}) {
		t.Errorf("helpers[].ShortNamedFields = %v, want [name deputy_name]", names)
	}
	for _, st := range []*Struct{thing, made} {
		if !st.NeedsFinalize() || !st.UsesGranted() {
			t.Errorf("%s: NeedsFinalize %v, UsesGranted %v; want both (it shortens names)", st.GoName, st.NeedsFinalize(), st.UsesGranted())
		}
	}

	// visible_with the tool's own scope: whoever may call the tool receives the full name.
	own := strings.Replace(string(src), "description: \"Who approved it, if anyone: the full name with secrets:read, otherwise first name and last initial.\"\n        pii: {category: guardian_name, visible_with: secrets:read,",
		"description: \"Who approved it, if anyone: the full name with secrets:read, otherwise first name and last initial.\"\n        pii: {category: guardian_name, visible_with: things:write,", 1)
	if own == string(src) {
		t.Fatal("the fixture's approver_name is not where the test expects it")
	}
	approver := field(t, output(t, load(t, own), "demo_thing_make"), "approver_name")
	if got, want := formOf(approver), (form{IsPtr: true, Otherwise: "short_name"}); got != want {
		t.Errorf("approver_name visible with the tool's own scope: %+v, want %+v", got, want)
	}
}
