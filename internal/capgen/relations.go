package capgen

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// SchemaDir holds the goose migrations, relative to the repository root.
const SchemaDir = "queries/schema"

var (
	createView  = regexp.MustCompile(`(?is)CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+(\w+)(?:\s+WITH\s*\([^)]*\))?\s+AS\s+SELECT\s+(.*?)\s+FROM\s`)
	createTable = regexp.MustCompile(`(?is)CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s*\((.*?)\n\);`)
	trailingAs  = regexp.MustCompile(`(?is)\bAS\s+(\w+)\s*$`)
	lastIdent   = regexp.MustCompile(`(\w+)\s*$`)
	columnDef   = regexp.MustCompile(`(?m)^\s*(\w+)\s+\w`)
	downSection = regexp.MustCompile(`(?m)^--\s*\+goose\s+Down`)
	lineComment = regexp.MustCompile(`--[^\n]*`)
)

// SchemaRelations reads the views and tables the Up sections of the migrations under root
// create, with their columns, for [spec.Spec.CheckRelations]. It understands the project's own
// style (one select item per alias, "CREATE TABLE name (\n  col type …\n);"); a relation it
// cannot read is left out, and sqlc reports what this misses.
func SchemaRelations(root string) (map[string][]string, error) {
	files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(SchemaDir), "*.sql"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	rel := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sql := string(b)
		if loc := downSection.FindStringIndex(sql); loc != nil {
			sql = sql[:loc[0]]
		}
		sql = lineComment.ReplaceAllString(sql, "")
		for _, m := range createView.FindAllStringSubmatch(sql, -1) {
			var cols []string
			for _, item := range splitTopLevel(m[2]) {
				if a := trailingAs.FindStringSubmatch(item); a != nil {
					cols = append(cols, a[1])
				} else if id := lastIdent.FindStringSubmatch(item); id != nil {
					cols = append(cols, id[1])
				}
			}
			rel[m[1]] = cols
		}
		for _, m := range createTable.FindAllStringSubmatch(sql, -1) {
			var cols []string
			for _, item := range splitTopLevel(m[2]) {
				c := columnDef.FindStringSubmatch(item)
				if c == nil {
					continue
				}
				switch strings.ToUpper(c[1]) {
				case "PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "CONSTRAINT", "EXCLUDE":
					continue
				}
				cols = append(cols, c[1])
			}
			rel[m[1]] = cols
		}
	}
	return rel, nil
}

// splitTopLevel splits a comma-separated SQL list, ignoring commas inside parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}
