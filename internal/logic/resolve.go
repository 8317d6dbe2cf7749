package logic

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// A person or a model names a child as the class list shows them: by handle, by label, or by
// first name (narrowed by class). This file resolves such a name to one child, or refuses
// with the candidates, shown to the caller only (errs.Invalid.Detail never reaches a log).

// dayChild is a child a check-in or check-out may name on a service day, with the label the
// class list shows for it (capability.ShortNames over its class, the spec's short_name rule).
type dayChild struct {
	db.ClassListChildrenRow
	label string
}

// open reports whether the child is checked in and not yet picked up.
func (c dayChild) open() bool { return c.CheckinID != nil && c.CheckedOutAt == nil }

// dayChildren are the children the caller may name on day, labelled class by class exactly as
// the class list labels them (same rows, same order, same rule).
//
// Naming a child this way reads the class list, so it needs the class list's scope; a token
// without it names the child by child_id.
func dayChildren(ctx context.Context, q *db.Queries, w who, day capability.Date) ([]dayChild, error) {
	if !w.Scopes.Has(scopes.CheckinsRead) {
		return nil, &errs.Invalid{Field: "child", Reason: "naming a child by handle, label or name reads the class list, which needs checkins:read; give child_id, or authorize checkins:read"}
	}
	rows, err := q.ClassListChildren(ctx, db.ClassListChildrenParams{
		ChurchID: w.ChurchID, UserID: w.UserID, Role: w.Role, ServiceDate: day.Time(),
	})
	if err != nil {
		return nil, err
	}
	out := make([]dayChild, len(rows))
	for i, r := range rows {
		out[i] = dayChild{ClassListChildrenRow: r, label: r.ChildName}
	}
	for start := 0; start < len(out); {
		end := start
		for end < len(out) && out[end].ClassID == out[start].ClassID {
			end++
		}
		group := out[start:end]
		capability.ShortNames(len(group), func(i int) *string { return &group[i].label })
		start = end
	}
	return out, nil
}

// normalizeHandle reads a handle as a person may type it: any case, spaces or dashes, and the
// Crockford confusables (O for 0, I and L for 1).
func normalizeHandle(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	s = strings.NewReplacer(" ", "", "-", "", "O", "0", "I", "1", "L", "1").Replace(s)
	return s
}

// childQuery is how a call names a child: the text given, the field it came in, and whether
// the caller may match full names (children:read: the caller sees them anyway).
type childQuery struct {
	field     string
	text      string
	fullNames bool
	// class, when set, narrows the candidates to one class (the class the caller named).
	class *uuid.UUID
	// checkedIn keeps only children with a check-in that day (a check-out), those still in
	// class first when a name matches several.
	checkedIn bool
}

// pick resolves q among children: a handle names one child wherever it is; otherwise the text
// is a label, a first name or (with children:read) a full name, compared folded, within the
// class if one was named. None or several is an *errs.Invalid naming the field; several lists
// the candidates (label, handle, class) in its Detail.
func pick(children []dayChild, q childQuery) (dayChild, error) {
	if h := normalizeHandle(q.text); len(h) == 6 {
		for _, c := range children {
			if c.Handle == h {
				if q.checkedIn && c.CheckinID == nil {
					return dayChild{}, &errs.Invalid{Field: q.field, Reason: "names a child who is not checked in that day"}
				}
				return c, nil
			}
		}
	}
	text := capability.FoldName(q.text)
	words := strings.Fields(text)
	var byLabel, byFirst []dayChild
	for _, c := range children {
		if q.class != nil && c.ClassID != *q.class {
			continue
		}
		if q.checkedIn && c.CheckinID == nil {
			continue
		}
		name := capability.FoldName(c.ChildName)
		switch {
		case capability.FoldName(c.label) == text, q.fullNames && name == text:
			byLabel = append(byLabel, c)
		case len(words) == 1 && firstWord(name) == words[0]:
			byFirst = append(byFirst, c)
		}
	}
	found := byLabel
	if len(found) == 0 {
		found = byFirst
	}
	if q.checkedIn && len(found) > 1 {
		// A child still in class is the one being picked up; one already gone is not.
		var open []dayChild
		for _, c := range found {
			if c.open() {
				open = append(open, c)
			}
		}
		if len(open) > 0 {
			found = open
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		where := "among the children you may see"
		if q.class != nil {
			where = "in that class"
		}
		if q.checkedIn {
			where += " checked in that day"
		}
		return dayChild{}, &errs.Invalid{Field: q.field, Reason: fmt.Sprintf(
			"names no child %s; read neemias_class_list and give the child's handle", where)}
	}
	return dayChild{}, &errs.Invalid{
		Field:  q.field,
		Reason: fmt.Sprintf("matches %d children; call again with child set to the handle of the one you mean", len(found)),
		Detail: candidates(found),
	}
}

// candidates lists children as the caller may see them: label (handle, class).
func candidates(cs []dayChild) string {
	const most = 10
	parts := make([]string, 0, min(len(cs), most)+1)
	for i, c := range cs {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-most))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", c.label, c.Handle, c.ClassName))
	}
	return strings.Join(parts, "; ")
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

// pickClass resolves a class given by name (folded) or id among the classes the caller may
// check children in to; an unknown one is refused with the names the caller may use.
func pickClass(ctx context.Context, q *db.Queries, w who, field, text string) (db.UsableClassesRow, error) {
	classes, err := q.UsableClasses(ctx, db.UsableClassesParams{ChurchID: w.ChurchID, UserID: w.UserID, Role: w.Role})
	if err != nil {
		return db.UsableClassesRow{}, err
	}
	names := make([]string, 0, len(classes))
	for _, cl := range classes {
		if namesClass(text, cl.ID, cl.Name) {
			return cl, nil
		}
		names = append(names, cl.Name)
	}
	return db.UsableClassesRow{}, &errs.Invalid{Field: field, Reason: fmt.Sprintf(
		"is not a class you may use; yours: %s", strings.Join(names, ", "))}
}

// namesClass reports whether a class given by a person or a model (its name, accents and case
// aside, or its id) is the class with this id and name.
func namesClass(text string, id uuid.UUID, name string) bool {
	return capability.FoldName(text) == capability.FoldName(name) || strings.EqualFold(strings.TrimSpace(text), id.String())
}
