package logic

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
)

// roomFor checks that one more child fits class on day (issue 21, rooms that fill up): at the
// firm capacity the check-in is refused with the limit named; past the soft capacity or the
// children per volunteer it goes ahead, and the returned warning says so ("" when none). The
// class and day are locked until the transaction ends (LockClassDay), so concurrent check-ins
// cannot both take the last place; the counts are the same whoever checks in (00097).
func roomFor(ctx context.Context, q *db.Queries, w who, class uuid.UUID, day capability.Date) (string, error) {
	if err := q.LockClassDay(ctx, db.LockClassDayParams{ClassID: class, Day: day.Time()}); err != nil {
		return "", err
	}
	load, err := q.ClassLoad(ctx, db.ClassLoadParams{ChurchID: w.ChurchID, ClassID: class, Day: day.Time()})
	if err != nil {
		return "", notFound(err)
	}
	if load.FirmCapacity != nil && load.Headcount >= int64(*load.FirmCapacity) {
		return "", &errs.Conflict{Reason: fmt.Sprintf(
			"%s is full: %d children are in it and its firm capacity is %d; check the child in to another class, or ask a coordinator to raise the capacity (neemias-mcp class set)",
			load.Name, load.Headcount, *load.FirmCapacity)}
	}
	after := load.Headcount + 1
	var warnings []string
	if load.SoftCapacity != nil && after > int64(*load.SoftCapacity) {
		warnings = append(warnings, fmt.Sprintf("%s now has %d children, past its soft capacity of %d", load.Name, after, *load.SoftCapacity))
	}
	if per := load.ChildrenPerVolunteer; per != nil && after > int64(*per)*load.Volunteers {
		warnings = append(warnings, fmt.Sprintf("%s now has %d children for %d volunteer(s), past %d per volunteer: call another volunteer", load.Name, after, load.Volunteers, *per))
	}
	return strings.Join(warnings, "; "), nil
}
