package logic_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestClassListPages: a long class list comes in pages of whole classes (labels stay those of
// the whole class), each saying how many classes and children the whole list has and where
// the next page starts; the audit names only the children a page showed; an offset past the
// end is refused naming the last one.
//
//	ADMIN's list (by age): Pequenos (k1, k3, Ana Costa), Maternal (Ana Silva, Ana Souza,
//	Bruno Lima), Grandes (k2): 3 classes, 7 children.
func TestClassListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	newSundayClass(e)
	a := e.a
	admin := a.as(store.RoleAdmin)
	day := map[string]any{}
	page := func(args map[string]any) *capapi.ClassListOutput {
		t.Helper()
		merged := map[string]any{}
		for k, v := range day {
			merged[k] = v
		}
		for k, v := range args {
			merged[k] = v
		}
		return mustInvoke[capapi.ClassListOutput](e, admin, capapi.CapClassList, merged)
	}
	next := func(o *capapi.ClassListOutput) int64 {
		if o.NextOffset == nil {
			return -1
		}
		return *o.NextOffset
	}

	all := page(nil) // the default page (120 children) holds them all
	if got := classNames(all); !slices.Equal(got, []string{"Pequenos", "Maternal", "Grandes"}) || all.TotalClasses != 3 || all.TotalChildren != 7 || all.NextOffset != nil {
		t.Fatalf("whole list: classes %v, totals %d/%d, next %d", got, all.TotalClasses, all.TotalChildren, next(all))
	}

	for _, tc := range []struct {
		name        string
		limit       int64
		offset      any
		wantClasses []string
		wantNext    int64
	}{
		{"one class bigger than the limit still comes whole", 1, nil, []string{"Pequenos"}, 1},
		{"whole classes while they fit", 6, nil, []string{"Pequenos", "Maternal"}, 2},
		{"a class that would pass the limit waits", 5, nil, []string{"Pequenos"}, 1},
		{"from an offset", 3, 1, []string{"Maternal"}, 2},
		{"the last page has no next", 3, 2, []string{"Grandes"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"limit": tc.limit}
			if tc.offset != nil {
				args["offset"] = tc.offset
			}
			got := page(args)
			if d := cmp.Diff(tc.wantClasses, classNames(got)); d != "" || next(got) != tc.wantNext || got.TotalClasses != 3 || got.TotalChildren != 7 {
				t.Errorf("classes (-want +got) %s; next %d (want %d); totals %d/%d (want 3/7)", d, next(got), tc.wantNext, got.TotalClasses, got.TotalChildren)
			}
			// The audit names exactly the children the page listed.
			var listed []uuid.UUID
			for _, cl := range got.Classes {
				for _, k := range cl.Children {
					listed = append(listed, e.childID(k.Handle))
				}
			}
			audited := e.lastAudit().Targets
			slices.SortFunc(listed, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
			slices.SortFunc(audited, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
			if d := cmp.Diff(listed, audited); d != "" || len(listed) == 0 {
				t.Errorf("audited children (-listed +audited)\n%s", d)
			}
		})
	}

	// Labels on a page are those of the whole class: paging never shortens a namesake's label.
	vol := a.as(store.RoleVoluntario)
	whole := mustInvoke[capapi.ClassListOutput](e, vol, capapi.CapClassList, map[string]any{})
	paged := mustInvoke[capapi.ClassListOutput](e, vol, capapi.CapClassList, map[string]any{"limit": 1, "offset": 1})
	if len(paged.Classes) != 1 {
		t.Fatalf("volunteer's second page: %v", classNames(paged))
	}
	if d := cmp.Diff(labelsOf(classOf(t, whole, paged.Classes[0].ClassName)), labelsOf(paged.Classes[0])); d != "" {
		t.Errorf("labels of %s on a page differ from the whole list (-whole +page)\n%s", paged.Classes[0].ClassName, d)
	}

	_, err := e.invoke(admin, capapi.CapClassList, map[string]any{"offset": 3})
	var inv *errs.Invalid
	if !errors.As(err, &inv) || inv.Field != "offset" || !strings.Contains(inv.Reason, "has 3 (offsets 0 to 2)") {
		t.Errorf("offset past the end: %v", err)
	}
	for _, bad := range []map[string]any{{"limit": 0}, {"limit": 2001}, {"offset": -1}} {
		if _, err := e.invoke(admin, capapi.CapClassList, bad); !errors.As(err, &inv) {
			t.Errorf("%v: err = %v, want a field error", bad, err)
		}
	}
}

// childID is the id of the child of handle.
func (e *env) childID(handle string) uuid.UUID {
	e.t.Helper()
	var id uuid.UUID
	if err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM children WHERE handle = $1`, handle).Scan(&id)
	}); err != nil {
		e.t.Fatalf("child of handle %s: %v", handle, err)
	}
	return id
}

// TestCheckinsByDatePages: a day's check-ins come in pages of whole classes by class name, each
// with the day's totals and the next offset; the audit names the page's children only.
//
//	the fixture's day: Grandes (k2), Pequenos (k1, k3)
func TestCheckinsByDatePages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	admin := a.as(store.RoleAdmin)
	for _, tc := range []struct {
		name      string
		args      map[string]any
		wantClass []string
		wantKids  []uuid.UUID
		wantNext  int64
	}{
		{"whole day", map[string]any{}, []string{"Grandes", "Pequenos"}, []uuid.UUID{a.k2, a.k1, a.k3}, -1},
		{"first page", map[string]any{"limit": 1}, []string{"Grandes"}, []uuid.UUID{a.k2}, 1},
		{"a class bigger than the limit comes whole", map[string]any{"limit": 1, "offset": 1}, []string{"Pequenos"}, []uuid.UUID{a.k1, a.k3}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["date"] = a.day.String()
			got := mustInvoke[capapi.CheckinsByDateOutput](e, admin, capapi.CapCheckinsByDate, tc.args)
			var classes []string
			for _, cl := range got.Classes {
				classes = append(classes, cl.ClassName)
			}
			next := int64(-1)
			if got.NextOffset != nil {
				next = *got.NextOffset
			}
			if d := cmp.Diff(tc.wantClass, classes); d != "" || next != tc.wantNext || got.Total != 3 || got.TotalClasses != 2 {
				t.Errorf("classes (-want +got) %s; next %d (want %d); totals %d/%d (want 3/2)", d, next, tc.wantNext, got.Total, got.TotalClasses)
			}
			audited := e.lastAudit().Targets
			if d := cmp.Diff(tc.wantKids, audited); d != "" {
				t.Errorf("audited children (-want +got)\n%s", d)
			}
		})
	}
	_, err := e.invoke(admin, capapi.CapCheckinsByDate, map[string]any{"date": a.day.String(), "offset": 2})
	var inv *errs.Invalid
	if !errors.As(err, &inv) || inv.Field != "offset" || !strings.Contains(inv.Reason, "has 2 (offsets 0 to 1)") {
		t.Errorf("offset past the end: %v", err)
	}
}
