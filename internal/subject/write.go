package subject

import (
	"embed"
	"encoding/json"
	"html/template"
	"io"
	"time"

	"github.com/google/uuid"
)

// WriteJSON writes r as one indented JSON object.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

//go:embed export.html.tmpl
var templates embed.FS

var page = template.Must(template.New("export.html.tmpl").Funcs(template.FuncMap{
	"at": func(t time.Time) string { return t.In(brasilia).Format("02/01/2006 15:04") },
	"atp": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.In(brasilia).Format("02/01/2006 15:04")
	},
	"idp": func(id *uuid.UUID) string {
		if id == nil {
			return "—"
		}
		return id.String()
	},
	"child": func(uuid.UUID) string { return "" },
	"acct":  func(any) string { return "" },
	"dash": func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	},
}).ParseFS(templates, "export.html.tmpl"))

// brasilia is the time zone the readable page shows times in (UTC-3, no daylight saving).
var brasilia = time.FixedZone("BRT", -3*60*60)

// WriteHTML writes r as one self-contained HTML page (inline style, no scripts, no external
// resources); html/template escapes every value.
func WriteHTML(w io.Writer, r Report) error {
	children := map[uuid.UUID]string{}
	for _, c := range r.Children {
		children[c.ID] = c.Name
	}
	accounts := map[uuid.UUID]string{}
	for _, a := range r.Accounts {
		n := a.Role
		if a.Name != "" {
			n = a.Name + " (" + a.Role + ")"
		}
		accounts[a.ID] = n
	}
	t, err := page.Clone()
	if err != nil {
		return err
	}
	t.Funcs(template.FuncMap{
		"child": func(id uuid.UUID) string {
			if n, ok := children[id]; ok {
				return n
			}
			return id.String()
		},
		"acct": func(v any) string {
			var id uuid.UUID
			switch x := v.(type) {
			case uuid.UUID:
				id = x
			case *uuid.UUID:
				if x == nil {
					return "—"
				}
				id = *x
			default:
				return "—"
			}
			if n, ok := accounts[id]; ok {
				return n
			}
			return "conta " + id.String()
		},
	})
	return t.Execute(w, r)
}
