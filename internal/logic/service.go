package logic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // church time zones resolve on machines without a tz database

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Service implements the generated Handler over the store. Build it with [New]; it is safe for
// concurrent use.
type Service struct {
	// Store runs every data access in a caller-context transaction.
	Store *store.Store
	// Now is the clock; "today" is its day in the church's time zone (America/Sao_Paulo).
	Now func() time.Time
	// Log receives one debug line per call and warnings about audit writes that failed. Inputs
	// are logged through their redacting LogValue; nothing personal reaches it.
	Log *slog.Logger
	// CorrelationID, when set, returns the request's correlation id for the audit log.
	CorrelationID func(context.Context) string
	// CheckinWindowDays is how many days back a check-in may be registered (zero:
	// DefaultCheckinWindowDays).
	CheckinWindowDays int
	// PeopleChanged, when set, is called with the church after a committed write that added
	// a child or guardian (an enrollment): the server drops the church's cached known
	// personal values (pii.Loader.Invalidate) so the new names are caught at once.
	PeopleChanged func(church uuid.UUID)

	zones sync.Map // church id → zone

	keysOnce sync.Once
	keys     *store.PickupKeys // pickupKeys
}

// The build breaks here when the spec gains a capability that has no method yet.
var _ capapi.Handler = (*Service)(nil)

// Option configures a [Service].
type Option func(*Service)

// WithClock sets the clock (tests pin "today" with it).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.Now = now } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.Log = l } }

// WithCheckinWindow sets how many days back a check-in may be registered.
func WithCheckinWindow(days int) Option { return func(s *Service) { s.CheckinWindowDays = days } }

// WithPeopleChanged sets the hook called with the church after a committed write that added
// a child or guardian.
func WithPeopleChanged(f func(church uuid.UUID)) Option {
	return func(s *Service) { s.PeopleChanged = f }
}

// WithCorrelationID sets how the request's correlation id is read from its context, for the
// audit log.
func WithCorrelationID(f func(context.Context) string) Option {
	return func(s *Service) { s.CorrelationID = f }
}

// New returns a Service over st: real clock, slog.Default, no correlation ids unless options
// say otherwise.
func New(st *store.Store, opts ...Option) *Service {
	s := &Service{Store: st, Now: time.Now, Log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// DefaultCheckinWindowDays is how far back a check-in may be registered by default: a
// forgotten Sunday can be recorded the next weeks, a typo in the year cannot.
const DefaultCheckinWindowDays = 31

// zoneTTL is how long a church's time zone is kept before it is read again.
const zoneTTL = 5 * time.Minute

type zone struct {
	loc     *time.Location
	fetched time.Time
}

// churchToday is the current day in the church's time zone (churches.time_zone, an IANA name;
// Brazil alone has four): what "today" means for a service day, whatever the server's zone.
// The zone is read once per church and kept for zoneTTL.
func (s *Service) churchToday(ctx context.Context, q *db.Queries, churchID uuid.UUID) (capability.Date, error) {
	today, _, err := s.churchClock(ctx, q, churchID)
	return today, err
}

// churchClock is churchToday with the zone's IANA name, for answers that state both.
func (s *Service) churchClock(ctx context.Context, q *db.Queries, churchID uuid.UUID) (capability.Date, string, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	t := now()
	if z, ok := s.zones.Load(churchID); ok && t.Sub(z.(zone).fetched) < zoneTTL {
		loc := z.(zone).loc
		return capability.DateOf(t.In(loc)), loc.String(), nil
	}
	ch, err := q.GetChurch(ctx, churchID)
	if err != nil {
		return capability.Date{}, "", fmt.Errorf("reading the church's time zone: %w", notFound(err))
	}
	loc, err := time.LoadLocation(ch.TimeZone)
	if err != nil {
		return capability.Date{}, "", fmt.Errorf("the church's time zone %q: %w", ch.TimeZone, err)
	}
	s.zones.Store(churchID, zone{loc: loc, fetched: t})
	return capability.DateOf(t.In(loc)), loc.String(), nil
}

// checkinWindow is how many days back a check-in may be registered.
func (s *Service) checkinWindow() int {
	if s.CheckinWindowDays > 0 {
		return s.CheckinWindowDays
	}
	return DefaultCheckinWindowDays
}

func (s *Service) logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// maxCompletions bounds a completion answer (MCP allows at most 100 values).
const maxCompletions = 100

// Complete answers completion/complete for the completable inputs of the spec: class_id of
// attendance_summary, completed with the ids of the classes the caller may see (a volunteer
// only their own) that start with prefix. Anything else completes to nothing.
func (s *Service) Complete(ctx context.Context, capabilityID, variable, prefix string) ([]string, error) {
	if capabilityID != capapi.CapAttendanceSummary || variable != "class_id" {
		return []string{}, nil
	}
	p, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	if strings.Trim(prefix, "0123456789abcdef-") != "" || len(prefix) > 36 {
		return []string{}, nil // no uuid starts like that; LIKE wildcards never reach SQL
	}
	if s.Store == nil {
		return nil, errNoStore
	}
	out := []string{}
	err = s.Store.InTx(ctx, p.caller(), func(ctx context.Context, tx pgx.Tx) error {
		ids, err := db.New(tx).CompleteClassIDs(ctx, db.CompleteClassIDsParams{
			ChurchID: p.ChurchID, Prefix: prefix, Role: p.Role, UserID: p.UserID, MaxResults: maxCompletions,
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			out = append(out, id.String())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var errNoStore = errors.New("logic: service has no store")
