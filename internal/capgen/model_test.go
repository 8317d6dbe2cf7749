package capgen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"text/template/parse"
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
