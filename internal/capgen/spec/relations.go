package spec

import (
	"fmt"
	"slices"
	"sort"
)

// CheckRelations reports, against the spec's lines, every resource query that names a view or
// column the schema does not have. relations maps each view or table of the schema (the
// migrations, see capgen.SchemaRelations) to its columns. It runs before sqlc, whose errors
// would point at the generated SQL instead. The row filters' columns are checked too: the
// generated query passes them to the filters' functions.
func (s *Spec) CheckRelations(relations map[string][]string) error {
	var ds Diagnostics
	add := func(path, msg, hint string) {
		ds = append(ds, Diagnostic{File: s.File, Pos: s.pos.at(path), Msg: msg, Hint: hint})
	}
	names := make([]string, 0, len(relations))
	for n := range relations {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, e := range s.Resources {
		q := e.Value.Query
		if q == nil {
			continue
		}
		p := join("resources", e.Name) + ".query"
		cols, ok := relations[q.From]
		if !ok {
			add(p+".from", fmt.Sprintf("resource %q reads unknown view %q%s", e.Name, q.From, didYouMean(q.From, names)),
				"create it in a migration under queries/schema/ or fix the name")
			continue
		}
		check := func(path, col, what string) {
			if !slices.Contains(cols, col) {
				add(path, fmt.Sprintf("resource %q: %s %q is not a column of %s%s", e.Name, what, col, q.From, didYouMean(col, cols)),
					fmt.Sprintf("use one of: %s", joinList(cols)))
			}
		}
		for i, c := range q.Select {
			check(fmt.Sprintf("%s.select[%d]", p, i), c, "selected column")
		}
		for i, w := range q.Where {
			check(fmt.Sprintf("%s.where[%d].column", p, i), w.Column, "where column")
		}
		for i, c := range q.OrderBy {
			check(fmt.Sprintf("%s.order_by[%d]", p, i), c, "order_by column")
		}
		for i, f := range e.Value.RowFilters {
			if rf, ok := s.RowFilters.Get(f); ok && rf.Column != "" {
				check(fmt.Sprintf("resources.%s.row_filters[%d]", e.Name, i), rf.Column, fmt.Sprintf("row filter %s's column", f))
			}
		}
	}
	if len(ds) == 0 {
		return nil
	}
	return ds
}

func joinList(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
