package capgen

import (
	"bufio"
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"
)

// StubDir is where scaffolded, hand-written capability logic lives.
const StubDir = "internal/logic"

// stubMarker tags a hand-written file with the capability it implements, so scaffold can
// report orphans after a capability leaves the spec.
var stubMarker = regexp.MustCompile(`(?m)^// capgen:capability ([a-z0-9_]+)$`)

// ScaffoldResult says what scaffold did.
type ScaffoldResult struct {
	Created []string // files written
	Orphans []string // "file: capability" whose capability is no longer in the spec
}

// Scaffold creates one stub file per capability that has none, under root/StubDir, plus the
// Service type if it is missing. It never overwrites a file.
func Scaffold(m *Model, root string) (ScaffoldResult, error) {
	var res ScaffoldResult
	dir := filepath.Join(root, StubDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("creating %s: %w", StubDir, err)
	}
	have, err := existingStubs(dir)
	if err != nil {
		return res, err
	}
	files := map[string][]byte{}
	if _, err := os.Stat(filepath.Join(dir, "service.go")); os.IsNotExist(err) {
		src, err := renderStub(m, serviceStubTmpl, nil)
		if err != nil {
			return res, err
		}
		files["service.go"] = src
	}
	for _, c := range m.Caps {
		if _, ok := have[c.ID]; ok {
			continue
		}
		name := c.ID + ".go"
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return res, fmt.Errorf("%s/%s exists but has no \"// capgen:capability %s\" marker; add the marker or move the file", StubDir, name, c.ID)
		}
		src, err := renderStub(m, capStubTmpl, c)
		if err != nil {
			return res, err
		}
		files[name] = src
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		// O_EXCL: never overwrite, even if a file appeared since we looked.
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return res, fmt.Errorf("creating stub %s: %w", n, err)
		}
		_, werr := f.Write(files[n])
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return res, fmt.Errorf("writing stub %s: %v %v", n, werr, cerr)
		}
		res.Created = append(res.Created, StubDir+"/"+n)
	}
	ids := make([]string, len(m.Caps))
	for i, c := range m.Caps {
		ids[i] = c.ID
	}
	for id, file := range have {
		if !slices.Contains(ids, id) {
			res.Orphans = append(res.Orphans, fmt.Sprintf("%s/%s: capability %q is no longer in the spec; delete the file or move its logic", StubDir, file, id))
		}
	}
	sort.Strings(res.Orphans)
	return res, nil
}

func existingStubs(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", StubDir, err)
	}
	have := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", e.Name(), err)
		}
		for _, m := range stubMarker.FindAllSubmatch(b, -1) {
			have[string(m[1])] = e.Name()
		}
	}
	return have, nil
}

// Unimplemented lists the capabilities whose stub under root/StubDir still returns
// errs.ErrNotImplemented (the scaffolded body), sorted.
func Unimplemented(root string) ([]string, error) {
	dir := filepath.Join(root, StubDir)
	have, err := existingStubs(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for id, file := range have {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if strings.Contains(sc.Text(), "errs.ErrNotImplemented") {
				out = append(out, id)
				break
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func renderStub(m *Model, tmpl string, c *Cap) ([]byte, error) {
	t, err := template.New("").Funcs(funcs).Parse(tmpl)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct {
		M *Model
		C *Cap
	}{m, c}); err != nil {
		return nil, err
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("stub: gofmt failed: %w\n%s", err, numbered(buf.Bytes()))
	}
	return src, nil
}

const capStubTmpl = `package logic

import (
	"context"
	"fmt"

	"{{.M.GenImport}}/capapi"
	"{{.M.Module}}/internal/errs"
)

// capgen:capability {{.C.ID}}

// {{.C.GoName}} implements {{if .C.IsTool}}tool{{else}}resource{{end}} {{quote .C.WireName}} (scope {{.C.Scope}}).
//
// Scaffolded once by capgen; this file is hand-written from now on and never regenerated.
func (s *Service) {{.C.GoName}}(ctx context.Context, in *capapi.{{.C.Input.GoName}}) (*capapi.{{.C.Output.GoName}}, error) {
	return nil, fmt.Errorf("%s: %w", capapi.{{.C.IDConstName}}, errs.ErrNotImplemented)
}
`

const serviceStubTmpl = `// Package logic is the hand-written business logic behind every capability: one file per
// capability, scaffolded once by capgen and owned by people from then on.
package logic

import (
	"context"

	"{{.M.GenImport}}/capapi"
)

// Service implements the generated Handler.
type Service struct{}

// The build breaks here when the spec gains a capability that has no method yet.
var _ capapi.Handler = (*Service)(nil)

// Complete answers completion/complete for completable inputs.
func (s *Service) Complete(ctx context.Context, capabilityID, variable, prefix string) ([]string, error) {
	return nil, nil
}
`
