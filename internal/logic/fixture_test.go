package logic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/errs"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/pipeline"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/store/storetest"
	"github.com/neemias/neemias-mcp/internal/testsupport"
)

// Sentinel personal data of the PII canary: the fixtures use them, and no log line or error
// message may ever contain any of them (canaryFragments).
const (
	childSentinel    = "Zzcanary Sentinela"
	guardianSentinel = "Zzcanary Guardiã Sentinela"
	phoneSentinel    = "+55 11 90000-4242"
	otherChildName   = "Zzcanary Outra Igreja"
	otherPhone       = "+55 11 90000-4545"
	enrollChildName  = "Zzcanary Matriculada"
	enrollGuardName  = "Zzcanary Mãe Matriculante"
	enrollPhone      = "+55 11 90000-4343"
	// fixtureCode is the pick-up code of the fixture's check-ins: a secret, so a canary too.
	// Real codes are six digits; the hash takes any string, and letters cannot collide with
	// the digits of a duration or a uuid in a log line.
	fixtureCode = "Zzpick7351"
)

// canaryFragments are searched for in logs and errors: the names' distinctive part, the
// fixture's pick-up code and the phones' digits in the forms they could be rendered in.
var canaryFragments = []string{"Zzcanary", "Zzpick", "Sentinela", "90000-4242", "900004242", "90000-4343", "900004343", "90000-4545", "900004545"}

// saoPaulo is the churches' time zone, for computing "today" as the service does.
var saoPaulo = func() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return time.FixedZone("-03", -3*3600)
	}
	return loc
}()

func todaySP() capability.Date { return capability.DateOf(time.Now().In(saoPaulo)) }

// church is one church of the fixture, with a known shape:
//
//	classes:   c1 Pequenos (0-5), c2 Grandes (6-12)
//	users:     one per role; the VOLUNTARIO is assigned to c1; the RESPONSAVEL is guardian g1
//	children:  k1 (c1, 3 years, the sentinel name), k2 (c2, 8), k3 (c1, 4), k4 (no class, 14)
//	guardians: g1 (the RESPONSAVEL; sentinel name and phone) -> k1 mother, k2 mother
//	           g2 -> k1 father, k3 father, k4 grandparent
//	check-ins: ck1 (k1, c1), ck2 (k2, c2), ck3 (k3, c1) on day, all with fixtureCode
//	pick-up:   pa1, a trusted adult (trustedName, grandmother) on k1's list, added by the
//	           RESPONSAVEL; no restriction (tests add theirs)
type church struct {
	id                 uuid.UUID
	users              map[string]uuid.UUID
	c1, c2             uuid.UUID
	k1, k2, k3, k4     uuid.UUID
	g1, g2             uuid.UUID
	ck1, ck2, ck3      uuid.UUID
	pa1                uuid.UUID
	day                capability.Date
	childName, g1Phone string
	g1Name             string
	// k1Handle is the handle the database drew for k1 (children.handle); handles has every
	// child's, by id.
	k1Handle string
	handles  map[uuid.UUID]string
}

// trustedName is the fixture's trusted adult on k1's pick-up list (pa1): a canary too.
const trustedName = "Zzcanary Avó Confiável"

// env is one test's world: its own database with two churches, a Service logging to a buffer.
type env struct {
	t    *testing.T
	st   *store.Store
	svc  *logic.Service
	logs *testsupport.Buffer
	a, b church

	mu     sync.Mutex
	errMsg []string // every error message a call returned, for the canary
}

// newEnv builds the world. opts configure the Service (a clock, say).
func newEnv(t *testing.T, opts ...logic.Option) *env {
	t.Helper()
	st := storetest.New(t)
	e := &env{t: t, st: st, logs: &testsupport.Buffer{}}
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.svc = logic.New(st, append([]logic.Option{logic.WithLogger(logger)}, opts...)...)
	day := todaySP().AddDays(-7)
	e.a = insertChurch(t, st, "zz-a", day, childSentinel, guardianSentinel, phoneSentinel)
	e.b = insertChurch(t, st, "zz-b", day, otherChildName, "Zzcanary Guardião Outro", otherPhone)
	t.Cleanup(e.checkCanary)
	return e
}

func insertChurch(t *testing.T, st *store.Store, slug string, day capability.Date, childName, g1Name, g1Phone string) church {
	t.Helper()
	c := church{
		id:    uuid.New(),
		users: map[string]uuid.UUID{},
		c1:    uuid.New(), c2: uuid.New(),
		k1: uuid.New(), k2: uuid.New(), k3: uuid.New(), k4: uuid.New(),
		g1: uuid.New(), g2: uuid.New(),
		ck1: uuid.New(), ck2: uuid.New(), ck3: uuid.New(),
		pa1: uuid.New(),
		day: day, childName: childName, g1Phone: g1Phone, g1Name: g1Name,
	}
	for _, r := range store.Roles() {
		c.users[r] = uuid.New()
	}
	born := func(years int) time.Time { return todaySP().Time().AddDate(-years, 0, -10) }
	salt := bytes.Repeat([]byte{7}, 16)
	hash := store.HashPickupCode(salt, fixtureCode)
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO churches (id, name, slug) VALUES ($1, 'Igreja ' || $2, $2)`, []any{c.id, slug}},
		{`INSERT INTO users (id, church_id, email, display_name, role) VALUES
			($2, $1, 'admin@' || $6, 'Admin', 'ADMIN'), ($3, $1, 'cadastro@' || $6, 'Cadastro', 'CADASTRO'),
			($4, $1, 'vol@' || $6, 'Vol', 'VOLUNTARIO'), ($5, $1, 'resp@' || $6, 'Resp', 'RESPONSAVEL')`,
			[]any{c.id, c.users[store.RoleAdmin], c.users[store.RoleCadastro], c.users[store.RoleVoluntario], c.users[store.RoleResponsavel], slug + ".test"}},
		{`INSERT INTO classes (id, church_id, name, min_age, max_age) VALUES ($2, $1, 'Pequenos', 0, 5), ($3, $1, 'Grandes', 6, 12)`,
			[]any{c.id, c.c1, c.c2}},
		{`INSERT INTO volunteer_assignments (user_id, class_id, church_id) VALUES ($2, $3, $1)`,
			[]any{c.id, c.users[store.RoleVoluntario], c.c1}},
		{`INSERT INTO children (id, church_id, name, birth_date, class_id) VALUES
			($2, $1, $6, $7, $11), ($3, $1, 'Criança Dois', $8, $12), ($4, $1, 'Criança Três', $9, $11), ($5, $1, 'Criança Quatro', $10, NULL)`,
			[]any{c.id, c.k1, c.k2, c.k3, c.k4, childName, born(3), born(8), born(4), born(14), c.c1, c.c2}},
		{`INSERT INTO guardians (id, church_id, user_id, name, phone) VALUES
			($2, $1, $4, $5, $6), ($3, $1, NULL, 'Responsável Dois', '+55 (00) 90000-0002')`,
			[]any{c.id, c.g1, c.g2, c.users[store.RoleResponsavel], g1Name, g1Phone}},
		{`INSERT INTO guardian_children (guardian_id, child_id, church_id, relationship) VALUES
			($2, $4, $1, 'mother'), ($2, $5, $1, 'mother'), ($3, $4, $1, 'father'), ($3, $6, $1, 'father'), ($3, $7, $1, 'grandparent')`,
			[]any{c.id, c.g1, c.g2, c.k1, c.k2, c.k3, c.k4}},
		{`INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis, granted_by) VALUES
			($1, $2, $4, 'v1', 'consent', $8), ($1, $2, $5, 'v1', 'consent', $8), ($1, $3, $6, 'v1', 'consent', $8), ($1, $3, $7, 'v1', 'consent', $8)`,
			[]any{c.id, c.g1, c.g2, c.k1, c.k2, c.k3, c.k4, c.users[store.RoleCadastro]}},
		{`INSERT INTO service_days (church_id, service_date) VALUES ($1, $2)`, []any{c.id, day.Time()}},
		{`INSERT INTO checkins (id, church_id, child_id, class_id, service_date, checked_in_by, pickup_code_salt, pickup_code_hash, checked_in_at) VALUES
			($2, $1, $5, $8, $10, $11, $12, $13, $14), ($3, $1, $6, $9, $10, $11, $12, $13, $14 + interval '1 minute'),
			($4, $1, $7, $8, $10, $11, $12, $13, $14 + interval '2 minutes')`,
			[]any{c.id, c.ck1, c.ck2, c.ck3, c.k1, c.k2, c.k3, c.c1, c.c2, day.Time(), c.users[store.RoleCadastro], salt, hash,
				day.Time().Add(12 * time.Hour)}},
		{`INSERT INTO pickup_adults (id, church_id, child_id, name, relationship, authorized, created_by) VALUES
			($2, $1, $3, $4, 'grandmother', true, $5)`,
			[]any{c.id, c.pa1, c.k1, trustedName, c.users[store.RoleResponsavel]}},
	}
	err := st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT id, handle FROM children WHERE church_id = $1`, c.id)
		if err != nil {
			return err
		}
		c.handles = map[uuid.UUID]string{}
		for rows.Next() {
			var id uuid.UUID
			var h string
			if err := rows.Scan(&id, &h); err != nil {
				return err
			}
			c.handles[id] = h
		}
		if err := rows.Err(); err != nil {
			return err
		}
		c.k1Handle = c.handles[c.k1]
		return nil
	})
	if err != nil {
		t.Fatalf("fixture %s: %v", slug, err)
	}
	return c
}

// as returns a context carrying the principal of role in church c, with the role's scopes.
func (c church) as(role string) context.Context {
	s, ok := scopes.RoleScopes(role)
	if !ok {
		panic("unknown role " + role)
	}
	return principal.With(context.Background(), principal.Principal{
		UserID: c.users[role], ChurchID: c.id, Role: role, Scopes: s, ClientID: "test-client-" + strings.ToLower(role),
	})
}

// invoke calls capability id through the pipeline with the principal on ctx, like the
// protocol layer does.
func (e *env) invoke(ctx context.Context, id string, args any) (any, error) {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.run(ctx, ctx, id, raw, nil)
}

// call runs capability id through the pipeline the transports use (scope check, refusal audit,
// the generated dispatcher), recording error texts for the PII checks.
func (e *env) call(ctx context.Context, id string, raw json.RawMessage) (any, error) {
	return e.run(ctx, ctx, id, raw, e.svc.OnRefused)
}

// run authorizes with the principal on authCtx and invokes with invokeCtx (the same context,
// except where a test proves the logic's own defence against a missing principal); hook is the
// gate's refusal hook (nil: the refusal is not audited, as when the logic is tested alone).
func (e *env) run(authCtx, invokeCtx context.Context, id string, raw json.RawMessage, hook pipeline.RefusalHook) (any, error) {
	gate, err := pipeline.New(pipeline.Config{Catalog: capapi.Catalog(e.svc), OnRefused: hook})
	if err != nil {
		e.t.Fatal(err)
	}
	var res pipeline.Result
	permit, err := gate.Authorize(authCtx, id, raw)
	if err == nil {
		res, err = gate.Invoke(invokeCtx, permit, raw)
	}
	if err != nil {
		e.mu.Lock()
		e.errMsg = append(e.errMsg, err.Error())
		e.mu.Unlock()
		return nil, err
	}
	return res.Value, nil
}

// mustInvoke is invoke that fails the test on error, decoding the output into T.
func mustInvoke[T any](e *env, ctx context.Context, id string, args any) *T {
	e.t.Helper()
	out, err := e.invoke(ctx, id, args)
	if err != nil {
		e.t.Fatalf("%s: %v", id, err)
	}
	o, ok := out.(*T)
	if !ok {
		e.t.Fatalf("%s: output is %T", id, out)
	}
	return o
}

// checkCanary fails the test when a sentinel appears in a log line or an error message.
func (e *env) checkCanary() {
	logs := e.logs.String()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, f := range canaryFragments {
		if strings.Contains(logs, f) {
			e.t.Errorf("PII canary: %q appears in the logs:\n%s", f, grepLines(logs, f))
		}
		for _, m := range e.errMsg {
			if strings.Contains(m, f) {
				e.t.Errorf("PII canary: %q appears in an error message: %s", f, m)
			}
		}
	}
}

func grepLines(s, f string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, f) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// auditRow is one audit_log entry as read back in the maintenance context.
type auditRow struct {
	ChurchID   *uuid.UUID
	UserID     *uuid.UUID
	ClientID   *string
	Capability string
	Action     string
	Targets    []uuid.UUID
	Outcome    string
}

// audit returns the audit entries, oldest first (the fixture writes none).
func (e *env) audit() []auditRow {
	e.t.Helper()
	var out []auditRow
	err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT church_id, user_id, client_id, capability, action, target_ids, outcome FROM audit_log ORDER BY id`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[auditRow])
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// count runs a count(*) query in the maintenance context.
func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	err := e.st.InSystemTx(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, sql, args...).Scan(&n)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// jsonOf marshals v as the wire would carry it.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantNotFound fails unless err is errs.ErrNotFound with nothing added to it: a record the
// caller may not see must read exactly like a missing one.
func wantNotFound(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, errs.ErrNotFound) || err.Error() != errs.ErrNotFound.Error() {
		t.Fatalf("err = %v, want exactly %v", err, errs.ErrNotFound)
	}
}

// wantInvalid fails unless err is an *errs.Invalid about field.
func wantInvalid(t *testing.T, err error, field string) *errs.Invalid {
	t.Helper()
	inv, ok := errs.AsInvalid(err)
	if !ok || inv.Field != field {
		t.Fatalf("err = %v, want *errs.Invalid on %q", err, field)
	}
	return inv
}

// plus returns role's scopes and extra, for tests of the row filters beyond the scope matrix.
func plus(role string, extra ...string) capability.ScopeSet {
	s, _ := scopes.RoleScopes(role)
	return capability.NewScopeSet(append(s.List(), extra...)...)
}

// scopesOf returns role's scopes.
func scopesOf(role string) (capability.ScopeSet, bool) { return scopes.RoleScopes(role) }

// invokeWith is invoke with explicit granted scopes, whatever the principal holds.
func invokeWith(e *env, ctx context.Context, id string, args any, granted capability.ScopeSet) (any, error) {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	p, ok := principal.From(ctx)
	if !ok {
		// No caller: the pipeline would refuse before the logic runs. Pass its scope check
		// with a stand-in caller and run the logic without one, to prove the logic fails
		// closed on its own.
		stand := principal.With(context.Background(), principal.Principal{UserID: uuid.New(), ChurchID: uuid.New(), Role: "ADMIN", Scopes: granted})
		return e.run(stand, ctx, id, raw, nil)
	}
	p.Scopes = granted
	ctx = principal.With(ctx, p)
	return e.run(ctx, ctx, id, raw, nil)
}

// checkinsOf flattens checkins_by_date's classes into their check-ins, class by class, each
// with its class name.
func checkinsOf(o *capapi.CheckinsByDateOutput) (rows []capapi.CheckinsByDateOutputClassesItemCheckinsItem, classes []string) {
	if o == nil {
		return nil, nil
	}
	for _, cl := range o.Classes {
		for _, ck := range cl.Checkins {
			rows = append(rows, ck)
			classes = append(classes, cl.ClassName)
		}
	}
	return rows, classes
}
