package onboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
)

func intp(v int) *int { return &v }

// TestClassLimits (issue 21): class add and class set take a soft capacity, a firm capacity
// and children per volunteer; set changes only what it is given and clears on request; a
// zero, a soft capacity above the firm one and a capacity below the children in the class now
// are refused naming the flag, and leave the class as it was.
func TestClassLimits(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	if _, err := onboard.CreateChurch(ctx, st, onboard.NewChurch{Name: "Central", Slug: "central"}); err != nil {
		t.Fatal(err)
	}
	cl, err := onboard.AddClass(ctx, st, "central", onboard.NewClass{Name: "Maternal", MinAge: 3, MaxAge: 4,
		Limits: onboard.ClassLimits{SoftCapacity: intp(10), FirmCapacity: intp(12)}})
	if err != nil || *cl.SoftCapacity != 10 || *cl.FirmCapacity != 12 || cl.PerVolunteer != nil {
		t.Fatalf("add: %+v, %v", cl, err)
	}
	if _, err := onboard.AddClass(ctx, st, "central", onboard.NewClass{Name: "Zero", MinAge: 3, MaxAge: 4,
		Limits: onboard.ClassLimits{PerVolunteer: intp(0)}}); err == nil || !strings.Contains(err.Error(), "--per-volunteer 0") {
		t.Errorf("a ratio of zero: %v", err)
	}
	cl, err = onboard.SetClassLimits(ctx, st, "central", "Maternal", onboard.ClassLimits{PerVolunteer: intp(6), Clear: []string{"soft-capacity"}})
	if err != nil || cl.SoftCapacity != nil || *cl.FirmCapacity != 12 || *cl.PerVolunteer != 6 {
		t.Fatalf("set: %+v, %v", cl, err)
	}

	// Two children in Maternal today.
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			WITH u AS (INSERT INTO users (church_id, email, display_name, role) SELECT id, 'v@c.example', 'V', 'VOLUNTARIO' FROM churches WHERE slug = 'central' RETURNING id, church_id),
			     k AS (INSERT INTO children (church_id, name, birth_date, class_id) SELECT u.church_id, n, current_date - 1200, $1 FROM u, unnest(ARRAY['Ana Um', 'Bia Dois']) n RETURNING id, church_id),
			     d AS (INSERT INTO service_days (church_id, service_date) SELECT DISTINCT church_id, (now() AT TIME ZONE 'America/Sao_Paulo')::date FROM k RETURNING church_id, service_date)
			INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash)
			SELECT k.church_id, k.id, $1, d.service_date, u.id, '\x00112233445566778899aabbccddeeff'::bytea, sha256('x')
			FROM k, d, u`, cl.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limits onboard.ClassLimits
		want   string
	}{
		{onboard.ClassLimits{FirmCapacity: intp(1)}, "--firm-capacity 1 is below the 2 children in class \"Maternal\" now"},
		{onboard.ClassLimits{SoftCapacity: intp(1)}, "--soft-capacity 1 is below the 2 children"},
		{onboard.ClassLimits{SoftCapacity: intp(13)}, "--soft-capacity 13 is above --firm-capacity 12"},
		{onboard.ClassLimits{FirmCapacity: intp(0)}, "--firm-capacity 0: give 1 to 1000 children"},
		{onboard.ClassLimits{Clear: []string{"capacity"}}, "--clear capacity: give soft-capacity, firm-capacity or per-volunteer"},
	} {
		if _, err := onboard.SetClassLimits(ctx, st, "central", "Maternal", tc.limits); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("set %+v: %v; want %q", tc.limits, err, tc.want)
		}
	}
	cs, err := onboard.ListClasses(ctx, st, "central")
	if err != nil || len(cs) != 1 || cs[0].SoftCapacity != nil || *cs[0].FirmCapacity != 12 || *cs[0].PerVolunteer != 6 {
		t.Errorf("after the refusals the class is %+v (%v); want firm 12, 6 per volunteer", cs, err)
	}
}
