package rosterimport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Options of a run.
type Options struct {
	// Church is the slug of the church the roster belongs to.
	Church string
	// DryRun does everything and rolls back: the report says what would change.
	DryRun bool
	// Strict refuses the whole file when any row is refused.
	Strict bool
}

// Counts of one kind of record.
type Counts struct{ Created, Updated, Unchanged int }

// Report is what a run did (or, for a dry run, would do).
type Report struct {
	Church    string
	DryRun    bool
	Encoding  string
	Separator rune
	Columns   map[Field]string
	Ignored   []string
	// Lines is the number of data rows read; Imported those that were not refused.
	Lines, Imported int
	Children        Counts
	Guardians       Counts
	Links           Counts
	// Consents is the number of consent records added.
	Consents int
	// Unplaced counts the imported children that no class fits (age outside every range).
	Unplaced int
	Refused  []Refusal
	// Committed: the changes are in the database (false for a dry run and a refused file).
	Committed bool
	Elapsed   time.Duration
}

// ErrRefusedRows is returned (with the report) by a strict run with refused rows.
var ErrRefusedRows = errors.New("rows were refused and --strict is set: nothing was imported")

var errRollback = errors.New("rosterimport: roll back")

// AuditAction is the audit action of an import.
const AuditAction = "import.roster"

// Run imports the roster file r into the church opts.Church in one transaction. A row that
// cannot be imported is refused and reported, and the others are imported, unless
// opts.Strict. The returned report is valid whenever the file could be read, errors included.
func Run(ctx context.Context, st *store.Store, r io.Reader, opts Options) (*Report, error) {
	start := time.Now()
	raw, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the file: %w", err)
	}
	var rep *Report
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rep = &Report{Church: opts.Church, DryRun: opts.DryRun}
		ch, err := onboard.ChurchBySlug(ctx, tx, opts.Church)
		if err != nil {
			return err
		}
		// Two imports into one church wait for each other instead of racing on the matching.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))`, "neemias-import/"+ch.ID.String()); err != nil {
			return err
		}
		var today time.Time
		if err := tx.QueryRow(ctx, `SELECT (now() AT TIME ZONE time_zone)::date FROM churches WHERE id = $1`, ch.ID).Scan(&today); err != nil {
			return err
		}
		f, err := Parse(bytes.NewReader(raw), today)
		if err != nil {
			return err
		}
		rep.Encoding, rep.Separator, rep.Columns, rep.Ignored, rep.Lines = f.Encoding, f.Separator, f.Columns, f.Ignored, f.Lines
		rep.Refused = append(rep.Refused, f.Refused...)
		cur, err := load(ctx, tx, ch.ID)
		if err != nil {
			return err
		}
		p := plan(cur, f.Rows, today, rep)
		slices.SortStableFunc(rep.Refused, func(a, b Refusal) int { return a.Line - b.Line })
		if opts.Strict && len(rep.Refused) > 0 {
			return ErrRefusedRows
		}
		targets, err := p.write(ctx, tx, ch.ID)
		if err != nil {
			return err
		}
		if opts.DryRun {
			return errRollback
		}
		return audit.InsertOperator(ctx, db.New(tx), ch.ID, audit.Entry{
			Capability: onboard.Capability, Action: AuditAction, Targets: append([]uuid.UUID{ch.ID}, targets...), Outcome: audit.Allowed,
		})
	})
	if rep != nil {
		rep.Elapsed = time.Since(start)
		rep.Committed = err == nil
	}
	if errors.Is(err, errRollback) {
		err = nil
	}
	var fe *FileError
	if errors.As(err, &fe) {
		return nil, err
	}
	if err != nil && !errors.Is(err, ErrRefusedRows) {
		return nil, err
	}
	return rep, err
}

type class struct {
	id             uuid.UUID
	name, folded   string
	minAge, maxAge int
	archived       bool
}

type child struct {
	id                      uuid.UUID
	name                    string
	classID                 *uuid.UUID
	allergies, medicalNotes *string
}

type guardian struct {
	id   uuid.UUID
	name string
}

type pair struct{ guardian, child uuid.UUID }

type consent struct{ version, basis string }

// current is what the church has before the run.
type current struct {
	classes   []class
	children  map[string][]child // by childKey
	guardians map[string]guardian
	links     map[pair]string
	consents  map[pair][]consent // active ones
}

func childKey(name string, birth time.Time) string {
	return fold(name) + "|" + birth.Format(time.DateOnly)
}

func load(ctx context.Context, tx pgx.Tx, church uuid.UUID) (*current, error) {
	c := &current{children: map[string][]child{}, guardians: map[string]guardian{}, links: map[pair]string{}, consents: map[pair][]consent{}}
	rows, err := tx.Query(ctx, `SELECT id, name, min_age, max_age, archived_at IS NOT NULL FROM classes WHERE church_id = $1`, church)
	if err != nil {
		return nil, err
	}
	c.classes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (class, error) {
		var cl class
		err := r.Scan(&cl.id, &cl.name, &cl.minAge, &cl.maxAge, &cl.archived)
		cl.folded = fold(cl.name)
		return cl, err
	})
	if err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT id, name, birth_date, class_id, allergies, medical_notes FROM children WHERE church_id = $1 AND archived_at IS NULL`, church)
	if err != nil {
		return nil, err
	}
	var (
		k     child
		birth time.Time
	)
	if _, err := pgx.ForEachRow(rows, []any{&k.id, &k.name, &birth, &k.classID, &k.allergies, &k.medicalNotes}, func() error {
		key := childKey(k.name, birth)
		c.children[key] = append(c.children[key], k)
		k.classID, k.allergies, k.medicalNotes = nil, nil, nil
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT id, name, phone FROM guardians WHERE church_id = $1 ORDER BY created_at, id`, church)
	if err != nil {
		return nil, err
	}
	var (
		g     guardian
		phone string
	)
	if _, err := pgx.ForEachRow(rows, []any{&g.id, &g.name, &phone}, func() error {
		// Guardians enrolled by hand may have their phone in another format.
		key := phone
		if e164, bad := parsePhone(phone); bad == nil {
			key = e164
		}
		if _, dup := c.guardians[key]; !dup {
			c.guardians[key] = g
		}
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT guardian_id, child_id, relationship FROM guardian_children WHERE church_id = $1`, church)
	if err != nil {
		return nil, err
	}
	var (
		pr  pair
		rel string
	)
	if _, err := pgx.ForEachRow(rows, []any{&pr.guardian, &pr.child, &rel}, func() error {
		c.links[pr] = rel
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT guardian_id, child_id, text_version, legal_basis FROM consent_records
		WHERE church_id = $1 AND revoked_at IS NULL`, church)
	if err != nil {
		return nil, err
	}
	var cs consent
	if _, err := pgx.ForEachRow(rows, []any{&pr.guardian, &pr.child, &cs.version, &cs.basis}, func() error {
		c.consents[pr] = append(c.consents[pr], cs)
		return nil
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// byAge is the class of a child born on birth, on today: the narrowest active range that
// holds the age in completed years (the order of the FindClassForAge query); nil when none.
func (c *current) byAge(birth, today time.Time) *uuid.UUID {
	age := today.Year() - birth.Year()
	if today.Month() < birth.Month() || today.Month() == birth.Month() && today.Day() < birth.Day() {
		age--
	}
	var best *class
	for i := range c.classes {
		cl := &c.classes[i]
		if cl.archived || age < cl.minAge || age > cl.maxAge {
			continue
		}
		if best == nil || cl.maxAge-cl.minAge < best.maxAge-best.minAge ||
			cl.maxAge-cl.minAge == best.maxAge-best.minAge && (cl.minAge < best.minAge || cl.minAge == best.minAge && cl.name < best.name) {
			best = cl
		}
	}
	if best == nil {
		return nil
	}
	return &best.id
}

type childPlan struct {
	id                      uuid.UUID
	isNew, changed          bool
	name                    string
	birth                   time.Time
	classID                 *uuid.UUID
	allergies, medicalNotes *string
}

// health sets a health field from its cell: a non-empty cell that differs replaces it (an
// empty one keeps what the roster has), and reports whether it changed.
func health(dst **string, cell string) bool {
	if cell == "" || (*dst != nil && **dst == cell) {
		return false
	}
	*dst = &cell
	return true
}

type guardianPlan struct {
	id             uuid.UUID
	isNew, changed bool
	name, phone    string
}

type linkPlan struct {
	pair
	relationship string
}

type consentPlan struct {
	pair
	consent
}

type changes struct {
	children  []*childPlan
	guardians []*guardianPlan
	newLinks  []linkPlan
	updLinks  []linkPlan
	consents  []consentPlan
}

// plan matches the valid rows against the church's records, refusing the rows it cannot
// place, and fills in the report's counts.
func plan(cur *current, rows []Row, today time.Time, rep *Report) *changes {
	ch := &changes{}
	children := map[string]*childPlan{}
	guardians := map[string]*guardianPlan{}
	seen := map[string]int{}
	linkDone := map[pair]bool{}
	consentDone := map[pair]map[consent]bool{}
	for _, r := range rows {
		var explicit *class
		if r.Class != "" {
			for i := range cur.classes {
				if cur.classes[i].folded == fold(r.Class) {
					explicit = &cur.classes[i]
				}
			}
			if explicit == nil {
				rep.Refused = append(rep.Refused, refuse(r.Line,
					fmt.Sprintf("a turma %q não existe nesta igreja; corrija o nome ou crie-a (neemias-mcp class add)", r.Class),
					fmt.Sprintf("class %q does not exist in this church; fix the name or create it (neemias-mcp class add)", r.Class)))
				continue
			}
			if explicit.archived {
				rep.Refused = append(rep.Refused, refuse(r.Line,
					fmt.Sprintf("a turma %q está arquivada", explicit.name), fmt.Sprintf("class %q is archived", explicit.name)))
				continue
			}
		}
		key := childKey(r.ChildName, r.BirthDate)
		if first, dup := seen[key+"|"+r.Phone]; dup {
			rep.Refused = append(rep.Refused, refuse(r.Line,
				fmt.Sprintf("repete a linha %d (mesma criança, mesmo responsável)", first),
				fmt.Sprintf("repeats line %d (same child, same guardian)", first)))
			continue
		}
		cp := children[key]
		if cp == nil {
			switch existing := cur.children[key]; len(existing) {
			case 0:
				cp = &childPlan{id: uuid.New(), isNew: true, name: r.ChildName, birth: r.BirthDate}
				health(&cp.allergies, r.Allergies)
				health(&cp.medicalNotes, r.MedicalNotes)
				if explicit != nil {
					cp.classID = &explicit.id
				} else {
					cp.classID = cur.byAge(r.BirthDate, today)
				}
			case 1:
				e := existing[0]
				cp = &childPlan{id: e.id, name: e.name, birth: r.BirthDate, classID: e.classID, allergies: e.allergies, medicalNotes: e.medicalNotes}
				if e.name != r.ChildName {
					cp.name, cp.changed = r.ChildName, true
				}
				if a, m := health(&cp.allergies, r.Allergies), health(&cp.medicalNotes, r.MedicalNotes); a || m {
					cp.changed = true
				}
				switch {
				case explicit != nil:
					if e.classID == nil || *e.classID != explicit.id {
						cp.classID, cp.changed = &explicit.id, true
					}
				case e.classID == nil:
					if byAge := cur.byAge(r.BirthDate, today); byAge != nil {
						cp.classID, cp.changed = byAge, true
					}
				}
			default:
				rep.Refused = append(rep.Refused, refuse(r.Line,
					"há mais de uma criança com este nome e esta data de nascimento no cadastro; resolva no sistema antes de importar",
					"more than one enrolled child has this name and birth date; sort them out before importing"))
				continue
			}
			children[key] = cp
			ch.children = append(ch.children, cp)
		}
		seen[key+"|"+r.Phone] = r.Line
		rep.Imported++

		gp := guardians[r.Phone]
		if gp == nil {
			if e, ok := cur.guardians[r.Phone]; ok {
				gp = &guardianPlan{id: e.id, name: e.name, phone: r.Phone}
				if e.name != r.GuardianName {
					gp.name, gp.changed = r.GuardianName, true
				}
			} else {
				gp = &guardianPlan{id: uuid.New(), isNew: true, name: r.GuardianName, phone: r.Phone}
			}
			guardians[r.Phone] = gp
			ch.guardians = append(ch.guardians, gp)
		}

		pr := pair{guardian: gp.id, child: cp.id}
		if !linkDone[pr] {
			linkDone[pr] = true
			if rel, ok := cur.links[pr]; !ok {
				ch.newLinks = append(ch.newLinks, linkPlan{pr, r.Relationship})
			} else if rel != r.Relationship {
				ch.updLinks = append(ch.updLinks, linkPlan{pr, r.Relationship})
			} else {
				rep.Links.Unchanged++
			}
		}
		c := consent{version: r.TextVersion, basis: r.LegalBasis}
		if slices.Contains(cur.consents[pr], c) || consentDone[pr][c] {
			continue
		}
		if consentDone[pr] == nil {
			consentDone[pr] = map[consent]bool{}
		}
		consentDone[pr][c] = true
		ch.consents = append(ch.consents, consentPlan{pr, c})
	}
	for _, c := range ch.children {
		switch {
		case c.isNew:
			rep.Children.Created++
		case c.changed:
			rep.Children.Updated++
		default:
			rep.Children.Unchanged++
		}
		if c.classID == nil {
			rep.Unplaced++
		}
	}
	for _, g := range ch.guardians {
		switch {
		case g.isNew:
			rep.Guardians.Created++
		case g.changed:
			rep.Guardians.Updated++
		default:
			rep.Guardians.Unchanged++
		}
	}
	rep.Links.Created, rep.Links.Updated, rep.Consents = len(ch.newLinks), len(ch.updLinks), len(ch.consents)
	return ch
}

// write applies the changes with one set-based statement per table and kind, in foreign-key
// order, and returns the ids of the children it created or changed.
func (ch *changes) write(ctx context.Context, tx pgx.Tx, church uuid.UUID) ([]uuid.UUID, error) {
	var (
		newIDs, updIDs             []uuid.UUID
		newNames, updNames         []string
		newAllergies, updAllergies []*string
		newNotes, updNotes         []*string
		newBirths                  []time.Time
		newClasses, updClasses     []*uuid.UUID
		targets                    []uuid.UUID
	)
	for _, c := range ch.children {
		switch {
		case c.isNew:
			newIDs, newNames, newBirths, newClasses = append(newIDs, c.id), append(newNames, c.name), append(newBirths, c.birth), append(newClasses, c.classID)
			newAllergies, newNotes = append(newAllergies, c.allergies), append(newNotes, c.medicalNotes)
		case c.changed:
			updIDs, updNames, updClasses = append(updIDs, c.id), append(updNames, c.name), append(updClasses, c.classID)
			updAllergies, updNotes = append(updAllergies, c.allergies), append(updNotes, c.medicalNotes)
		default:
			continue
		}
		targets = append(targets, c.id)
	}
	var (
		gNewIDs, gUpdIDs              []uuid.UUID
		gNewNames, gNewPhones, gUpdNm []string
	)
	for _, g := range ch.guardians {
		switch {
		case g.isNew:
			gNewIDs, gNewNames, gNewPhones = append(gNewIDs, g.id), append(gNewNames, g.name), append(gNewPhones, g.phone)
		case g.changed:
			gUpdIDs, gUpdNm = append(gUpdIDs, g.id), append(gUpdNm, g.name)
		}
	}
	links := func(ls []linkPlan) (gs, cs []uuid.UUID, rels []string) {
		for _, l := range ls {
			gs, cs, rels = append(gs, l.guardian), append(cs, l.child), append(rels, l.relationship)
		}
		return
	}
	lNewG, lNewC, lNewR := links(ch.newLinks)
	lUpdG, lUpdC, lUpdR := links(ch.updLinks)
	var cG, cC []uuid.UUID
	var cV, cB []string
	for _, c := range ch.consents {
		cG, cC, cV, cB = append(cG, c.guardian), append(cC, c.child), append(cV, c.version), append(cB, c.basis)
	}
	steps := []struct {
		n    int
		sql  string
		args []any
	}{
		{len(newIDs), `INSERT INTO children (id, church_id, name, birth_date, class_id, allergies, medical_notes)
			SELECT u.id, $1, u.name, u.birth, u.class, u.allergies, u.notes
			FROM unnest($2::uuid[], $3::text[], $4::date[], $5::uuid[], $6::text[], $7::text[]) AS u(id, name, birth, class, allergies, notes)`,
			[]any{church, newIDs, newNames, newBirths, newClasses, newAllergies, newNotes}},
		{len(updIDs), `UPDATE children c SET name = u.name, class_id = u.class, allergies = u.allergies, medical_notes = u.notes
			FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::text[]) AS u(id, name, class, allergies, notes) WHERE c.church_id = $1 AND c.id = u.id`,
			[]any{church, updIDs, updNames, updClasses, updAllergies, updNotes}},
		{len(gNewIDs), `INSERT INTO guardians (id, church_id, name, phone)
			SELECT u.id, $1, u.name, u.phone FROM unnest($2::uuid[], $3::text[], $4::text[]) AS u(id, name, phone)`,
			[]any{church, gNewIDs, gNewNames, gNewPhones}},
		{len(gUpdIDs), `UPDATE guardians g SET name = u.name
			FROM unnest($2::uuid[], $3::text[]) AS u(id, name) WHERE g.church_id = $1 AND g.id = u.id`,
			[]any{church, gUpdIDs, gUpdNm}},
		{len(lNewG), `INSERT INTO guardian_children (church_id, guardian_id, child_id, relationship)
			SELECT $1, u.g, u.c, u.r FROM unnest($2::uuid[], $3::uuid[], $4::text[]) AS u(g, c, r)`,
			[]any{church, lNewG, lNewC, lNewR}},
		{len(lUpdG), `UPDATE guardian_children gc SET relationship = u.r
			FROM unnest($2::uuid[], $3::uuid[], $4::text[]) AS u(g, c, r)
			WHERE gc.church_id = $1 AND gc.guardian_id = u.g AND gc.child_id = u.c`,
			[]any{church, lUpdG, lUpdC, lUpdR}},
		{len(cG), `INSERT INTO consent_records (church_id, guardian_id, child_id, text_version, legal_basis)
			SELECT $1, u.g, u.c, u.v, u.b FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[]) AS u(g, c, v, b)`,
			[]any{church, cG, cC, cV, cB}},
	}
	for _, s := range steps {
		if s.n == 0 {
			continue
		}
		tag, err := tx.Exec(ctx, s.sql, s.args...)
		if err != nil {
			return nil, err
		}
		if int(tag.RowsAffected()) != s.n {
			return nil, fmt.Errorf("rosterimport: %d rows written where %d were planned", tag.RowsAffected(), s.n)
		}
	}
	return targets, nil
}
