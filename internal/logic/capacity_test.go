package logic_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/store"
)

// TestRoomsThatFillUp (issue 21): a class's firm capacity refuses the check-in that would pass
// it, naming the limit, and writes nothing; its soft capacity and its children per volunteer
// let the check-in through with a warning in the output and the text; the class list shows
// the limits. A guardian checking their own child in is counted against the same room (the
// headcount does not depend on what the caller may see).
func TestRoomsThatFillUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.a
	class := e.addClass(a, "Sala Zzcheia", 2, true)
	kids := make([]string, 4)
	for i := range kids {
		id, _ := e.addChild(a, fmt.Sprintf("Zzsala Criança %c", 'A'+i), class, "")
		kids[i] = id.String()
	}
	// The RESPONSAVEL is the guardian of the last one.
	e.exec(`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES ($1, $2, $3, 'mother')`, a.g1, kids[3], a.id)
	// Soft 1, firm 3, one volunteer for at most 2 children.
	e.exec(`UPDATE classes SET soft_capacity = 1, firm_capacity = 3, children_per_volunteer = 2 WHERE id = $1`, class)
	vol := a.as(store.RoleVoluntario)

	checkin := func(kid string) (*capapi.CheckinRegisterOutput, error) {
		t.Helper()
		out, err := e.invoke(vol, capapi.CapCheckinRegister, map[string]any{"child_id": kid})
		if err != nil {
			return nil, err
		}
		return out.(*capapi.CheckinRegisterOutput), nil
	}
	first, err := checkin(kids[0])
	if err != nil || first.CapacityWarning != nil {
		t.Fatalf("first child: %v, warning %v; want no warning", err, first)
	}
	second, err := checkin(kids[1])
	if err != nil || second.CapacityWarning == nil ||
		!strings.Contains(*second.CapacityWarning, "past its soft capacity of 1") || strings.Contains(*second.CapacityWarning, "per volunteer") {
		t.Fatalf("second child: %v, %+v; want the soft-capacity warning alone", err, second)
	}
	third, err := checkin(kids[2])
	if err != nil || third.CapacityWarning == nil || !strings.Contains(*third.CapacityWarning, "3 children for 1 volunteer(s), past 2 per volunteer") {
		t.Fatalf("third child: %v, %+v; want the ratio warning too", err, third)
	}
	// The fourth, checked in by their guardian, who sees none of the three: the room is full.
	_, err = e.invoke(a.as(store.RoleResponsavel), capapi.CapCheckinRegister, map[string]any{"child_id": kids[3]})
	var full *errs.Conflict
	if !errors.As(err, &full) || !strings.Contains(full.Reason, "Sala Zzcheia is full: 3 children are in it and its firm capacity is 3") {
		t.Fatalf("the fourth child: %v; want the firm-capacity refusal naming the limit", err)
	}
	if n := e.count(`SELECT count(*) FROM checkins WHERE child_id = $1`, kids[3]); n != 0 {
		t.Errorf("a refused check-in wrote %d rows", n)
	}
	if got := e.lastAudit(); got.Action != "checkin.conflict" {
		t.Errorf("audit of the refusal: %+v", got)
	}
	// The class list: the limits against the headcount.
	list := mustInvoke[capapi.ClassListOutput](e, vol, capapi.CapClassList, map[string]any{"class": "sala zzcheia"})
	if len(list.Classes) != 1 {
		t.Fatalf("class list: %+v", list.Classes)
	}
	cl := list.Classes[0]
	if cl.Headcount != 3 || cl.SoftCapacity == nil || *cl.SoftCapacity != 1 || cl.FirmCapacity == nil || *cl.FirmCapacity != 3 ||
		cl.ChildrenPerVolunteer == nil || *cl.ChildrenPerVolunteer != 2 || cl.Volunteers != 1 {
		t.Errorf("class list entry: %s", jsonOf(t, cl))
	}
}
