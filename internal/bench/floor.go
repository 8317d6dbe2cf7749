package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Floor is the lower bound a capability can cost: net/http and pgxpool running the very
// statements the generated queries run (gen/db, with the parameters internal/logic passes)
// and writing the rows as JSON. No protocol, no authentication, no validation, no redaction.
//
// It connects as the database owner and skips the caller context (set_config + SET ROLE), so
// row-level security does not apply; the queries' own WHERE clauses (church, role) select the
// same rows the server's do. With Audit, each audited call runs in one READ COMMITTED
// transaction with the audit_log INSERT of internal/audit, as internal/logic does: BEGIN,
// query, INSERT, COMMIT (the server adds the set_config round trip).
type Floor struct {
	Pool  *pgxpool.Pool
	Audit bool
	Who   store.Caller
	seq   atomic.Int64

	keysOnce sync.Once
	keys     *store.PickupKeys // the pick-up codes' HMAC keys, as internal/logic reads them
}

func (f *Floor) pickupKeys() *store.PickupKeys {
	f.keysOnce.Do(func() { f.keys = &store.PickupKeys{Pool: f.Pool} })
	return f.keys
}

// Handler serves GET /checkins/{date}, GET /roster/children/{id},
// GET /attendance/summary?from&to and POST /checkin ({"child_id","service_date"}).
func (f *Floor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /checkins/{date}", f.checkins)
	mux.HandleFunc("GET /roster/children/{id}", f.rosterChild)
	mux.HandleFunc("GET /attendance/summary", f.attendance)
	mux.HandleFunc("POST /checkin", f.checkin)
	return mux
}

// Serve listens on a free loopback port and serves until ctx ends; it returns the base URL.
func (f *Floor) Serve(ctx context.Context) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("bench: floor listen: %w", err)
	}
	hs := &http.Server{Handler: f.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = hs.Close() }()
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// tx runs fn on q (action is read after fn, which may change it): inside a transaction that also appends the audit entry when the floor
// audits and the capability is audited (entry != nil), else straight on the pool. A read
// that is not audited (attendance/summary, counts only) runs in a transaction under Audit
// too, as internal/logic runs every call in one.
func (f *Floor) tx(ctx context.Context, capID string, action *string, audited bool, fn func(q *db.Queries) ([]uuid.UUID, error)) error {
	if !f.Audit {
		_, err := fn(db.New(f.Pool))
		return err
	}
	return pgx.BeginTxFunc(ctx, f.Pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		q := db.New(tx)
		targets, err := fn(q)
		if err != nil || !audited {
			return err
		}
		return audit.Insert(ctx, q, f.Who, audit.Entry{
			Capability: capID, Action: *action, Targets: targets, Outcome: audit.Allowed,
			ClientID: "neemias-bench", CorrelationID: fmt.Sprintf("bench-%d", f.seq.Add(1)),
		})
	})
}

type floorClass struct {
	ClassName string         `json:"class_name"`
	Checkins  []floorCheckin `json:"checkins"`
}

type floorCheckin struct {
	ChildHandle  string     `json:"child_handle"`
	ChildLabel   string     `json:"child_label"`
	CheckedInAt  time.Time  `json:"checked_in_at"`
	CheckedOutAt *time.Time `json:"checked_out_at,omitempty"`
}

func (f *Floor) checkins(w http.ResponseWriter, r *http.Request) {
	day, err := time.Parse(time.DateOnly, r.PathValue("date"))
	if err != nil {
		http.Error(w, "bad date", http.StatusBadRequest)
		return
	}
	var out struct {
		Date         string       `json:"date"`
		Today        string       `json:"today"`
		TimeZone     string       `json:"time_zone"`
		Total        int          `json:"total"`
		TotalClasses int          `json:"total_classes"`
		Classes      []floorClass `json:"classes"`
	}
	out.Date = day.Format(time.DateOnly)
	out.Today, out.TimeZone = time.Now().In(churchTZ).Format(time.DateOnly), churchTZ.String() // the server caches the zone too
	err = f.tx(r.Context(), capapi.CapCheckinsByDate, ptr("read"), true, func(q *db.Queries) ([]uuid.UUID, error) {
		rows, err := q.CheckinsByDate(r.Context(), db.CheckinsByDateParams{
			ChurchID: f.Who.ChurchID, Role: f.Who.Role, UserID: f.Who.UserID, Date: day,
		})
		if err != nil {
			return nil, err
		}
		out.Classes = []floorClass{}
		targets := make([]uuid.UUID, 0, len(rows))
		for _, x := range rows {
			if n := len(out.Classes); n == 0 || out.Classes[n-1].ClassName != x.ClassName {
				out.Classes = append(out.Classes, floorClass{ClassName: x.ClassName})
			}
			cl := &out.Classes[len(out.Classes)-1]
			cl.Checkins = append(cl.Checkins, floorCheckin{
				ChildHandle: x.ChildHandle, ChildLabel: x.ChildName, CheckedInAt: x.CheckedInAt, CheckedOutAt: x.CheckedOutAt,
			})
			out.Total++
			out.TotalClasses = len(out.Classes)
			targets = append(targets, x.ChildID)
		}
		return targets, nil
	})
	reply(w, out, err)
}

type floorGuardian struct {
	GuardianID   uuid.UUID `json:"guardian_id"`
	Name         string    `json:"name"`
	Relationship string    `json:"relationship"`
	Phone        string    `json:"phone"`
}

func (f *Floor) rosterChild(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	var out struct {
		ChildID   uuid.UUID       `json:"child_id"`
		Name      string          `json:"name"`
		BirthDate string          `json:"birth_date"`
		ClassID   *uuid.UUID      `json:"class_id,omitempty"`
		ClassName *string         `json:"class_name,omitempty"`
		Guardians []floorGuardian `json:"guardians"`
	}
	err = f.tx(r.Context(), capapi.CapRosterChild, ptr("read"), true, func(q *db.Queries) ([]uuid.UUID, error) {
		rows, err := q.RosterChild(r.Context(), db.RosterChildParams{
			ChurchID: f.Who.ChurchID, Role: f.Who.Role, UserID: f.Who.UserID, ID: id,
		})
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			return nil, errNotFound
		}
		first := rows[0]
		out.ChildID, out.Name, out.BirthDate = first.ChildID, first.ChildName, first.BirthDate.Format(time.DateOnly)
		out.ClassID, out.ClassName = first.ClassID, first.ClassName
		targets := []uuid.UUID{id}
		for _, x := range rows {
			out.Guardians = append(out.Guardians, floorGuardian{x.GuardianID, x.GuardianName, x.Relationship, x.GuardianPhone})
			targets = append(targets, x.GuardianID)
		}
		return targets, nil
	})
	reply(w, out, err)
}

func (f *Floor) attendance(w http.ResponseWriter, r *http.Request) {
	from, err1 := time.Parse(time.DateOnly, r.URL.Query().Get("from"))
	to, err2 := time.Parse(time.DateOnly, r.URL.Query().Get("to"))
	if err1 != nil || err2 != nil {
		http.Error(w, "bad range", http.StatusBadRequest)
		return
	}
	type day struct {
		Date      string    `json:"date"`
		ClassID   uuid.UUID `json:"class_id"`
		ClassName string    `json:"class_name"`
		Checkins  int64     `json:"checkins"`
	}
	var out struct {
		From          string `json:"from"`
		To            string `json:"to"`
		Days          []day  `json:"days"`
		TotalCheckins int64  `json:"total_checkins"`
	}
	out.From, out.To = from.Format(time.DateOnly), to.Format(time.DateOnly)
	err := f.tx(r.Context(), capapi.CapAttendanceSummary, ptr("read"), false, func(q *db.Queries) ([]uuid.UUID, error) {
		rows, err := q.AttendanceSummary(r.Context(), db.AttendanceSummaryParams{
			ChurchID: f.Who.ChurchID, Role: f.Who.Role, UserID: f.Who.UserID, FromValue: from, ToValue: to,
		})
		if err != nil {
			return nil, err
		}
		out.Days = make([]day, 0, len(rows))
		for _, x := range rows {
			out.Days = append(out.Days, day{x.ServiceDate.Format(time.DateOnly), x.ClassID, x.ClassName, x.Checkins})
			out.TotalCheckins += x.Checkins
		}
		return nil, nil
	})
	reply(w, out, err)
}

// checkin runs the statements of internal/logic's CheckinRegister: the child, an existing
// check-in (the idempotent repeat), else the service day and the INSERT with a fresh pick-up
// code. Without Audit it still runs in a transaction: the tool is several statements.
func (f *Floor) checkin(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ChildID     uuid.UUID `json:"child_id"`
		ServiceDate string    `json:"service_date"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	day, err := time.Parse(time.DateOnly, in.ServiceDate)
	if err != nil {
		http.Error(w, "bad service_date", http.StatusBadRequest)
		return
	}
	type result struct {
		CheckinID        uuid.UUID `json:"checkin_id"`
		ChildID          uuid.UUID `json:"child_id"`
		ClassID          uuid.UUID `json:"class_id"`
		ServiceDate      string    `json:"service_date"`
		CheckedInAt      time.Time `json:"checked_in_at"`
		PickupCode       string    `json:"pickup_code,omitempty"`
		AlreadyCheckedIn bool      `json:"already_checked_in"`
	}
	var out result
	action := "checkin"
	ctx := r.Context()
	key, err := f.pickupKeys().Active(ctx)
	if err != nil {
		reply(w, out, err)
		return
	}
	body := func(q *db.Queries) ([]uuid.UUID, error) {
		child, err := q.GetChildForCheckin(ctx, db.GetChildForCheckinParams{
			ChurchID: f.Who.ChurchID, ChildID: in.ChildID, Role: f.Who.Role, UserID: f.Who.UserID,
		})
		if err != nil {
			return nil, err
		}
		prev, err := q.GetCheckinByChildDate(ctx, db.GetCheckinByChildDateParams{ChurchID: f.Who.ChurchID, ChildID: child.ID, ServiceDate: day})
		if err == nil {
			action = "checkin.repeat"
			out = result{prev.ID, prev.ChildID, prev.ClassID, in.ServiceDate, prev.CheckedInAt, "", true}
			return []uuid.UUID{in.ChildID, prev.ID}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
		if child.ClassID == nil {
			return nil, errors.New("the child is not placed in a class")
		}
		code, salt, hash, err := store.NewPickupCode(key)
		if err != nil {
			return nil, err
		}
		if err := q.EnsureServiceDay(ctx, db.EnsureServiceDayParams{ChurchID: f.Who.ChurchID, ServiceDate: day}); err != nil {
			return nil, err
		}
		row, err := q.InsertCheckin(ctx, db.InsertCheckinParams{
			ChurchID: f.Who.ChurchID, ChildID: child.ID, ClassID: *child.ClassID, ServiceDate: day,
			CheckedInBy: f.Who.UserID, PickupCodeSalt: salt, PickupCodeHash: hash, PickupKeyID: &key.ID,
		})
		if err != nil {
			return nil, err // a concurrent duplicate: the bench's sequence never sends one
		}
		out = result{row.ID, row.ChildID, row.ClassID, in.ServiceDate, row.CheckedInAt, code, false}
		return []uuid.UUID{in.ChildID, row.ID}, nil
	}
	if f.Audit {
		err = f.tx(ctx, capapi.CapCheckinRegister, &action, true, body)
	} else {
		err = pgx.BeginTxFunc(ctx, f.Pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
			_, err := body(db.New(tx))
			return err
		})
	}
	reply(w, out, err)
}

var errNotFound = errors.New("not found")

func ptr[T any](v T) *T { return &v }

func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, errNotFound) || errors.Is(err, pgx.ErrNoRows) {
			code = http.StatusNotFound
		}
		http.Error(w, err.Error(), code)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
