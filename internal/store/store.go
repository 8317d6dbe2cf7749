package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/principal"
)

// AppRole is the PostgreSQL role every request runs as (SET LOCAL ROLE). Migration 00001 creates
// it: NOLOGIN, not a superuser, owner of nothing, subject to row-level security.
const AppRole = "neemias_app"

// The roles of a church's users, as stored in users.role and read by the policies. The spec
// declares them (roles:); [Roles] is its generated list, and TestRolesAreTheSpecs pins these
// names and the CHECK constraints of the role columns to it.
const (
	RoleAdmin       = "ADMIN"
	RoleCadastro    = "CADASTRO"
	RoleVoluntario  = "VOLUNTARIO"
	RoleResponsavel = "RESPONSAVEL"
)

// Roles lists every role of the spec, in spec order (most privileged first).
func Roles() []string { return scopes.Roles() }

// ValidRole reports whether r is one of [Roles].
func ValidRole(r string) bool { return scopes.IsRole(r) }

// Caller is who a transaction acts for: row-level security shows and accepts only the rows
// this church, user and role may reach. The zero Caller is [Anonymous].
type Caller struct {
	ChurchID uuid.UUID
	UserID   uuid.UUID
	Role     string
	// Scopes are the caller's effective scopes (the token's, within the role's): the generated
	// resource queries require their capability's scope through rf_has_scope (migration
	// 00090), which reads them from the transaction's settings. No scopes: no resource rows.
	Scopes capability.ScopeSet
}

// CallerFor returns the caller of a verified principal, with its effective scopes.
func CallerFor(p principal.Principal) Caller {
	return Caller{ChurchID: p.ChurchID, UserID: p.UserID, Role: p.Role, Scopes: p.Scopes}
}

// Anonymous is the caller of a request that has no verified user yet (login, an audit entry
// for a refused token): it sees no tenant row at all, but may call app_login_candidates and
// append audit entries without church or user.
var Anonymous = Caller{}

// IsAnonymous reports whether c is [Anonymous].
func (c Caller) IsAnonymous() bool {
	return c.ChurchID == uuid.Nil && c.UserID == uuid.Nil && c.Role == "" && len(c.Scopes.List()) == 0
}

// Validate reports whether c is [Anonymous] or a complete caller: church, user and a known role.
func (c Caller) Validate() error {
	if c.IsAnonymous() {
		return nil
	}
	switch {
	case c.ChurchID == uuid.Nil:
		return errors.New("store: caller has no church")
	case c.UserID == uuid.Nil:
		return errors.New("store: caller has no user")
	case !ValidRole(c.Role):
		return fmt.Errorf("store: caller has unknown role %q", c.Role)
	}
	for _, sc := range c.Scopes.List() {
		if _, ok := scopes.Describe(sc); !ok {
			return fmt.Errorf("store: caller has unknown scope %q", sc)
		}
	}
	return nil
}

// Store is the connection pool plus the transaction discipline of the data layer. It is safe
// for concurrent use.
type Store struct {
	pool *pgxpool.Pool
}

// New connects to the database at url (a postgres:// URL or a libpq key=value string) and
// checks the connection. The role it connects as must be allowed to SET ROLE neemias_app: the
// schema owner (a member of it, see migration 00001) or a superuser in development.
func New(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error can quote the URL, password included: do not wrap it.
		return nil, errors.New("store: invalid database URL")
	}
	return Open(ctx, cfg)
}

// Open applies the store's connection settings to cfg ([ConfigurePool]), opens the pool and
// checks the connection. Every pool the server runs requests on must come from here (or New):
// a pool opened without ConfigurePool encodes and scans every uuid through pgx's text
// fallback, a third of the CPU of a busiest-day read (the audit row's 212 target ids).
func Open(ctx context.Context, cfg *pgxpool.Config) (*Store, error) {
	ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	return &Store{pool: pool}, nil
}

// UUIDCodecRegistered reports whether tm (a connection's type map) has the store's uuid codec
// ([ConfigurePool] ran on it): for tests of the pools a command opens.
func UUIDCodecRegistered(tm *pgtype.Map) bool {
	t, ok := tm.TypeForOID(pgtype.UUIDOID)
	if !ok {
		return false
	}
	_, ok = t.Codec.(uuidCodec)
	return ok
}

// ConfigurePool applies the store's connection settings to cfg: the application name, and a
// binary codec for github.com/google/uuid values (the type sqlc generates for uuid columns).
// Without it pgx encodes every uuid through its driver.Valuer fallback: to a string, a failed
// binary attempt that builds and drops an error, a parse, then the real encoding — several
// per cent of the CPU of a request whose audit row lists two hundred children.
func ConfigurePool(cfg *pgxpool.Config) {
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "neemias-mcp"
	}
	after := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		registerUUID(c.TypeMap())
		if after != nil {
			return after(ctx, c)
		}
		return nil
	}
}

// FromPool wraps an existing pool; the caller keeps ownership of it (Close closes it, though).
func FromPool(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Pool returns the underlying pool: for the maintenance context (seeding, bulk copies) only.
// Queries on it bypass the caller context; request code uses [Store.InTx].
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool, waiting for acquired connections to be released.
func (s *Store) Close() { s.pool.Close() }

// maxAttempts bounds how often a transaction that failed with a serialization failure or a
// deadlock is run again.
const maxAttempts = 3

// InTx runs fn in a READ COMMITTED transaction acting for caller: the transaction sets
// app.church_id, app.user_id and app.role and switches to the application role, so every
// statement fn runs is subject to row-level security. The transaction commits when fn returns
// nil and rolls back otherwise; to commit and still fail (a wrong pick-up code must count
// against the limit), return [CommitWith](err).
//
// fn may run more than once: a transaction that fails with a serialization failure or a
// deadlock is retried (up to 3 attempts), so fn must keep its side effects inside tx.
//
// The error returned has been through [MapError]: database errors arrive as domain errors of
// internal/errs and never carry PostgreSQL's message or detail, which can quote row values.
func (s *Store) InTx(ctx context.Context, caller Caller, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if err := caller.Validate(); err != nil {
		return err
	}
	return s.run(ctx, func(ctx context.Context) error { return s.runTx(ctx, caller, false, fn) })
}

// InSystemTx runs fn in a transaction as the connecting role, without a caller context and
// without SET ROLE: the maintenance context of seeding and operator tasks. With the owner or
// a superuser connected, row-level security does not restrict it. Never use it to serve a
// request. Commit, rollback, retries and error mapping are as in [Store.InTx].
func (s *Store) InSystemTx(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	return s.run(ctx, func(ctx context.Context) error { return s.runTx(ctx, Anonymous, true, fn) })
}

// run runs one transaction attempt after another while they fail retryably.
func (s *Store) run(ctx context.Context, once func(ctx context.Context) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = once(ctx)
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
			return MapError(err)
		case <-time.After(time.Duration(attempt*attempt) * 10 * time.Millisecond):
		}
	}
	return MapError(err)
}

// retryable reports whether err is a transient conflict that a fresh transaction may not hit.
func retryable(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "40001" || pg.Code == "40P01"
	}
	return false
}

type commitError struct{ err error }

func (e *commitError) Error() string { return e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// CommitWith marks err as a failure whose transaction must still commit: [Store.InTx] commits
// what fn wrote and then returns err. A nil err stays nil.
func CommitWith(err error) error {
	if err == nil {
		return nil
	}
	return &commitError{err: err}
}
