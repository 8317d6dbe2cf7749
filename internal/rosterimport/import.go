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
	"github.com/nyaruka/phonenumbers"

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
	// DateOrder (--date-order: dmy, mdy, ymd; empty: detected), DefaultCountry (--default-country,
	// ISO 3166; empty: BR) and ConsentVersion (--consent-version: the registered consent text a
	// "yes" cell refers to) are the operator's statements about the file; see [ParseOptions].
	DateOrder, DefaultCountry, ConsentVersion string
}

// Counts of one kind of record.
type Counts struct{ Created, Updated, Unchanged int }

// Report is what a run did (or, for a dry run, would do).
type Report struct {
	Church    string
	DryRun    bool
	Encoding  string
	Separator rune
	// HeaderRow is the spreadsheet row of the header; DateOrder the order its dates were read in.
	HeaderRow int
	DateOrder string
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
	// Warnings are rows imported with something to check (by row number, never a value).
	Warnings []Warning
	// Committed: the changes are in the database (false for a dry run and a refused file).
	Committed bool
	Elapsed   time.Duration
}

// ErrRefusedRows is returned (with the report) by a strict run with refused rows.
var ErrRefusedRows = errors.New("rows were refused and --strict is set: nothing was imported")

// errRollback ends a dry run's transaction (InChurch).
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
	committed, err := InChurch(ctx, st, opts.Church, opts.DryRun, AuditAction, func(ctx context.Context, tx pgx.Tx, ch onboard.Church, today time.Time) ([]uuid.UUID, error) {
		rep = &Report{Church: opts.Church, DryRun: opts.DryRun}
		if opts.ConsentVersion != "" {
			if err := checkConsentText(ctx, tx, ch, opts.ConsentVersion); err != nil {
				return nil, err
			}
		}
		f, err := Parse(bytes.NewReader(raw), today, ParseOptions{DateOrder: opts.DateOrder, DefaultCountry: opts.DefaultCountry, ConsentVersion: opts.ConsentVersion})
		if err != nil {
			return nil, err
		}
		rep.Encoding, rep.Separator, rep.Columns, rep.Ignored, rep.Lines = f.Encoding, f.Separator, f.Columns, f.Ignored, f.Lines
		rep.HeaderRow, rep.DateOrder = f.HeaderRow, f.DateOrder
		rep.Refused = append(rep.Refused, f.Refused...)
		rep.Warnings = append(rep.Warnings, f.Warnings...)
		region, _ := checkRegion(opts.DefaultCountry)
		cur, err := load(ctx, tx, ch.ID, region)
		if err != nil {
			return nil, err
		}
		_, hasRelationship := f.Columns[FieldRelationship]
		p := plan(cur, f.Rows, today, rep, hasRelationship)
		slices.SortStableFunc(rep.Refused, func(a, b Refusal) int { return a.Line - b.Line })
		slices.SortStableFunc(rep.Warnings, func(a, b Warning) int { return a.Line - b.Line })
		if opts.Strict && len(rep.Refused) > 0 {
			return nil, ErrRefusedRows
		}
		return p.write(ctx, tx, ch.ID)
	})
	if rep != nil {
		rep.Elapsed = time.Since(start)
		rep.Committed = committed
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

// InChurch runs one import into the church slug: one maintenance transaction that holds the
// church's import lock (LockChurch) and knows the church's today, in which fn reads the file
// against the church's records and writes; the records fn returns are audited as action. A dry
// run rolls back everything fn wrote. committed says whether the changes are in the database.
// Every importer runs through it, so all of them lock, audit and roll back alike.
func InChurch(ctx context.Context, st *store.Store, slug string, dryRun bool, action string,
	fn func(ctx context.Context, tx pgx.Tx, ch onboard.Church, today time.Time) ([]uuid.UUID, error)) (committed bool, err error) {
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := onboard.ChurchBySlug(ctx, tx, slug)
		if err != nil {
			return err
		}
		if err := LockChurch(ctx, tx, ch.ID); err != nil {
			return err
		}
		var today time.Time
		if err := tx.QueryRow(ctx, `SELECT (now() AT TIME ZONE time_zone)::date FROM churches WHERE id = $1`, ch.ID).Scan(&today); err != nil {
			return err
		}
		targets, err := fn(ctx, tx, ch, today)
		if err != nil {
			return err
		}
		if dryRun {
			return errRollback
		}
		return audit.InsertOperator(ctx, db.New(tx), ch.ID, audit.Entry{
			Capability: onboard.Capability, Action: action, Targets: append([]uuid.UUID{ch.ID}, targets...), Outcome: audit.Allowed,
		})
	})
	if errors.Is(err, errRollback) {
		return false, nil
	}
	return err == nil, err
}

// LockChurch takes the church's import lock for the rest of tx: two imports into one church
// (a roster, its attendance) wait for each other instead of racing on the matching.
func LockChurch(ctx context.Context, tx pgx.Tx, church uuid.UUID) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))`, "neemias-import/"+church.String())
	return err
}

// checkConsentText makes sure --consent-version names a consent text the church registered.
func checkConsentText(ctx context.Context, tx pgx.Tx, ch onboard.Church, version string) error {
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM consent_texts WHERE church_id = $1 AND version = $2)`, ch.ID, version).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("--consent-version %q: church %s has no consent text with this version; register it with neemias-mcp consent-text add --church %s --version %s --title TITLE (consent-text list shows them)",
			version, ch.Slug, ch.Slug, version)
	}
	return nil
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
	id          uuid.UUID
	name, phone string
}

type pair struct{ guardian, child uuid.UUID }

type consent struct{ version, basis string }

// current is what the church has before the run.
type current struct {
	classes   []class
	children  map[string][]child     // by childKey
	guardians map[string][]*guardian // by E.164 phone, oldest first
	byID      map[uuid.UUID]*guardian
	// childGuardians are the guardians linked to each child.
	childGuardians map[uuid.UUID][]uuid.UUID
	links          map[pair]string
	consents       map[pair][]consent // active ones
}

func childKey(name string, birth time.Time) string {
	return fold(name) + "|" + birth.Format(time.DateOnly)
}

func load(ctx context.Context, tx pgx.Tx, church uuid.UUID, region string) (*current, error) {
	c := &current{children: map[string][]child{}, guardians: map[string][]*guardian{}, byID: map[uuid.UUID]*guardian{},
		childGuardians: map[uuid.UUID][]uuid.UUID{}, links: map[pair]string{}, consents: map[pair][]consent{}}
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
	var g guardian
	if _, err := pgx.ForEachRow(rows, []any{&g.id, &g.name, &g.phone}, func() error {
		// Guardians enrolled by hand may have their phone in another format.
		e := g
		if n, err := phonenumbers.Parse(e.phone, region); err == nil && phonenumbers.IsValidNumber(n) {
			e.phone = phonenumbers.Format(n, phonenumbers.E164)
		}
		c.guardians[e.phone] = append(c.guardians[e.phone], &e)
		c.byID[e.id] = &e
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
		c.childGuardians[pr.child] = append(c.childGuardians[pr.child], pr.guardian)
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
	was            string // the enrolled name
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

// Warnings of the matching.
var (
	warnHomonym = Reason{"uma criança com o mesmo nome e a mesma data de nascimento já está cadastrada com outros responsáveis: esta foi cadastrada como outra criança; se for a mesma, junte os registros",
		"a child with the same name and birth date is enrolled with other guardians: this one was enrolled as another child; if it is the same child, merge the records"}
	warnOtherPhone = Reason{"um responsável com este nome já está ligado à criança com outro telefone: foi criado outro registro de responsável; se o telefone mudou, corrija-o no cadastro",
		"a guardian with this name is linked to the child with another phone: another guardian record was created; if the phone changed, correct it in the roster"}
)

// plan matches the valid rows against the church's records (the rules are in the package
// doc), refusing the rows it cannot place, and fills in the report's counts. hasRelationship
// says whether the file has a relationship column (without one, links keep their values).
func plan(cur *current, rows []Row, today time.Time, rep *Report, hasRelationship bool) *changes {
	ch := &changes{}
	refuseRow := func(line int, pt, en string) { rep.Refused = append(rep.Refused, refuse(line, pt, en)) }

	// 1. The explicit class of each row.
	type placed struct {
		Row
		explicit *class
		g        *guardianPlan
		child    *child     // the enrolled child it matches, or nil
		newChild *childPlan // the new child it makes, or nil
	}
	var ps []*placed
	for _, r := range rows {
		p := &placed{Row: r}
		if r.Class != "" {
			for i := range cur.classes {
				if cur.classes[i].folded == fold(r.Class) {
					p.explicit = &cur.classes[i]
				}
			}
			if p.explicit == nil {
				refuseRow(r.Line, "a turma da coluna de turma não existe nesta igreja; corrija o nome ou crie-a (neemias-mcp class add)",
					"the class in the class column does not exist in this church; fix the name or create it (neemias-mcp class add)")
				continue
			}
			if p.explicit.archived {
				refuseRow(r.Line, "a turma da coluna de turma está arquivada", "the class in the class column is archived")
				continue
			}
		}
		ps = append(ps, p)
	}

	// 2. Guardians: a person is a name and a phone. An enrolled guardian with this phone is
	// the row's guardian when the names are one person's (samePerson), else the row brings a
	// new guardian sharing the phone.
	existingPlan := map[uuid.UUID]*guardianPlan{}
	newByPhone := map[string][]*guardianPlan{}
	for _, p := range ps {
		var match *guardian
		for _, e := range cur.guardians[p.Phone] {
			if fold(e.name) == fold(p.GuardianName) {
				match = e
				break
			}
		}
		if match == nil {
			for _, e := range cur.guardians[p.Phone] {
				if samePerson(e.name, p.GuardianName) {
					match = e
					break
				}
			}
		}
		if match != nil {
			if p.g = existingPlan[match.id]; p.g == nil {
				p.g = &guardianPlan{id: match.id, name: match.name, phone: p.Phone, was: match.name}
				existingPlan[match.id] = p.g
			}
			continue
		}
		for _, gp := range newByPhone[p.Phone] {
			if samePerson(gp.name, p.GuardianName) {
				p.g = gp
				break
			}
		}
		if p.g == nil {
			p.g = &guardianPlan{id: uuid.New(), isNew: true, name: p.GuardianName, phone: p.Phone}
			newByPhone[p.Phone] = append(newByPhone[p.Phone], p.g)
		}
	}

	// 3. Children: the rows of one name and birth date are one child of the file. An
	// enrolled child with that name and birth date is theirs when it has a guardian in common
	// with one of the rows (the same guardian, or a guardian of the same name with another
	// phone); without one it is another family's child, and the rows make a new child.
	var keys []string
	groups := map[string][]*placed{}
	for _, p := range ps {
		k := childKey(p.ChildName, p.BirthDate)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
	}
	var kept []*placed
	for _, k := range keys {
		cands := cur.children[k]
		anchored := map[uuid.UUID]*child{}
		var loose []*placed
		for _, p := range groups[k] {
			for i := range cands {
				c := &cands[i]
				if !p.g.isNew {
					if _, ok := cur.links[pair{p.g.id, c.id}]; ok {
						p.child = c
						break
					}
				}
			}
			if p.child == nil {
				for i := range cands {
					c := &cands[i]
					for _, gid := range cur.childGuardians[c.id] {
						if e := cur.byID[gid]; e.phone != p.Phone && samePerson(e.name, p.GuardianName) {
							p.child = c
							rep.Warnings = append(rep.Warnings, Warning{p.Line, warnOtherPhone})
							break
						}
					}
					if p.child != nil {
						break
					}
				}
			}
			if p.child != nil {
				anchored[p.child.id] = p.child
			} else {
				loose = append(loose, p)
			}
		}
		var newChild *childPlan
		for _, p := range loose {
			switch {
			case len(anchored) == 1:
				for _, c := range anchored {
					p.child = c
				}
			case len(anchored) > 1:
				refuseRow(p.Line, "há mais de uma criança cadastrada com este nome e esta data de nascimento, de famílias diferentes, e o responsável desta linha não está ligado a nenhuma delas; importe esta linha num arquivo à parte",
					"more than one enrolled child of different families has this name and birth date, and this row's guardian is linked to none of them; import this row in a file of its own")
				continue
			case len(cands) == 1 && len(cur.childGuardians[cands[0].id]) == 0:
				p.child = &cands[0]
			default:
				if newChild == nil {
					newChild = &childPlan{id: uuid.New(), isNew: true, name: p.ChildName, birth: p.BirthDate}
				}
				p.newChild = newChild
				if len(cands) > 0 {
					rep.Warnings = append(rep.Warnings, Warning{p.Line, warnHomonym})
				}
			}
		}
		for _, p := range groups[k] {
			if p.child != nil || p.newChild != nil {
				kept = append(kept, p)
			}
		}
	}
	slices.SortStableFunc(kept, func(a, b *placed) int { return a.Line - b.Line })

	// 4. The changes, in the file's order.
	children := map[uuid.UUID]*childPlan{}
	guardianDone := map[*guardianPlan]bool{}
	seen := map[pair]int{}
	linkDone := map[pair]bool{}
	consentDone := map[pair]map[consent]bool{}
	for _, p := range kept {
		r := p.Row
		cid := uuid.Nil
		if p.child != nil {
			cid = p.child.id
		} else {
			cid = p.newChild.id
		}
		pr := pair{guardian: p.g.id, child: cid}
		if first, dup := seen[pr]; dup {
			refuseRow(r.Line, fmt.Sprintf("repete a linha %d (mesma criança, mesmo responsável)", first),
				fmt.Sprintf("repeats line %d (same child, same guardian)", first))
			continue
		}
		seen[pr] = r.Line
		rep.Imported++

		if !guardianDone[p.g] {
			guardianDone[p.g] = true
			ch.guardians = append(ch.guardians, p.g)
		}
		if betterName(p.g.name, r.GuardianName) && samePerson(p.g.name, r.GuardianName) {
			p.g.name = r.GuardianName
			p.g.changed = !p.g.isNew && p.g.name != p.g.was
		}

		cp := children[cid]
		if cp == nil {
			if p.newChild != nil {
				cp = p.newChild
				health(&cp.allergies, r.Allergies)
				health(&cp.medicalNotes, r.MedicalNotes)
				if p.explicit != nil {
					cp.classID = &p.explicit.id
				} else {
					cp.classID = cur.byAge(r.BirthDate, today)
				}
			} else {
				e := p.child
				cp = &childPlan{id: e.id, name: e.name, birth: r.BirthDate, classID: e.classID, allergies: e.allergies, medicalNotes: e.medicalNotes}
				if betterName(e.name, r.ChildName) {
					cp.name, cp.changed = r.ChildName, true
				}
				if a, m := health(&cp.allergies, r.Allergies), health(&cp.medicalNotes, r.MedicalNotes); a || m {
					cp.changed = true
				}
				switch {
				case p.explicit != nil:
					if e.classID == nil || *e.classID != p.explicit.id {
						cp.classID, cp.changed = &p.explicit.id, true
					}
				case e.classID == nil:
					if byAge := cur.byAge(r.BirthDate, today); byAge != nil {
						cp.classID, cp.changed = byAge, true
					}
				}
			}
			children[cid] = cp
			ch.children = append(ch.children, cp)
		}

		if !linkDone[pr] {
			linkDone[pr] = true
			if rel, ok := cur.links[pr]; !ok {
				rel := r.Relationship
				if rel == "" {
					rel = "other"
				}
				ch.newLinks = append(ch.newLinks, linkPlan{pr, rel})
			} else if hasRelationship && r.Relationship != "" && rel != r.Relationship {
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
