package attendanceimport

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/rosterimport"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Options of a run.
type Options struct {
	// Church is the slug of the church the attendance belongs to.
	Church string
	// DryRun does everything and rolls back: the report says what would be imported.
	DryRun bool
	// Strict refuses the whole file when any row is refused (as rosterimport's).
	Strict bool
	// DateOrder is --date-order (dmy, mdy, ymd; empty: detected); see [ParseOptions].
	DateOrder string
}

// ErrRefusedRows is returned (with the report) by a strict run with refused rows.
var ErrRefusedRows = rosterimport.ErrRefusedRows

// AuditAction is the audit action of an import (capability onboard.Capability).
const AuditAction = "import.attendance"

// The church's import account: checked_in_by of every imported check-in (the package doc
// says why). It is made on first use, disabled, without a password, with the least staff role
// (a volunteer assigned to no class sees nothing), so it can never sign in.
const (
	ImportAccountEmail = "historico-importado@neemias.invalid"
	ImportAccountName  = "Histórico importado / imported history"
	importAccountRole  = store.RoleVoluntario
)

// Run imports the attendance file r into the church opts.Church in one transaction. A row that
// cannot be imported is refused and reported, and the others are imported, unless
// opts.Strict. The returned report is valid whenever the file could be read, errors included.
func Run(ctx context.Context, st *store.Store, r io.Reader, opts Options) (*Report, error) {
	start := time.Now()
	raw, err := io.ReadAll(io.LimitReader(r, rosterimport.MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the file: %w", err)
	}
	if err := rosterimport.CheckDateOrder(opts.DateOrder); err != nil {
		return nil, err
	}
	var rep *Report
	committed, err := rosterimport.InChurch(ctx, st, opts.Church, opts.DryRun, AuditAction, func(ctx context.Context, tx pgx.Tx, ch onboard.Church, today time.Time) ([]uuid.UUID, error) {
		rep = &Report{Church: opts.Church, DryRun: opts.DryRun}
		loc, err := time.LoadLocation(ch.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("attendanceimport: the church's time zone %q: %w", ch.TimeZone, err)
		}
		f, err := Parse(raw, today, ParseOptions{DateOrder: opts.DateOrder})
		if err != nil {
			return nil, err
		}
		rep.Encoding, rep.Separator, rep.HeaderRow, rep.DateOrder = f.Encoding, f.Separator, f.HeaderRow, f.DateOrder
		rep.Columns, rep.Ignored, rep.Lines = f.Columns, f.Ignored, f.Lines
		rep.Refused = append(rep.Refused, f.Refused...)
		rep.Warnings = append(rep.Warnings, f.Warnings...)
		cur, err := load(ctx, tx, ch.ID, f.Rows)
		if err != nil {
			return nil, err
		}
		p := plan(cur, f.Rows, rep)
		slices.SortStableFunc(rep.Refused, func(a, b rosterimport.Refusal) int { return a.Line - b.Line })
		slices.SortStableFunc(rep.Warnings, func(a, b rosterimport.Warning) int { return a.Line - b.Line })
		if opts.Strict && len(rep.Refused) > 0 {
			return nil, ErrRefusedRows
		}
		return p.write(ctx, tx, ch.ID, loc, rep)
	})
	if rep != nil {
		rep.Elapsed = time.Since(start)
		rep.Committed = committed
	}
	var fe *rosterimport.FileError
	if errors.As(err, &fe) {
		return nil, err
	}
	if err != nil && !errors.Is(err, ErrRefusedRows) {
		return nil, err
	}
	return rep, err
}

type child struct {
	id     uuid.UUID
	name   string
	birth  time.Time
	handle string
}

type class struct {
	id       uuid.UUID
	name     string
	archived bool
}

type dayKey struct {
	child uuid.UUID
	day   time.Time
}

// current is what the church has before the run.
type current struct {
	byHandle map[string]*child
	byName   map[string][]*child // by folded name
	classes  []class
	folded   map[string][]int // class indexes by folded name
	// checkins are the classes of the church's check-ins on the file's days.
	checkins map[dayKey]uuid.UUID
	// foldCache keeps the folded form of the file's names: a child's name is on every
	// Sunday's row, and folding is most of the matching's time.
	foldCache map[string]string
}

func (c *current) fold(s string) string {
	f, ok := c.foldCache[s]
	if !ok {
		f = rosterimport.Fold(s)
		c.foldCache[s] = f
	}
	return f
}

func load(ctx context.Context, tx pgx.Tx, church uuid.UUID, rows []Row) (*current, error) {
	c := &current{byHandle: map[string]*child{}, byName: map[string][]*child{}, folded: map[string][]int{}, checkins: map[dayKey]uuid.UUID{},
		foldCache: map[string]string{}}
	q, err := tx.Query(ctx, `SELECT id, name, birth_date, handle FROM children WHERE church_id = $1`, church)
	if err != nil {
		return nil, err
	}
	var k child
	if _, err := pgx.ForEachRow(q, []any{&k.id, &k.name, &k.birth, &k.handle}, func() error {
		e := k
		c.byHandle[e.handle] = &e
		key := rosterimport.Fold(e.name)
		c.byName[key] = append(c.byName[key], &e)
		return nil
	}); err != nil {
		return nil, err
	}
	q, err = tx.Query(ctx, `SELECT id, name, archived_at IS NOT NULL FROM classes WHERE church_id = $1 ORDER BY archived_at IS NOT NULL, name`, church)
	if err != nil {
		return nil, err
	}
	if c.classes, err = pgx.CollectRows(q, func(r pgx.CollectableRow) (class, error) {
		var cl class
		return cl, r.Scan(&cl.id, &cl.name, &cl.archived)
	}); err != nil {
		return nil, err
	}
	for i, cl := range c.classes {
		key := rosterimport.Fold(cl.name)
		c.folded[key] = append(c.folded[key], i)
	}
	seen := map[time.Time]bool{}
	var days []time.Time
	for _, r := range rows {
		if !seen[r.Date] {
			seen[r.Date] = true
			days = append(days, r.Date)
		}
	}
	if len(days) == 0 {
		return c, nil
	}
	q, err = tx.Query(ctx, `SELECT child_id, service_date, class_id FROM checkins WHERE church_id = $1 AND service_date = ANY($2::date[])`, church, days)
	if err != nil {
		return nil, err
	}
	var (
		key   dayKey
		class uuid.UUID
	)
	if _, err := pgx.ForEachRow(q, []any{&key.child, &key.day, &class}, func() error {
		c.checkins[dayKey{key.child, key.day.UTC()}] = class
		return nil
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// The reasons of the matching.
var (
	reasonUnknownHandle = rosterimport.Reason{PT: "nenhuma criança desta igreja tem este código; confira-o (está na lista da turma e na exportação do cadastro)",
		EN: "no child of this church has this handle; check it (the class list and the roster export show it)"}
	reasonHandleName = rosterimport.Reason{PT: "o código e o nome da linha são de crianças diferentes; corrija um dos dois",
		EN: "the row's handle and name belong to different children; correct one of them"}
	reasonHandleBirth = rosterimport.Reason{PT: "a data de nascimento da linha não é a da criança deste código; corrija uma das duas",
		EN: "the row's birth date is not that of the child with this handle; correct one of them"}
	reasonUnknownName = rosterimport.Reason{PT: "nenhuma criança desta igreja tem este nome completo; confira a grafia, ou importe antes o cadastro (neemias-mcp import roster)",
		EN: "no child of this church has this full name; check the spelling, or import the roster first (neemias-mcp import roster)"}
	reasonUnknownBirth = rosterimport.Reason{PT: "há criança com este nome nesta igreja, mas não com esta data de nascimento; confira as duas",
		EN: "this church has a child of this name, but not with this birth date; check both"}
	reasonAmbiguous = rosterimport.Reason{PT: "mais de uma criança desta igreja tem este nome: acrescente a coluna de data de nascimento, ou use o código da criança",
		EN: "more than one child of this church has this name: add a birth date column, or give the child's handle"}
	reasonAmbiguousBirth = rosterimport.Reason{PT: "mais de uma criança desta igreja tem este nome e esta data de nascimento: use o código da criança",
		EN: "more than one child of this church has this name and birth date: give the child's handle"}
	reasonBeforeBirth = rosterimport.Reason{PT: "a data é anterior ao nascimento da criança",
		EN: "the date is before the child's birth"}
	reasonUnknownClass = rosterimport.Reason{PT: "a turma não existe nesta igreja (nem sem acentos ou maiúsculas); corrija o nome ou crie a turma (neemias-mcp class add): a importação não cria turmas",
		EN: "the class does not exist in this church (not even ignoring accents and case); fix the name or create the class (neemias-mcp class add): the import does not create classes"}
	reasonAmbiguousClass = rosterimport.Reason{PT: "mais de uma turma desta igreja tem este nome sem contar acentos e maiúsculas; escreva-o exatamente como a turma está cadastrada",
		EN: "more than one class of this church has this name when accents and case are ignored; write it exactly as the class is registered"}
	reasonOtherClass = rosterimport.Reason{PT: "a criança já tem check-in neste dia em outra turma; a importação não muda um check-in registrado: corrija a turma da linha ou apague a linha",
		EN: "the child already has a check-in on this day in another class; the import does not change a recorded check-in: correct the row's class or delete the row"}
	warnHandleElsewhere = rosterimport.Reason{PT: "o código não é de uma criança desta igreja (de outro sistema?): a criança foi achada pelo nome",
		EN: "the handle is not of a child of this church (from another system?): the child was found by name"}
)

// matchChild finds the row's child (the rules are in the package doc), or says why not; warn
// is set when the row's handle was not this church's and the name found the child.
func (c *current) matchChild(r Row) (k *child, warn bool, reason *rosterimport.Reason) {
	if r.Handle != "" {
		k = c.byHandle[r.Handle]
		switch {
		case k == nil && r.Name == "":
			return nil, false, &reasonUnknownHandle
		case k == nil:
			warn = true
		case r.Name != "" && c.fold(r.Name) != c.fold(k.name):
			return nil, false, &reasonHandleName
		case r.Birth != nil && !r.Birth.Equal(k.birth):
			return nil, false, &reasonHandleBirth
		default:
			return k, false, nil
		}
	}
	if r.MaybeHandle != "" {
		if k := c.byHandle[r.MaybeHandle]; k != nil {
			if r.Birth != nil && !r.Birth.Equal(k.birth) {
				return nil, false, &reasonHandleBirth
			}
			return k, false, nil
		}
	}
	cands := c.byName[c.fold(r.Name)]
	if len(cands) == 0 {
		return nil, false, &reasonUnknownName
	}
	if r.Birth != nil {
		var same []*child
		for _, k := range cands {
			if k.birth.Equal(*r.Birth) {
				same = append(same, k)
			}
		}
		switch len(same) {
		case 0:
			return nil, false, &reasonUnknownBirth
		case 1:
			return same[0], warn, nil
		}
		return nil, false, &reasonAmbiguousBirth
	}
	if len(cands) > 1 {
		return nil, false, &reasonAmbiguous
	}
	return cands[0], warn, nil
}

// matchClass finds the row's class: the one of that exact name, else the one whose folded
// name is the cell's (an active class before an archived one).
func (c *current) matchClass(name string) (*class, *rosterimport.Reason) {
	for i := range c.classes {
		if c.classes[i].name == name {
			return &c.classes[i], nil
		}
	}
	idx := c.folded[c.fold(name)]
	var active []int
	for _, i := range idx {
		if !c.classes[i].archived {
			active = append(active, i)
		}
	}
	if len(active) > 0 {
		idx = active
	}
	switch len(idx) {
	case 0:
		return nil, &reasonUnknownClass
	case 1:
		return &c.classes[idx[0]], nil
	}
	return nil, &reasonAmbiguousClass
}

// checkin is a planned check-in.
type checkin struct {
	child, class uuid.UUID
	day          time.Time
	in, out      int
}

// plan matches the valid rows against the church's records, refusing the rows it cannot
// place, and fills in the report's counts.
func plan(cur *current, rows []Row, rep *Report) checkinPlan {
	type first struct {
		line  int
		class uuid.UUID
	}
	seen := map[dayKey]first{}
	var out checkinPlan
	refuse := func(line int, r rosterimport.Reason) {
		rep.Refused = append(rep.Refused, rosterimport.Refusal{Line: line, Reason: r})
	}
	for _, r := range rows {
		k, warn, reason := cur.matchChild(r)
		if reason != nil {
			refuse(r.Line, *reason)
			continue
		}
		if r.Date.Before(k.birth) {
			refuse(r.Line, reasonBeforeBirth)
			continue
		}
		cl, reason := cur.matchClass(r.Class)
		if reason != nil {
			refuse(r.Line, *reason)
			continue
		}
		key := dayKey{k.id, r.Date}
		if f, dup := seen[key]; dup {
			if f.class == cl.id {
				refuse(r.Line, rosterimport.Reason{PT: fmt.Sprintf("repete a linha %d (mesma criança, mesmo dia, mesma turma)", f.line),
					EN: fmt.Sprintf("repeats row %d (same child, same day, same class)", f.line)})
			} else {
				refuse(r.Line, rosterimport.Reason{PT: fmt.Sprintf("a linha %d já põe esta criança neste dia em outra turma; uma criança tem um check-in por dia", f.line),
					EN: fmt.Sprintf("row %d already puts this child in another class on this day; a child has one check-in a day", f.line)})
			}
			continue
		}
		seen[key] = first{r.Line, cl.id}
		if warn {
			rep.Warnings = append(rep.Warnings, rosterimport.Warning{Line: r.Line, Reason: warnHandleElsewhere})
		}
		if have, ok := cur.checkins[key]; ok {
			if have != cl.id {
				refuse(r.Line, reasonOtherClass)
				continue
			}
			rep.Present++
			continue
		}
		out = append(out, checkin{child: k.id, class: cl.id, day: r.Date, in: r.In, out: r.Out})
	}
	rep.Imported = len(out)
	return out
}

// importAccount is the church's import account, made when missing (see [ImportAccountEmail]).
// An account of that email that could sign in is not used.
func importAccount(ctx context.Context, tx pgx.Tx, church uuid.UUID) (uuid.UUID, error) {
	var id uuid.UUID
	var inert bool
	err := tx.QueryRow(ctx, `SELECT id, disabled_at IS NOT NULL AND password_hash IS NULL FROM users WHERE church_id = $1 AND email = $2`,
		church, ImportAccountEmail).Scan(&id, &inert)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		err = tx.QueryRow(ctx, `INSERT INTO users (church_id, email, display_name, role, disabled_at) VALUES ($1, $2, $3, $4, now()) RETURNING id`,
			church, ImportAccountEmail, ImportAccountName, importAccountRole).Scan(&id)
		return id, err
	case err != nil:
		return uuid.Nil, err
	case !inert:
		return uuid.Nil, fmt.Errorf("the account %s of this church is enabled or has a password: it is the import's and must not sign in; disable it (neemias-mcp user disable) and import again", ImportAccountEmail)
	}
	return id, nil
}

// write inserts the service days and check-ins, one set-based statement each, and returns the
// ids the audit entry names: the import account and the children given a check-in.
func (ps checkinPlan) write(ctx context.Context, tx pgx.Tx, church uuid.UUID, loc *time.Location, rep *Report) ([]uuid.UUID, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	by, err := importAccount(ctx, tx, church)
	if err != nil {
		return nil, err
	}
	n := len(ps)
	var (
		children, classes = make([]uuid.UUID, n), make([]uuid.UUID, n)
		days              = make([]time.Time, n)
		ins               = make([]time.Time, n)
		outs              = make([]*time.Time, n)
		salts, hashes     = make([][]byte, n), make([][]byte, n)
		random            = make([]byte, n*48)
		dayList           []time.Time
		seenDay           = map[time.Time]bool{}
		targets           = []uuid.UUID{by}
		seenChild         = map[uuid.UUID]bool{}
	)
	// No pick-up code was issued for a past day: the salt and the "hash" are random bytes,
	// the hash of no code anyone holds.
	if _, err := rand.Read(random); err != nil {
		return nil, fmt.Errorf("attendanceimport: random bytes: %w", err)
	}
	at := func(day time.Time, minutes int) time.Time {
		return time.Date(day.Year(), day.Month(), day.Day(), minutes/60, minutes%60, 0, 0, loc)
	}
	for i, p := range ps {
		children[i], classes[i], days[i] = p.child, p.class, p.day
		ins[i] = at(p.day, max(p.in, 0))
		if p.out >= 0 {
			o := at(p.day, p.out)
			if o.Before(ins[i]) { // a clock change between the two times (daylight saving)
				o = ins[i]
			}
			outs[i] = &o
		}
		salts[i], hashes[i] = random[i*48:i*48+16], random[i*48+16:i*48+48]
		if !seenDay[p.day] {
			seenDay[p.day] = true
			dayList = append(dayList, p.day)
		}
		if !seenChild[p.child] {
			seenChild[p.child] = true
			targets = append(targets, p.child)
		}
	}
	tag, err := tx.Exec(ctx, `INSERT INTO service_days (church_id, service_date) SELECT $1, d FROM unnest($2::date[]) AS d
		ON CONFLICT (church_id, service_date) DO NOTHING`, church, dayList)
	if err != nil {
		return nil, err
	}
	rep.ServiceDays = int(tag.RowsAffected())
	tag, err = tx.Exec(ctx, `INSERT INTO checkins (church_id, child_id, class_id, service_date, checked_in_at, checked_in_by,
			pickup_code_salt, pickup_code_hash, checked_out_at, checked_out_by)
		SELECT $1, u.child, u.class, u.day, u.cin, $2, u.salt, u.hash, u.cout, CASE WHEN u.cout IS NOT NULL THEN $2::uuid END
		FROM unnest($3::uuid[], $4::uuid[], $5::date[], $6::timestamptz[], $7::bytea[], $8::bytea[], $9::timestamptz[])
			AS u(child, class, day, cin, salt, hash, cout)
		ON CONFLICT (child_id, service_date) DO NOTHING`,
		church, by, children, classes, days, ins, salts, hashes, outs)
	if err != nil {
		return nil, err
	}
	if int(tag.RowsAffected()) != n {
		return nil, fmt.Errorf("attendanceimport: %d check-ins written where %d were planned", tag.RowsAffected(), n)
	}
	rep.Children = len(targets) - 1
	return targets, nil
}

// checkinPlan is the check-ins a run writes.
type checkinPlan []checkin
