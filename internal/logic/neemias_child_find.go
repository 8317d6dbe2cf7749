package logic

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// capgen:capability neemias_child_find

// maxFound is the most children one search returns: enough to pick the right one, too few to
// walk the roster with.
const maxFound = 20

// ChildFind implements tool "neemias_child_find" (scope children:read).
//
// The children the caller may see (staff: the church; a volunteer: their classes; a guardian:
// their own) with a name word starting with each word of the text, case and accents aside
// ("Ana" is not "Santana"); at most 20, exact first names first, then by name, with ids, names
// and class only, and the total of matches so the answer says how many more there are. Every
// search is audited with the ids it returned; searches are rate limited per user (FindLimit,
// in PostgreSQL within the search's transaction: one budget across the user's clients and the
// replicas) on top of the server's request limit.
func (s *Service) ChildFind(ctx context.Context, in *capapi.ChildFindInput) (*capapi.ChildFindOutput, error) {
	var out *capapi.ChildFindOutput
	c := newCall(capapi.CapChildFind, in)
	err := s.run(ctx, c, func(ctx context.Context, q *db.Queries, w who, st *txState) error {
		text := strings.TrimSpace(in.Name)
		if utf8.RuneCountInString(text) < 3 {
			return &errs.Invalid{Field: "name", Reason: "must have at least 3 letters besides surrounding spaces"}
		}
		d, err := takeCallerLimit(ctx, q, bucketFind, FindLimit)
		if err != nil {
			return err
		}
		if !d.Allowed {
			return &errs.Conflict{Reason: fmt.Sprintf("too many searches; at most %d in a row, then one every %s: retry after %d s",
				FindLimit.Burst, FindLimit.Interval().Round(time.Second), d.RetryAfterSeconds())}
		}
		rows, err := q.FindChildren(ctx, db.FindChildrenParams{
			ChurchID: w.ChurchID, Role: w.Role, UserID: w.UserID, Text: text, MaxResults: maxFound,
		})
		if err != nil {
			return err
		}
		out = &capapi.ChildFindOutput{Children: make([]capapi.ChildFindOutputChildrenItem, 0, len(rows))}
		if len(rows) > 0 {
			out.Total = rows[0].Total
			out.More = rows[0].Total - int64(len(rows))
		}
		for _, r := range rows {
			out.Children = append(out.Children, capapi.ChildFindOutputChildrenItem{
				ChildID: r.ID, Name: r.Name, ClassID: r.ClassID, ClassName: r.ClassName,
			})
			st.add(r.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
