package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/internal/seed"
)

// churchTZ is the churches' time zone: "today" of a check-in, as internal/logic reads it.
var churchTZ = func() *time.Location {
	if loc, err := time.LoadLocation("America/Sao_Paulo"); err == nil {
		return loc
	}
	return time.FixedZone("-03", -3*60*60) // UTC-3 all year since 2019
}()

// Fixture is the data every target is asked for, found in the seeded demo church.
type Fixture struct {
	ChurchID uuid.UUID `json:"church_id"`
	UserID   uuid.UUID `json:"user_id"` // the demo ADMIN, whose token the server targets use
	Role     string    `json:"role"`
	// BusiestDay is the service day with the most check-ins; BusiestCount how many.
	BusiestDay   time.Time `json:"busiest_day"`
	BusiestCount int       `json:"busiest_count"`
	// Child is the child of the one-row read (the first by id with a guardian).
	Child uuid.UUID `json:"child"`
	// MonthFrom and MonthTo bound attendance/summary: the last full calendar month.
	MonthFrom time.Time `json:"month_from"`
	MonthTo   time.Time `json:"month_to"`
	// CheckinChildren × CheckinDays are the fresh (child, day) pairs the check-in tool cycles
	// over: active children placed in a class, and days up to today without a service (so no
	// check-in exists yet). [ResetCheckins] removes what a run added.
	CheckinChildren []uuid.UUID `json:"-"`
	CheckinDays     []time.Time `json:"checkin_days"`
}

// checkinDaysWanted bounds the fresh days; 300 children × 40 days = 12,000 fresh check-ins,
// more than a default run of one target makes.
const checkinDaysWanted = 40

// LoadFixture finds the fixture of the demo church in d.
func LoadFixture(ctx context.Context, d *Database) (*Fixture, error) {
	f := &Fixture{ChurchID: seed.DemoChurchID, UserID: seed.DemoAdminID, Role: "ADMIN"}
	err := d.Pool.QueryRow(ctx, `SELECT service_date, count(*) FROM checkins WHERE church_id = $1
		GROUP BY service_date ORDER BY count(*) DESC, service_date DESC LIMIT 1`, f.ChurchID).
		Scan(&f.BusiestDay, &f.BusiestCount)
	if err != nil {
		return nil, fmt.Errorf("bench: busiest day: %w", err)
	}
	err = d.Pool.QueryRow(ctx, `SELECT c.id FROM children c WHERE c.church_id = $1 AND c.archived_at IS NULL
		AND EXISTS (SELECT 1 FROM guardian_children gc WHERE gc.child_id = c.id) ORDER BY c.id LIMIT 1`, f.ChurchID).
		Scan(&f.Child)
	if err != nil {
		return nil, fmt.Errorf("bench: child of the one-row read: %w", err)
	}
	today := Today()
	first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	f.MonthFrom, f.MonthTo = first.AddDate(0, -1, 0), first.AddDate(0, 0, -1)

	rows, err := d.Pool.Query(ctx, `SELECT id FROM children WHERE church_id = $1 AND archived_at IS NULL
		AND class_id IS NOT NULL ORDER BY id`, f.ChurchID)
	if err != nil {
		return nil, fmt.Errorf("bench: check-in children: %w", err)
	}
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("bench: check-in children: %w", err)
		}
		f.CheckinChildren = append(f.CheckinChildren, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("bench: check-in children: %w", err)
	}
	if len(f.CheckinChildren) == 0 {
		return nil, fmt.Errorf("bench: the demo church has no child placed in a class")
	}
	taken := map[time.Time]bool{}
	rows, err = d.Pool.Query(ctx, `SELECT service_date FROM service_days WHERE church_id = $1`, f.ChurchID)
	if err != nil {
		return nil, fmt.Errorf("bench: service days: %w", err)
	}
	for rows.Next() {
		var t time.Time
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, fmt.Errorf("bench: service days: %w", err)
		}
		taken[t.UTC()] = true
	}
	rows.Close()
	for day := today; len(f.CheckinDays) < checkinDaysWanted; day = day.AddDate(0, 0, -1) {
		if !taken[day] {
			f.CheckinDays = append(f.CheckinDays, day)
		}
	}
	return f, nil
}

// Today is today's date in the churches' time zone, as a UTC midnight (how pgx scans a date).
func Today() time.Time {
	n := time.Now().In(churchTZ)
	return time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, time.UTC)
}

// CheckinPair is the (child, day) of check-in number seq: children first, then days, so the
// first len(children) × len(days) requests are all fresh check-ins; after that the cycle
// starts again and every request takes the idempotent repeat path.
func (f *Fixture) CheckinPair(seq int) (uuid.UUID, time.Time) {
	n := len(f.CheckinChildren)
	i := seq % (n * len(f.CheckinDays))
	return f.CheckinChildren[i%n], f.CheckinDays[i/n]
}

// FreshCheckins is how many check-ins a run can make before the cycle repeats.
func (f *Fixture) FreshCheckins() int { return len(f.CheckinChildren) * len(f.CheckinDays) }

// ResetCheckins deletes the check-ins and service days of the fixture's check-in days, which
// held none before the bench: each target's check-in run starts from the same state, and the
// reads are measured on the seeded data. (Audit entries stay: the log is append-only.)
//
// Then it VACUUMs both tables: every target inserts the same (child, day) pairs, and with
// autovacuum off (as on this machine) each key would collect one dead index entry per run, so
// later targets would pay for earlier ones' check-ins.
func ResetCheckins(ctx context.Context, d *Database, f *Fixture) error {
	for _, q := range []string{
		`DELETE FROM checkins WHERE church_id = $1 AND service_date = ANY($2)`,
		`DELETE FROM service_days WHERE church_id = $1 AND service_date = ANY($2)`,
	} {
		if _, err := d.Pool.Exec(ctx, q, f.ChurchID, f.CheckinDays); err != nil {
			return fmt.Errorf("bench: reset check-ins: %w", err)
		}
	}
	if _, err := d.Pool.Exec(ctx, `VACUUM checkins, service_days`); err != nil {
		return fmt.Errorf("bench: vacuum after the check-ins: %w", err)
	}
	return nil
}
