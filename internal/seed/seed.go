package seed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/neemias/neemias-mcp/internal/store"
)

// Defaults of [Options].
const (
	DefaultSeed     uint64 = 0x6e65656d69617321 // "neemias!"
	DefaultMonths          = 6
	DefaultChildren        = 300
	// DemoPassword is the password of every seeded account.
	DemoPassword = "demo"
)

// The demo church and its four well-known accounts, one per role.
var (
	DemoChurchID      = uuid.MustParse("00000000-0000-4000-8000-00000000c001")
	DemoAdminID       = uuid.MustParse("00000000-0000-4000-8000-00000000a001")
	DemoCadastroID    = uuid.MustParse("00000000-0000-4000-8000-00000000a002")
	DemoVoluntarioID  = uuid.MustParse("00000000-0000-4000-8000-00000000a003")
	DemoResponsavelID = uuid.MustParse("00000000-0000-4000-8000-00000000a004")
)

// The emails of the demo accounts.
const (
	DemoAdminEmail       = "admin@demo.neemias.test"
	DemoCadastroEmail    = "cadastro@demo.neemias.test"
	DemoVoluntarioEmail  = "voluntario@demo.neemias.test"
	DemoResponsavelEmail = "responsavel@demo.neemias.test"
)

// DemoChurchSlug is the slug of the demo church; church n (n >= 2) is "demo-n".
const DemoChurchSlug = "demo"

// Options shape the generated data. The zero value means one demo church with ~300 children
// and six months of services up to today.
type Options struct {
	// Churches is how many churches to seed; the first is the demo church. Default 1.
	Churches int
	// Months of weekly Sunday services with attendance, back from Until. Default 6; 0 means
	// no services. Years of history are Months: 12 * years.
	Months int
	// ChildrenPerChurch is the number of children of each church. Default 300.
	ChildrenPerChurch int
	// Until is the day the history ends: the last service is the Sunday on or before it.
	// Default today in Brasília time. Ages are computed on it too.
	Until time.Time
	// Seed is the PRNG seed. Default DefaultSeed. The well-known demo ids do not depend on it.
	Seed uint64
	// Password is the password of every seeded account. Default DemoPassword.
	Password string
}

// Report counts the rows a run inserted (zero for skipped churches).
type Report struct {
	Churches             int64
	ChurchesSkipped      int64
	Users                int64
	Classes              int64
	VolunteerAssignments int64
	Children             int64
	Guardians            int64
	GuardianLinks        int64
	Consents             int64
	PickupAdults         int64
	ServiceDays          int64
	Checkins             int64
	Elapsed              time.Duration
}

// Rows is the total number of rows inserted.
func (r Report) Rows() int64 {
	return r.Churches + r.Users + r.Classes + r.VolunteerAssignments + r.Children + r.Guardians +
		r.GuardianLinks + r.Consents + r.PickupAdults + r.ServiceDays + r.Checkins
}

func (r Report) String() string {
	return fmt.Sprintf("churches=%d (skipped %d) users=%d classes=%d volunteer_assignments=%d "+
		"children=%d guardians=%d guardian_links=%d consents=%d pickup_adults=%d service_days=%d "+
		"checkins=%d rows=%d in %s",
		r.Churches, r.ChurchesSkipped, r.Users, r.Classes, r.VolunteerAssignments, r.Children,
		r.Guardians, r.GuardianLinks, r.Consents, r.PickupAdults, r.ServiceDays, r.Checkins, r.Rows(),
		r.Elapsed.Round(time.Millisecond))
}

func (r *Report) add(o Report) {
	r.Churches += o.Churches
	r.ChurchesSkipped += o.ChurchesSkipped
	r.Users += o.Users
	r.Classes += o.Classes
	r.VolunteerAssignments += o.VolunteerAssignments
	r.Children += o.Children
	r.Guardians += o.Guardians
	r.GuardianLinks += o.GuardianLinks
	r.Consents += o.Consents
	r.PickupAdults += o.PickupAdults
	r.ServiceDays += o.ServiceDays
	r.Checkins += o.Checkins
}

// brasilia is UTC-3, Brasília time (no daylight saving time since 2019).
var brasilia = time.FixedZone("BRT", -3*60*60)

func (o Options) withDefaults() Options {
	if o.Churches == 0 {
		o.Churches = 1
	}
	if o.Months == 0 {
		o.Months = DefaultMonths
	}
	if o.ChildrenPerChurch == 0 {
		o.ChildrenPerChurch = DefaultChildren
	}
	if o.Until.IsZero() {
		o.Until = time.Now().In(brasilia)
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Password == "" {
		o.Password = DemoPassword
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Churches < 1 || o.Churches > 10_000:
		return fmt.Errorf("seed: churches must be 1..10000, got %d", o.Churches)
	case o.Months < 0 || o.Months > 240:
		return fmt.Errorf("seed: months must be 0..240, got %d", o.Months)
	case o.ChildrenPerChurch < 2 || o.ChildrenPerChurch > 100_000:
		return fmt.Errorf("seed: children per church must be 2..100000, got %d", o.ChildrenPerChurch)
	}
	return nil
}

// Demo seeds the demo church with the default options: [Run] with a zero [Options].
func Demo(ctx context.Context, pool *pgxpool.Pool) (Report, error) {
	return Run(ctx, pool, Options{})
}

// Run seeds opts.Churches churches into the migrated database behind pool, each in its own
// transaction (several at once), skipping the ones that exist already, and reports what it
// inserted; after an error, the report counts the churches that were committed. It runs in
// the maintenance context: pool must connect as a role that bypasses row-level security (a
// superuser, or a role with BYPASSRLS), since COPY does not work under row-level security.
func Run(ctx context.Context, pool *pgxpool.Pool, opts Options) (Report, error) {
	start := time.Now()
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return Report{}, err
	}
	var bypass bool
	if err := pool.QueryRow(ctx,
		"SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user").Scan(&bypass); err != nil {
		return Report{}, fmt.Errorf("seed: check role: %w", err)
	}
	if !bypass {
		return Report{}, errors.New("seed: the connecting role must be a superuser or have BYPASSRLS")
	}
	// One hash for all accounts: they share the public demo password, and hashing once keeps
	// seeding fast. The salt derives from the seed, so runs stay reproducible.
	var salt [16]byte
	binary.BigEndian.PutUint64(salt[:8], opts.Seed)
	copy(salt[8:], "neemias!")
	hash := store.HashPasswordWithSalt(opts.Password, salt[:])

	// Churches are independent (ids derive from the church's index, not from the order of
	// work), so several are seeded at once, each in its own transaction on its own connection.
	workers := min(opts.Churches, runtime.GOMAXPROCS(0), int(pool.Config().MaxConns), 8)
	var (
		mu       sync.Mutex
		total    Report
		firstErr error
		next     = make(chan int)
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ci := range next {
				r, err := seedChurch(ctx, pool, generate(opts, ci, hash))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("seed: church %d: %w", ci+1, err)
					cancel()
				}
				total.add(r)
				mu.Unlock()
			}
		}()
	}
feed:
	for ci := range opts.Churches {
		select {
		case next <- ci:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if total.Churches > 0 && firstErr == nil {
		// Fresh statistics, or the planner keeps the empty-table plans: with autovacuum off
		// (or not yet run) the check-ins query stays a nested loop ten times slower.
		if err := store.Analyze(ctx, pool); err != nil {
			firstErr = fmt.Errorf("seed: %w", err)
		}
	}
	total.Elapsed = time.Since(start)
	return total, firstErr
}

// table is the rows of one table, in COPY form.
type table struct {
	name    string
	columns []string
	rows    [][]any
}

// churchData is everything of one church, tables in foreign-key order.
type churchData struct {
	id     uuid.UUID
	tables []*table
}

func seedChurch(ctx context.Context, pool *pgxpool.Pool, d churchData) (Report, error) {
	var r Report
	tx, err := pool.Begin(ctx)
	if err != nil {
		return r, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	// Two seeders of the same church wait for each other; the second finds it and skips.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))", "neemias-seed/"+d.id.String()); err != nil {
		return r, err
	}
	// Demo data can be regenerated: do not wait for the WAL flush at commit.
	if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return r, err
	}
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM churches WHERE id = $1)", d.id).Scan(&exists); err != nil {
		return r, err
	}
	if exists {
		r.ChurchesSkipped = 1
		return r, nil
	}
	for _, t := range d.tables {
		n, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.columns, pgx.CopyFromRows(t.rows))
		if err != nil {
			return Report{}, fmt.Errorf("copy %s: %w", t.name, store.MapError(err))
		}
		switch t.name {
		case "churches":
			r.Churches = n
		case "users":
			r.Users = n
		case "classes":
			r.Classes = n
		case "volunteer_assignments":
			r.VolunteerAssignments = n
		case "children":
			r.Children = n
		case "guardians":
			r.Guardians = n
		case "guardian_children":
			r.GuardianLinks = n
		case "consent_records":
			r.Consents = n
		case "pickup_adults":
			r.PickupAdults = n
		case "service_days":
			r.ServiceDays = n
		case "checkins":
			r.Checkins = n
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return Report{}, err
	}
	return r, nil
}

// idNamespace is the UUIDv5 namespace of the seeded ids.
var idNamespace = uuid.MustParse("7b0c3f0e-5a53-4d0c-9a43-6e65656d6961")

type gen struct {
	ci  int
	ns  uuid.UUID
	rng *rand.Rand
	// pk draws the pick-up data (trusted adults, who took each child home) from a stream of
	// its own, so that adding it left every other seeded row as it was.
	pk   *rand.Rand
	opts Options
}

func (g *gen) id(kind string, idx int) uuid.UUID {
	return uuid.NewSHA1(g.ns, []byte(kind+"/"+itoa(idx)))
}

func itoa(i int) string { return fmt.Sprint(i) }

func (g *gen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

// pickFrom is pick from the pick-up data's stream.
func (g *gen) pickFrom(list []string) string { return list[g.pk.IntN(len(list))] }

// pkPhone is phone from the pick-up data's stream.
func (g *gen) pkPhone() string {
	return fmt.Sprintf("+55 (00) 9%04d-%04d", g.pk.IntN(10000), g.pk.IntN(10000))
}

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

// phone returns an invented mobile number in area code 00, which does not exist.
func (g *gen) phone() string {
	return fmt.Sprintf("+55 (00) 9%04d-%04d", g.rng.IntN(10000), g.rng.IntN(10000))
}

// at returns day d at hh:mm Brasília time.
func at(d time.Time, hh, mm int) time.Time {
	return time.Date(d.Year(), d.Month(), d.Day(), hh, mm, 0, 0, brasilia)
}

// dateOnly returns the calendar date of t in Brasília time, at UTC midnight (the form of a
// PostgreSQL date).
func dateOnly(t time.Time) time.Time {
	t = t.In(brasilia)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// ageOn returns the age in completed years on day d of someone born on birth.
func ageOn(birth, d time.Time) int {
	age := d.Year() - birth.Year()
	if d.Month() < birth.Month() || (d.Month() == birth.Month() && d.Day() < birth.Day()) {
		age--
	}
	return age
}

type person struct {
	id   uuid.UUID
	name string
}

// Children's handles (children.handle, migration 00096) are app_child_handle(n) of a sequence
// value n counting up from 1. Seeded children take theirs from the top of the 30-bit range
// instead, counting down from handleTop by church and index, so they are the same on every
// run, whatever the order churches are seeded in, and never meet the sequence's (which would
// need some 70 million children enrolled through the app to get there).
const (
	handleTop = 1<<30 - 1
	// handleStride is the most children a church may have (Options.validate): church ci takes
	// n = handleTop - ci*handleStride - index, and the ranges of 10,000 churches fit.
	handleStride = 100_000
)

// childHandle is app_child_handle(n) of migration 00096: (n * 625341585 + 98430182) mod 2^30,
// as six Crockford base32 digits, most significant first.
func childHandle(n int64) string {
	const digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	v := (n*625341585 + 98430182) % (1 << 30)
	var b [6]byte
	for i := range 6 {
		b[5-i] = digits[(v>>(5*i))&31]
	}
	return string(b[:])
}

// Pick-up data: each church has trusted adults on some children's lists, one restriction (an
// adult who must not take a child, with the note the volunteer reads) on a child of Jardim,
// the demo volunteer's class, and every historic check-out names who took the child home.
var (
	trustedRelationships = []string{"aunt", "uncle", "grandmother", "grandfather", "godmother", "neighbour", "family friend"}
	restrictionNote      = "Medida protetiva: não entregar a criança a este adulto. Manter na sala e chamar a coordenação."
)

// generate builds church ci (0 is the demo church). Everything random comes from one PRNG
// seeded with (opts.Seed, ci), consumed in a fixed order.
func generate(opts Options, ci int, passwordHash string) churchData {
	seedNS := uuid.NewSHA1(idNamespace, binary.BigEndian.AppendUint64(nil, opts.Seed))
	g := &gen{
		ci:   ci,
		ns:   uuid.NewSHA1(seedNS, []byte("church/"+itoa(ci))),
		rng:  rand.New(rand.NewPCG(opts.Seed, uint64(ci)+1)),
		pk:   rand.New(rand.NewPCG(opts.Seed^0x7069636b75707321, uint64(ci)+1)), // "pickups!"
		opts: opts,
	}
	demo := ci == 0
	until := dateOnly(opts.Until)
	lastSunday := until.AddDate(0, 0, -int(until.Weekday()))
	historyStart := lastSunday.AddDate(0, -opts.Months, 0)
	// Enrollment happened before the history starts.
	enrolledBase := at(historyStart.AddDate(0, 0, -30), 10, 0)

	churchID := g.id("church", 0)
	slug := fmt.Sprintf("demo-%d", ci+1)
	name := fmt.Sprintf("Igreja %s %s (demo %d)", g.pick(churchDenominations), g.pick(churchNames), ci+1)
	if demo {
		churchID, slug = DemoChurchID, DemoChurchSlug
		name = "Igreja Batista Esperança (demo)"
	}
	domain := slug + ".neemias.test"
	created := enrolledBase.AddDate(0, -1, 0)

	churches := &table{name: "churches", columns: []string{"id", "name", "slug", "created_at"}}
	churches.rows = append(churches.rows, []any{churchID, name, slug, created})

	users := &table{name: "users", columns: []string{"id", "church_id", "email", "display_name", "role", "password_hash", "created_at"}}
	addUser := func(id uuid.UUID, email, display, role string) {
		users.rows = append(users.rows, []any{id, churchID, email, display, role, passwordHash, created})
	}
	roleIDs := map[string]uuid.UUID{
		store.RoleAdmin: g.id("user/admin", 0), store.RoleCadastro: g.id("user/cadastro", 0),
		store.RoleVoluntario: g.id("user/voluntario", 0), store.RoleResponsavel: g.id("user/responsavel", 0),
	}
	if demo {
		roleIDs = map[string]uuid.UUID{
			store.RoleAdmin: DemoAdminID, store.RoleCadastro: DemoCadastroID,
			store.RoleVoluntario: DemoVoluntarioID, store.RoleResponsavel: DemoResponsavelID,
		}
	}
	adminID, cadastroID := roleIDs[store.RoleAdmin], roleIDs[store.RoleCadastro]
	volunteerID, responsavelID := roleIDs[store.RoleVoluntario], roleIDs[store.RoleResponsavel]
	// The guardian account's name is the guardian's, fixed below with family 0.
	momFirst, momSurname := g.pick(womanNames), g.pick(surnames)
	responsavelName := momFirst + " " + momSurname
	addUser(adminID, "admin@"+domain, g.pick(manNames)+" "+g.pick(surnames), store.RoleAdmin)
	addUser(cadastroID, "cadastro@"+domain, g.pick(womanNames)+" "+g.pick(surnames), store.RoleCadastro)
	addUser(volunteerID, "voluntario@"+domain, g.pick(womanNames)+" "+g.pick(surnames), store.RoleVoluntario)
	addUser(responsavelID, "responsavel@"+domain, responsavelName, store.RoleResponsavel)

	classes := &table{name: "classes", columns: []string{"id", "church_id", "name", "min_age", "max_age", "created_at"}}
	classIDs := make([]uuid.UUID, len(classLadder))
	for i, c := range classLadder {
		classIDs[i] = g.id("class", i)
		classes.rows = append(classes.rows, []any{classIDs[i], churchID, c.name, int32(c.minAge), int32(c.maxAge), created})
	}
	classFor := func(age int) int {
		for i, c := range classLadder {
			if age >= c.minAge && age <= c.maxAge {
				return i
			}
		}
		return -1
	}

	// Volunteers: the well-known one serves Jardim and Primários; each class has one more.
	assignments := &table{name: "volunteer_assignments", columns: []string{"user_id", "class_id", "church_id", "created_at"}}
	classVolunteers := make([][]uuid.UUID, len(classLadder))
	for _, i := range []int{2, 3} {
		assignments.rows = append(assignments.rows, []any{volunteerID, classIDs[i], churchID, created})
		classVolunteers[i] = append(classVolunteers[i], volunteerID)
	}
	for i := range classLadder {
		id := g.id("user/volunteer", i)
		addUser(id, fmt.Sprintf("voluntario.%d@%s", i+1, domain), g.pick(womanNames)+" "+g.pick(surnames), store.RoleVoluntario)
		assignments.rows = append(assignments.rows, []any{id, classIDs[i], churchID, created})
		classVolunteers[i] = append(classVolunteers[i], id)
	}

	children := &table{name: "children", columns: []string{"id", "church_id", "name", "birth_date", "class_id", "created_at", "created_by", "handle"}}
	guardians := &table{name: "guardians", columns: []string{"id", "church_id", "user_id", "name", "phone", "created_at"}}
	links := &table{name: "guardian_children", columns: []string{"guardian_id", "child_id", "church_id", "relationship", "created_at"}}
	consents := &table{name: "consent_records", columns: []string{"id", "church_id", "guardian_id", "child_id", "granted_at", "text_version", "legal_basis", "granted_by"}}

	type child struct {
		id      uuid.UUID
		birth   time.Time
		class   int
		rate    float64
		created time.Time
		family  int
		// guardians may take the child home; trusted is the adult on the child's list, if any.
		guardians []person
		trusted   *person
	}
	var kids []child
	nGuardians, nAccounts := 0, 0
	for family := 0; len(kids) < opts.ChildrenPerChurch; family++ {
		size := 1
		switch r := g.rng.Float64(); {
		case r < 0.15:
			size = 3
		case r < 0.5:
			size = 2
		}
		if family == 0 {
			size = 2
		}
		size = min(size, opts.ChildrenPerChurch-len(kids))
		enrolled := enrolledBase.Add(-time.Duration(g.rng.IntN(365*24)) * time.Hour)
		fatherSurname := g.pick(surnames)
		motherSurname := g.pick(surnames)
		// Guardians: usually the mother, often the father, otherwise a grandmother or a legal
		// guardian. The demo guardian account is the mother of family 0.
		type guardian struct {
			person
			relationship string
		}
		var gs []guardian
		newGuardian := func(name, relationship string, userID *uuid.UUID) {
			id := g.id("guardian", nGuardians)
			nGuardians++
			guardians.rows = append(guardians.rows, []any{id, churchID, userID, name, g.phone(), enrolled})
			gs = append(gs, guardian{person{id, name}, relationship})
		}
		account := func(name string) *uuid.UUID {
			if !g.chance(0.25) {
				return nil
			}
			id := g.id("user/guardian", nAccounts)
			nAccounts++
			addUser(id, fmt.Sprintf("responsavel.%d@%s", nAccounts, domain), name, store.RoleResponsavel)
			return &id
		}
		if family == 0 {
			motherSurname = momSurname
			newGuardian(momFirst+" "+motherSurname, "mother", &responsavelID)
			newGuardian(g.pick(manNames)+" "+fatherSurname, "father", nil)
		} else {
			mother, father := g.chance(0.85), g.chance(0.55)
			if mother {
				n := g.pick(womanNames) + " " + motherSurname
				newGuardian(n, "mother", account(n))
			}
			if father {
				n := g.pick(manNames) + " " + fatherSurname
				newGuardian(n, "father", account(n))
			}
			if !mother && !father {
				if g.chance(0.6) {
					n := g.pick(grandmaNames) + " " + motherSurname
					newGuardian(n, "grandparent", account(n))
				} else {
					n := g.pick(womanNames) + " " + g.pick(surnames)
					newGuardian(n, "legal_guardian", account(n))
				}
			}
		}
		for k := range size {
			idx := len(kids)
			var birth time.Time
			if family == 0 {
				// The demo guardian's children: 4 and 8 years old, in Maternal and Primários.
				birth = until.AddDate(-4-4*k, 0, -40-k*77)
			} else {
				birth = until.AddDate(0, 0, -g.rng.IntN(13*365-1)-1)
			}
			first := g.pick(girlNames)
			if g.chance(0.5) {
				first = g.pick(boyNames)
			}
			c := child{
				id:      g.id("child", idx),
				birth:   birth,
				class:   classFor(ageOn(birth, until)),
				rate:    0.35 + 0.55*g.rng.Float64(),
				created: enrolled.Add(time.Duration(k) * time.Minute),
				family:  family,
			}
			var classID *uuid.UUID
			if c.class >= 0 {
				classID = &classIDs[c.class]
			}
			handle := childHandle(int64(handleTop - ci*handleStride - idx))
			children.rows = append(children.rows, []any{c.id, churchID, first + " " + motherSurname + " " + fatherSurname, birth, classID, c.created, cadastroID, handle})
			for _, gd := range gs {
				links.rows = append(links.rows, []any{gd.id, c.id, churchID, gd.relationship, c.created})
				c.guardians = append(c.guardians, gd.person)
			}
			kids = append(kids, c)
			// The enrolling guardian's consent, recorded by the registration desk.
			consents.rows = append(consents.rows, []any{g.id("consent", idx), churchID, gs[0].id, c.id, c.created, "2025-01", "consent", cadastroID})
		}
	}

	// Pick-up lists. The demo guardian added her mother as a trusted adult of both her
	// children; the desk added one for every tenth child of Jardim and Primários (the demo
	// volunteer's classes) and recorded one restriction, on the first child of Jardim.
	pickups := &table{name: "pickup_adults", columns: []string{
		"id", "church_id", "child_id", "name", "relationship", "phone", "authorized", "note", "created_at", "created_by",
	}}
	grandma := g.pickFrom(grandmaNames) + " " + momSurname
	grandmaPhone := g.pkPhone()
	// named reports whether name is one of c's guardians' (a list holds each adult once).
	named := func(c *child, name string) bool {
		for _, gd := range c.guardians {
			if gd.name == name {
				return true
			}
		}
		return false
	}
	restricted := false
	for idx := range kids {
		c := &kids[idx]
		switch {
		case c.family == 0:
			if named(c, grandma) {
				continue
			}
			c.trusted = &person{g.id("pickup_adult", idx), grandma}
			pickups.rows = append(pickups.rows, []any{c.trusted.id, churchID, c.id, grandma, "grandmother", grandmaPhone, true, nil, enrolledBase, responsavelID})
		case c.class == 2 && !restricted:
			name := g.pickFrom(manNames) + " " + g.pickFrom(surnames)
			if named(c, name) {
				continue
			}
			restricted = true
			pickups.rows = append(pickups.rows, []any{g.id("pickup_restriction", idx), churchID, c.id, name, "mother's ex-partner", nil, false, restrictionNote, enrolledBase, cadastroID})
		case (c.class == 2 || c.class == 3) && idx%10 == 3:
			name := g.pickFrom(womanNames) + " " + g.pickFrom(surnames)
			if g.pk.IntN(3) == 0 {
				name = g.pickFrom(manNames) + " " + g.pickFrom(surnames)
			}
			rel := trustedRelationships[g.pk.IntN(len(trustedRelationships))]
			if named(c, name) {
				continue
			}
			c.trusted = &person{g.id("pickup_adult", idx), name}
			pickups.rows = append(pickups.rows, []any{c.trusted.id, churchID, c.id, name, rel, nil, true, nil, enrolledBase, cadastroID})
		}
	}

	days := &table{name: "service_days", columns: []string{"id", "church_id", "service_date", "created_at"}}
	checkins := &table{name: "checkins", columns: []string{
		"id", "church_id", "child_id", "class_id", "service_date", "checked_in_at", "checked_in_by",
		"pickup_code_salt", "pickup_code_hash", "checked_out_at", "checked_out_by",
		"picked_up_by_guardian", "picked_up_by_adult", "picked_up_by_name",
	}}
	var sundays []time.Time
	for d := lastSunday; d.After(historyStart); d = d.AddDate(0, 0, -7) {
		sundays = append(sundays, d)
	}
	for i := len(sundays) - 1; i >= 0; i-- { // oldest first
		day := sundays[i]
		dayKey := day.Format("2006-01-02")
		days.rows = append(days.rows, []any{g.id("service_day/"+dayKey, 0), churchID, day, at(day, 8, 0)})
		for idx, c := range kids {
			if c.class < 0 || !day.After(c.birth) || !g.chance(c.rate) {
				continue
			}
			in := at(day, 9, 0).Add(time.Duration(g.rng.IntN(30*60)) * time.Second)
			out := at(day, 10, 45).Add(time.Duration(g.rng.IntN(30*60)) * time.Second)
			staff := append([]uuid.UUID{cadastroID}, classVolunteers[c.class]...)
			inBy, outBy := staff[g.rng.IntN(len(staff))], staff[g.rng.IntN(len(staff))]
			var salt [16]byte
			binary.BigEndian.PutUint64(salt[:8], g.rng.Uint64())
			binary.BigEndian.PutUint64(salt[8:], g.rng.Uint64())
			code := fmt.Sprintf("%06d", g.rng.IntN(1_000_000))
			// Who took the child home: mostly the first guardian, sometimes another, now and
			// then the trusted adult.
			var byGuardian, byAdult *uuid.UUID
			var byName string
			switch r := g.pk.Float64(); {
			case c.trusted != nil && r < 0.2:
				byAdult, byName = &c.trusted.id, c.trusted.name
			case len(c.guardians) > 1 && r < 0.5:
				gd := c.guardians[1+g.pk.IntN(len(c.guardians)-1)]
				byGuardian, byName = &gd.id, gd.name
			default:
				byGuardian, byName = &c.guardians[0].id, c.guardians[0].name
			}
			checkins.rows = append(checkins.rows, []any{
				g.id("checkin/"+dayKey, idx), churchID, c.id, classIDs[c.class], day, in, inBy,
				salt[:], store.HashPickupCode(salt[:], code), out, outBy, byGuardian, byAdult, byName,
			})
		}
	}
	return churchData{id: churchID, tables: []*table{
		churches, users, classes, assignments, children, guardians, links, consents, pickups, days, checkins,
	}}
}
