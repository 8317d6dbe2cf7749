package logic

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

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
}

// The build breaks here when the spec gains a capability that has no method yet.
var _ capapi.Handler = (*Service)(nil)

// Option configures a [Service].
type Option func(*Service)

// WithClock sets the clock (tests pin "today" with it).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.Now = now } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.Log = l } }

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

// churchTZ is the time zone of the churches served: what "today" means for a service day.
var churchTZ = loadChurchTZ()

func loadChurchTZ() *time.Location {
	if loc, err := time.LoadLocation("America/Sao_Paulo"); err == nil {
		return loc
	}
	// Without the tz database: Brazil has kept UTC-3 all year since 2019.
	return time.FixedZone("-03", -3*60*60)
}

// today is the current day in the church's time zone.
func (s *Service) today() capability.Date {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return capability.DateOf(now().In(churchTZ))
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
