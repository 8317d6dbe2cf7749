package logic

import (
	"cmp"
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
)

// capgen:capability roster_children

// RosterChildren implements resource "neemias://roster/children" (scope roster:read).
//
// Aggregate counts only: per class (every class the caller may see, empty ones with 0) and per
// age in completed years. Volunteers see their assigned classes only (query row filter and
// row-level security). No child-level data, so no audit entry.
func (s *Service) RosterChildren(ctx context.Context, in *capapi.RosterChildrenInput) (*capapi.RosterChildrenOutput, error) {
	out := &capapi.RosterChildrenOutput{}
	c := newCall(capapi.CapRosterChildren, in)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, _ *txState) error {
		*out = capapi.RosterChildrenOutput{}
		classes, err := q.ListVisibleClasses(ctx, db.ListVisibleClassesParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID,
		})
		if err != nil {
			return err
		}
		rows, err := q.RosterChildren(ctx, db.RosterChildrenParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID,
		})
		if err != nil {
			return err
		}
		*out = rosterCounts(classes, rows)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rosterCounts folds the (class, age) counts into per-class and per-age totals. Every visible
// class is listed, with 0 when empty; a class that has children but is no longer listed
// (archived) is kept, so the totals add up.
func rosterCounts(classes []db.ListVisibleClassesRow, rows []db.RosterChildrenRow) capapi.RosterChildrenOutput {
	out := capapi.RosterChildrenOutput{
		Classes:   make([]capapi.RosterChildrenOutputClassesItem, 0, len(classes)),
		AgeGroups: []capapi.RosterChildrenOutputAgeGroupsItem{},
	}
	byClass := map[uuid.UUID]int{}
	for _, cl := range classes {
		byClass[cl.ID] = len(out.Classes)
		out.Classes = append(out.Classes, capapi.RosterChildrenOutputClassesItem{
			ClassID: cl.ID, ClassName: cl.Name, MinAge: int64(cl.MinAge), MaxAge: int64(cl.MaxAge),
		})
	}
	byAge := map[int64]int{}
	for _, r := range rows {
		i, ok := byClass[r.ClassID]
		if !ok {
			i = len(out.Classes)
			byClass[r.ClassID] = i
			out.Classes = append(out.Classes, capapi.RosterChildrenOutputClassesItem{
				ClassID: r.ClassID, ClassName: r.ClassName, MinAge: int64(r.MinAge), MaxAge: int64(r.MaxAge),
			})
		}
		out.Classes[i].Children += r.Children
		age := int64(r.AgeYears)
		j, ok := byAge[age]
		if !ok {
			j = len(out.AgeGroups)
			byAge[age] = j
			out.AgeGroups = append(out.AgeGroups, capapi.RosterChildrenOutputAgeGroupsItem{Age: age})
		}
		out.AgeGroups[j].Children += r.Children
		out.TotalChildren += r.Children
	}
	slices.SortStableFunc(out.Classes, func(a, b capapi.RosterChildrenOutputClassesItem) int {
		return cmp.Or(cmp.Compare(a.MinAge, b.MinAge), cmp.Compare(a.ClassName, b.ClassName))
	})
	slices.SortFunc(out.AgeGroups, func(a, b capapi.RosterChildrenOutputAgeGroupsItem) int {
		return cmp.Compare(a.Age, b.Age)
	})
	return out
}
