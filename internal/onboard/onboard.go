package onboard

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/password"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Capability is the audit_log.capability of every operator action; the action says which
// ("church.create", "user.add", ...).
const Capability = "operator"

// Church is a church as the operator sees it.
type Church struct {
	ID        uuid.UUID
	Name      string
	Slug      string
	TimeZone  string
	CreatedAt time.Time
}

// NewChurch is what `church create` asks for.
type NewChurch struct {
	Name, Slug string
	// TimeZone is an IANA zone; empty means DefaultTimeZone.
	TimeZone string
}

// DefaultTimeZone is the time zone of a church created without one.
const DefaultTimeZone = "America/Sao_Paulo"

// slugRE is the schema's check on churches.slug.
var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// CreateChurch creates a church. The slug is how every other command names it.
func CreateChurch(ctx context.Context, st *store.Store, in NewChurch) (Church, error) {
	in.Name = squeeze(in.Name)
	in.Slug = strings.TrimSpace(in.Slug)
	if in.TimeZone == "" {
		in.TimeZone = DefaultTimeZone
	}
	if n := utf8.RuneCountInString(in.Name); n < 1 || n > 200 {
		return Church{}, errors.New("--name: give the church's name (1 to 200 characters)")
	}
	if !slugRE.MatchString(in.Slug) {
		return Church{}, fmt.Errorf("--slug %q: use 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit (for example igreja-central)", in.Slug)
	}
	if err := checkTimeZone(in.TimeZone); err != nil {
		return Church{}, err
	}
	var c Church
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM churches WHERE slug = $1)`, in.Slug).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return errSlugTaken(in.Slug)
		}
		if err := tx.QueryRow(ctx, `INSERT INTO churches (name, slug, time_zone) VALUES ($1, $2, $3)
			RETURNING id, name, slug, time_zone, created_at`, in.Name, in.Slug, in.TimeZone).
			Scan(&c.ID, &c.Name, &c.Slug, &c.TimeZone, &c.CreatedAt); err != nil {
			return err
		}
		return record(ctx, tx, c.ID, "church.create", c.ID)
	})
	if store.IsUniqueViolation(err, "churches_slug_key") {
		return Church{}, errSlugTaken(in.Slug)
	}
	if err != nil {
		return Church{}, err
	}
	return c, nil
}

func errSlugTaken(slug string) error {
	return fmt.Errorf("a church with slug %q exists already; choose another --slug", slug)
}

// checkTimeZone accepts IANA zone names ("America/Sao_Paulo", "America/Manaus", "UTC"); the
// schema's check (now() AT TIME ZONE time_zone) repeats it on the database's zone data.
func checkTimeZone(tz string) error {
	if tz == "Local" || strings.TrimSpace(tz) != tz {
		return fmt.Errorf("--time-zone %q: give an IANA time zone such as America/Sao_Paulo", tz)
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return fmt.Errorf("--time-zone %q is not a known IANA time zone (for example America/Sao_Paulo, America/Manaus, America/Recife)", tz)
	}
	return nil
}

// ListChurches lists every church, by slug.
func ListChurches(ctx context.Context, st *store.Store) ([]Church, error) {
	var out []Church
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, name, slug, time_zone, created_at FROM churches ORDER BY slug`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Church, error) {
			var c Church
			return c, r.Scan(&c.ID, &c.Name, &c.Slug, &c.TimeZone, &c.CreatedAt)
		})
		return err
	})
	return out, err
}

// ChurchBySlug returns the church with this slug, within tx.
func ChurchBySlug(ctx context.Context, tx pgx.Tx, slug string) (Church, error) {
	var c Church
	err := tx.QueryRow(ctx, `SELECT id, name, slug, time_zone, created_at FROM churches WHERE slug = $1`, strings.TrimSpace(slug)).
		Scan(&c.ID, &c.Name, &c.Slug, &c.TimeZone, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Church{}, fmt.Errorf("--church: no church with slug %q (neemias-mcp church list shows them; church create makes one)", slug)
	}
	return c, err
}

// User is an account of a church, without its password hash.
type User struct {
	ID          uuid.UUID
	Email       string
	DisplayName string
	Role        string
	HasPassword bool
	// LinkUntil is when the account's usable set-password link expires (nil: none; listed by
	// [ListUsers] only).
	LinkUntil  *time.Time
	CreatedAt  time.Time
	DisabledAt *time.Time
}

// NewUser is what `user add` asks for.
type NewUser struct {
	Email string
	// DisplayName defaults to the part of the email before the @.
	DisplayName string
	// Role is one of the spec's roles (gen/scopes.Roles).
	Role string
}

// CheckRole accepts the spec's roles only, upper-cased ("admin" is ADMIN).
func CheckRole(role string) (string, error) {
	r := strings.ToUpper(strings.TrimSpace(role))
	if _, ok := scopes.RoleScopes(r); !ok || !store.ValidRole(r) {
		return "", fmt.Errorf("--role %q: use one of %s", role, strings.Join(scopes.Roles(), ", "))
	}
	return r, nil
}

// CheckEmail normalizes an email address (trimmed, lower case) and refuses what is not one.
func CheckEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || a.Name != "" || len(e) > 320 {
		return "", fmt.Errorf("--email %q is not an email address (name@example.org)", email)
	}
	return e, nil
}

// AddUser adds an account to the church with this slug. It has no password: for a local
// login use [AddLocalUser] (a one-time set-password link) or [SetPassword]; for a login
// through the church's provider, link an upstream identity (neemias-mcp identity link).
func AddUser(ctx context.Context, st *store.Store, churchSlug string, in NewUser) (User, error) {
	return addUser(ctx, st, churchSlug, in, nil)
}

// addUser adds the account and runs then (if set) in the same transaction.
func addUser(ctx context.Context, st *store.Store, churchSlug string, in NewUser, then func(ctx context.Context, tx pgx.Tx, ch Church, u User) error) (User, error) {
	email, err := CheckEmail(in.Email)
	if err != nil {
		return User{}, err
	}
	role, err := CheckRole(in.Role)
	if err != nil {
		return User{}, err
	}
	name := squeeze(in.DisplayName)
	if name == "" {
		name, _, _ = strings.Cut(email, "@")
	}
	if n := utf8.RuneCountInString(name); n > 200 {
		return User{}, errors.New("--name: at most 200 characters")
	}
	var u User
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		if _, err := userByEmail(ctx, tx, ch, email); err == nil {
			return errEmailTaken(email, ch.Slug)
		} else if !errors.Is(err, errNoUser) {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO users (church_id, email, display_name, role) VALUES ($1, $2, $3, $4)
			RETURNING id, email, display_name, role, created_at`, ch.ID, email, name, role).
			Scan(&u.ID, &u.Email, &u.DisplayName, &u.Role, &u.CreatedAt); err != nil {
			return err
		}
		if err := record(ctx, tx, ch.ID, "user.add", u.ID); err != nil {
			return err
		}
		if then != nil {
			return then(ctx, tx, ch, u)
		}
		return nil
	})
	if store.IsUniqueViolation(err, "users_church_email_key") {
		return User{}, errEmailTaken(email, churchSlug)
	}
	return u, err
}

func errEmailTaken(email, slug string) error {
	return fmt.Errorf("church %q has an account with email %q already (neemias-mcp user list --church %s)", slug, email, slug)
}

var errNoUser = errors.New("no such user")

func userByEmail(ctx context.Context, tx pgx.Tx, ch Church, email string) (User, error) {
	var u User
	err := tx.QueryRow(ctx, `SELECT id, email, display_name, role, password_hash IS NOT NULL, created_at, disabled_at
		FROM users WHERE church_id = $1 AND email = $2`, ch.ID, email).
		Scan(&u.ID, &u.Email, &u.DisplayName, &u.Role, &u.HasPassword, &u.CreatedAt, &u.DisabledAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, errNoUser
	}
	return u, err
}

// findUser is userByEmail with the operator's message for a missing account.
func findUser(ctx context.Context, tx pgx.Tx, ch Church, email string) (User, error) {
	e, err := CheckEmail(email)
	if err != nil {
		return User{}, err
	}
	u, err := userByEmail(ctx, tx, ch, e)
	if errors.Is(err, errNoUser) {
		return User{}, fmt.Errorf("church %q has no account with email %q (neemias-mcp user list --church %s)", ch.Slug, e, ch.Slug)
	}
	return u, err
}

// ListUsers lists the accounts of the church with this slug, by role then email.
func ListUsers(ctx context.Context, st *store.Store, churchSlug string) ([]User, error) {
	var out []User
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT u.id, u.email, u.display_name, u.role, u.password_hash IS NOT NULL, u.created_at, u.disabled_at,
				(SELECT max(c.expires_at) FROM password_setup_codes c WHERE c.church_id = u.church_id AND c.user_id = u.id
					AND c.used_at IS NULL AND c.revoked_at IS NULL AND c.expires_at > now())
			FROM users u WHERE u.church_id = $1
			ORDER BY array_position(ARRAY['ADMIN', 'CADASTRO', 'VOLUNTARIO', 'RESPONSAVEL'], u.role), u.email`, ch.ID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (User, error) {
			var u User
			return u, r.Scan(&u.ID, &u.Email, &u.DisplayName, &u.Role, &u.HasPassword, &u.CreatedAt, &u.DisabledAt, &u.LinkUntil)
		})
		return err
	})
	return out, err
}

// DisableUser disables an account: it can no longer log in, and its OAuth grants are revoked
// (reason user_disabled), which invalidates its refresh tokens and, through the grant check
// of the resource server, its access tokens. Disabling a disabled account changes nothing
// and reports changed = false. The row stays: check-ins and consents it recorded point at it.
func DisableUser(ctx context.Context, st *store.Store, churchSlug, email string) (u User, changed bool, err error) {
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		if u, err = findUser(ctx, tx, ch, email); err != nil {
			return err
		}
		if u.DisabledAt != nil {
			return nil
		}
		if u.Role == store.RoleAdmin {
			var others int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM users WHERE church_id = $1 AND role = 'ADMIN'
				AND disabled_at IS NULL AND id <> $2`, ch.ID, u.ID).Scan(&others); err != nil {
				return err
			}
			if others == 0 {
				return fmt.Errorf("%q is the last enabled ADMIN of church %q; add another ADMIN first (neemias-mcp user add --role ADMIN)", u.Email, ch.Slug)
			}
		}
		if err := tx.QueryRow(ctx, `UPDATE users SET disabled_at = now() WHERE church_id = $1 AND id = $2 RETURNING disabled_at`,
			ch.ID, u.ID).Scan(&u.DisabledAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'user_disabled'
			WHERE church_id = $1 AND user_id = $2 AND revoked_at IS NULL`, ch.ID, u.ID); err != nil {
			return err
		}
		changed = true
		return record(ctx, tx, ch.ID, "user.disable", u.ID)
	})
	return u, changed, err
}

// Password length limits of [SetPassword] and the set-password page (store.CheckNewPassword).
const (
	MinPasswordLen = store.MinPasswordLen
	MaxPasswordLen = store.MaxPasswordLen
)

// SetPassword sets the local password of an enabled account (stored as an argon2id hash,
// store.HashPassword): the operator's alternative to a set-password link. The password comes
// from the operator's terminal or standard input, never from the command line, where other
// users of the machine and the shell history see it. Like a redeemed link, it revokes the
// account's unused set-password codes and ends its sessions (OAuth grants revoked, pending
// logins dropped).
func SetPassword(ctx context.Context, st *store.Store, churchSlug, email, pw string) error {
	if err := store.CheckNewPassword(pw); err != nil {
		return err
	}
	hash, err := store.HashPassword(pw)
	if err != nil {
		return err
	}
	return st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		u, err := findUser(ctx, tx, ch, email)
		if err != nil {
			return err
		}
		if u.DisabledAt != nil {
			return fmt.Errorf("the account %q is disabled; a disabled account cannot log in", u.Email)
		}
		if err := password.Set(ctx, db.New(tx), ch.ID, u.ID, hash); err != nil {
			return err
		}
		return record(ctx, tx, ch.ID, password.ActionSetPassword, u.ID)
	})
}

// Class is a class of a church, with how many volunteers serve it and children it has.
type Class struct {
	ID             uuid.UUID
	Name           string
	MinAge, MaxAge int
	Volunteers     int
	Children       int
	ArchivedAt     *time.Time
	// The room's limits (nil: none): see ClassLimits.
	SoftCapacity, FirmCapacity, PerVolunteer *int
}

// SetClassLimits changes the room limits of the class with this name: the ones given, the ones
// cleared; the others stay. A capacity below the children in the class now (today, in the
// church's time zone) is refused, naming the flag and the headcount. One transaction, audited.
func SetClassLimits(ctx context.Context, st *store.Store, churchSlug, name string, l ClassLimits) (Class, error) {
	for _, c := range l.Clear {
		if !slices.Contains([]string{"soft-capacity", "firm-capacity", "per-volunteer"}, c) {
			return Class{}, fmt.Errorf("--clear %s: give soft-capacity, firm-capacity or per-volunteer", c)
		}
	}
	var c Class
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		if c, err = classByName(ctx, tx, ch, name); err != nil {
			return err
		}
		var headcount int
		if err := tx.QueryRow(ctx, `SELECT cl.soft_capacity, cl.firm_capacity, cl.children_per_volunteer,
				(SELECT count(*) FROM checkins ck JOIN churches chu ON chu.id = ck.church_id
				 WHERE ck.class_id = cl.id AND ck.checked_out_at IS NULL
				   AND ck.service_date = (now() AT TIME ZONE chu.time_zone)::date)
			FROM classes cl WHERE cl.id = $1 FOR UPDATE OF cl`, c.ID).Scan(&c.SoftCapacity, &c.FirmCapacity, &c.PerVolunteer, &headcount); err != nil {
			return err
		}
		set := func(dst **int, v *int, clear string) {
			if v != nil {
				*dst = v
			}
			if slices.Contains(l.Clear, clear) {
				*dst = nil
			}
		}
		set(&c.SoftCapacity, l.SoftCapacity, "soft-capacity")
		set(&c.FirmCapacity, l.FirmCapacity, "firm-capacity")
		set(&c.PerVolunteer, l.PerVolunteer, "per-volunteer")
		if err := l.check(c.SoftCapacity, c.FirmCapacity); err != nil {
			return err
		}
		if l.FirmCapacity != nil && *l.FirmCapacity < headcount {
			return fmt.Errorf("--firm-capacity %d is below the %d children in class %q now; wait until some are picked up, or give at least %d", *l.FirmCapacity, headcount, c.Name, headcount)
		}
		if l.SoftCapacity != nil && *l.SoftCapacity < headcount {
			return fmt.Errorf("--soft-capacity %d is below the %d children in class %q now; give at least %d", *l.SoftCapacity, headcount, c.Name, headcount)
		}
		if _, err := tx.Exec(ctx, `UPDATE classes SET soft_capacity = $2, firm_capacity = $3, children_per_volunteer = $4 WHERE id = $1`,
			c.ID, c.SoftCapacity, c.FirmCapacity, c.PerVolunteer); err != nil {
			return err
		}
		return record(ctx, tx, ch.ID, "class.set", c.ID)
	})
	return c, err
}

// NewClass is what `class add` asks for: a name and an age range in completed years, both
// ends inclusive (0 to 18), and the room's limits, if any.
type NewClass struct {
	Name           string
	MinAge, MaxAge int
	Limits         ClassLimits
}

// ClassLimits are a class's room limits (issue 21): past SoftCapacity children a check-in
// warns, at FirmCapacity it is refused, past PerVolunteer children per assigned volunteer it
// warns. Nil: no limit (or, for SetClassLimits, unchanged).
type ClassLimits struct {
	SoftCapacity, FirmCapacity, PerVolunteer *int
	// Clear names the limits to remove ("soft-capacity", "firm-capacity", "per-volunteer").
	Clear []string
}

// check refuses limits that make no room: zero or negative, more than the columns hold, a
// soft capacity above the firm one (soft and firm: the values the class will have). Messages
// name the flag.
func (l ClassLimits) check(soft, firm *int) error {
	for _, c := range []struct {
		flag string
		v    *int
		max  int
	}{{"--soft-capacity", l.SoftCapacity, 1000}, {"--firm-capacity", l.FirmCapacity, 1000}, {"--per-volunteer", l.PerVolunteer, 100}} {
		if c.v != nil && (*c.v < 1 || *c.v > c.max) {
			return fmt.Errorf("%s %d: give 1 to %d children (or --clear %s to remove it)", c.flag, *c.v, c.max, strings.TrimPrefix(c.flag, "--"))
		}
	}
	if soft != nil && firm != nil && *soft > *firm {
		return fmt.Errorf("--soft-capacity %d is above --firm-capacity %d: the soft one warns before the firm one refuses", *soft, *firm)
	}
	return nil
}

// AddClass adds a class to the church with this slug. Overlapping age ranges are allowed:
// placement by age picks the narrowest range that fits.
func AddClass(ctx context.Context, st *store.Store, churchSlug string, in NewClass) (Class, error) {
	in.Name = squeeze(in.Name)
	switch n := utf8.RuneCountInString(in.Name); {
	case n < 1 || n > 120:
		return Class{}, errors.New("--name: give the class's name (1 to 120 characters)")
	case in.MinAge < 0 || in.MinAge > 18 || in.MaxAge < 0 || in.MaxAge > 18:
		return Class{}, fmt.Errorf("--min-age %d --max-age %d: ages are completed years from 0 to 18", in.MinAge, in.MaxAge)
	case in.MinAge > in.MaxAge:
		return Class{}, fmt.Errorf("--min-age %d is above --max-age %d", in.MinAge, in.MaxAge)
	}
	if err := in.Limits.check(in.Limits.SoftCapacity, in.Limits.FirmCapacity); err != nil {
		return Class{}, err
	}
	c := Class{Name: in.Name, MinAge: in.MinAge, MaxAge: in.MaxAge, SoftCapacity: in.Limits.SoftCapacity, FirmCapacity: in.Limits.FirmCapacity, PerVolunteer: in.Limits.PerVolunteer}
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM classes WHERE church_id = $1 AND name = $2)`, ch.ID, in.Name).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return errClassTaken(in.Name, ch.Slug)
		}
		if err := tx.QueryRow(ctx, `INSERT INTO classes (church_id, name, min_age, max_age, soft_capacity, firm_capacity, children_per_volunteer)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			ch.ID, in.Name, in.MinAge, in.MaxAge, in.Limits.SoftCapacity, in.Limits.FirmCapacity, in.Limits.PerVolunteer).Scan(&c.ID); err != nil {
			return err
		}
		return record(ctx, tx, ch.ID, "class.add", c.ID)
	})
	if store.IsUniqueViolation(err, "classes_church_name_key") {
		return Class{}, errClassTaken(in.Name, churchSlug)
	}
	return c, err
}

func errClassTaken(name, slug string) error {
	return fmt.Errorf("church %q has a class named %q already (neemias-mcp class list --church %s)", slug, name, slug)
}

// ListClasses lists the classes of the church with this slug, youngest first.
func ListClasses(ctx context.Context, st *store.Store, churchSlug string) ([]Class, error) {
	var out []Class
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT cl.id, cl.name, cl.min_age, cl.max_age, cl.archived_at,
				cl.soft_capacity, cl.firm_capacity, cl.children_per_volunteer,
				(SELECT count(*) FROM volunteer_assignments va WHERE va.church_id = cl.church_id AND va.class_id = cl.id),
				(SELECT count(*) FROM children c WHERE c.church_id = cl.church_id AND c.class_id = cl.id AND c.archived_at IS NULL)
			FROM classes cl WHERE cl.church_id = $1 ORDER BY cl.min_age, cl.max_age, cl.name`, ch.ID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Class, error) {
			var c Class
			return c, r.Scan(&c.ID, &c.Name, &c.MinAge, &c.MaxAge, &c.ArchivedAt, &c.SoftCapacity, &c.FirmCapacity, &c.PerVolunteer, &c.Volunteers, &c.Children)
		})
		return err
	})
	return out, err
}

// classByName finds a class of the church by its exact name.
func classByName(ctx context.Context, tx pgx.Tx, ch Church, name string) (Class, error) {
	name = squeeze(name)
	var c Class
	err := tx.QueryRow(ctx, `SELECT id, name, min_age, max_age, archived_at FROM classes WHERE church_id = $1 AND name = $2`, ch.ID, name).
		Scan(&c.ID, &c.Name, &c.MinAge, &c.MaxAge, &c.ArchivedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Class{}, fmt.Errorf("church %q has no class named %q (neemias-mcp class list --church %s)", ch.Slug, name, ch.Slug)
	}
	return c, err
}

// AssignVolunteer lets a VOLUNTARIO account serve a class: it then sees that class's children
// and check-ins. Assigning twice changes nothing and reports changed = false.
func AssignVolunteer(ctx context.Context, st *store.Store, churchSlug, email, className string) (changed bool, err error) {
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, u, cl, err := volunteerAndClass(ctx, tx, churchSlug, email, className)
		if err != nil {
			return err
		}
		if u.DisabledAt != nil {
			return fmt.Errorf("the account %q is disabled", u.Email)
		}
		if cl.ArchivedAt != nil {
			return fmt.Errorf("the class %q is archived", cl.Name)
		}
		tag, err := tx.Exec(ctx, `INSERT INTO volunteer_assignments (church_id, user_id, class_id) VALUES ($1, $2, $3)
			ON CONFLICT (user_id, class_id) DO NOTHING`, ch.ID, u.ID, cl.ID)
		if err != nil {
			return err
		}
		if changed = tag.RowsAffected() == 1; !changed {
			return nil
		}
		return record(ctx, tx, ch.ID, "volunteer.assign", u.ID, cl.ID)
	})
	return changed, err
}

// UnassignVolunteer ends a volunteer's assignment to a class. Unassigning one that is not
// assigned changes nothing and reports changed = false.
func UnassignVolunteer(ctx context.Context, st *store.Store, churchSlug, email, className string) (changed bool, err error) {
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, u, cl, err := volunteerAndClass(ctx, tx, churchSlug, email, className)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM volunteer_assignments WHERE church_id = $1 AND user_id = $2 AND class_id = $3`, ch.ID, u.ID, cl.ID)
		if err != nil {
			return err
		}
		if changed = tag.RowsAffected() == 1; !changed {
			return nil
		}
		return record(ctx, tx, ch.ID, "volunteer.unassign", u.ID, cl.ID)
	})
	return changed, err
}

func volunteerAndClass(ctx context.Context, tx pgx.Tx, churchSlug, email, className string) (Church, User, Class, error) {
	ch, err := ChurchBySlug(ctx, tx, churchSlug)
	if err != nil {
		return Church{}, User{}, Class{}, err
	}
	u, err := findUser(ctx, tx, ch, email)
	if err != nil {
		return Church{}, User{}, Class{}, err
	}
	if u.Role != store.RoleVoluntario {
		return Church{}, User{}, Class{}, fmt.Errorf("%q has role %s; only %s accounts are assigned to classes (%s and %s see every class already)",
			u.Email, u.Role, store.RoleVoluntario, store.RoleAdmin, store.RoleCadastro)
	}
	cl, err := classByName(ctx, tx, ch, className)
	if err != nil {
		return Church{}, User{}, Class{}, err
	}
	return ch, u, cl, nil
}

// LinkGuardian ties a RESPONSAVEL account to its guardian record (guardians.user_id), which is
// what lets the account see that guardian's children and manage their trusted adults. The
// guardian must be of the same church and linked to no other account; the account to no other
// guardian. Linking again changes nothing and reports changed = false. The guardian is named by
// id, never by name or phone (an operator reads it from the child's record), so that nothing
// personal goes through a command line or an error.
func LinkGuardian(ctx context.Context, st *store.Store, churchSlug, email string, guardian uuid.UUID) (changed bool, err error) {
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		u, err := findUser(ctx, tx, ch, email)
		if err != nil {
			return err
		}
		if u.Role != store.RoleResponsavel {
			return fmt.Errorf("%q has role %s; only %s accounts are linked to a guardian record", u.Email, u.Role, store.RoleResponsavel)
		}
		if u.DisabledAt != nil {
			return fmt.Errorf("the account %q is disabled", u.Email)
		}
		var current *uuid.UUID
		err = tx.QueryRow(ctx, `SELECT user_id FROM guardians WHERE church_id = $1 AND id = $2 FOR UPDATE`, ch.ID, guardian).Scan(&current)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("no guardian %s in church %q (the id is on the child's record: neemias_roster_child)", guardian, ch.Slug)
		}
		if err != nil {
			return err
		}
		switch {
		case current != nil && *current == u.ID:
			return nil
		case current != nil:
			return fmt.Errorf("guardian %s is linked to another account already; disable that account or ask who it belongs to", guardian)
		}
		var other uuid.UUID
		err = tx.QueryRow(ctx, `SELECT id FROM guardians WHERE user_id = $1`, u.ID).Scan(&other)
		if err == nil {
			return fmt.Errorf("the account %q is linked to guardian %s already; one account is one guardian", u.Email, other)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE guardians SET user_id = $1 WHERE church_id = $2 AND id = $3`, u.ID, ch.ID, guardian); err != nil {
			return err
		}
		changed = true
		return record(ctx, tx, ch.ID, "guardian.link_account", u.ID, guardian)
	})
	return changed, err
}

// record appends the audit entry of a successful operator action on church.
func record(ctx context.Context, tx pgx.Tx, church uuid.UUID, action string, targets ...uuid.UUID) error {
	return audit.InsertOperator(ctx, db.New(tx), church, audit.Entry{
		Capability: Capability, Action: action, Targets: targets, Outcome: audit.Allowed,
	})
}

// squeeze trims s and collapses runs of white space to one space.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// ConsentText is a version of the consent term a church registered: what a roster's "Sim" /
// "Yes" consent cell refers to when the import names it (--consent-version).
type ConsentText struct {
	ID           uuid.UUID
	Version      string
	Title        string
	RegisteredAt time.Time
}

// consentVersionRE is the schema's check on consent_texts.version (and what a roster's
// consent cell may carry as a version): a word, no spaces. Compiled on first use: its 40
// copies of the Unicode letter and number classes cost 1 ms and 1.5 MB, at every start of
// every command otherwise.
var consentVersionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}._/:-]{0,39}$`)
})

// AddConsentText registers a consent text of the church with this slug. A version is
// registered once; registering it again is refused.
func AddConsentText(ctx context.Context, st *store.Store, churchSlug, version, title string) (ConsentText, error) {
	version, title = strings.TrimSpace(version), squeeze(title)
	if !consentVersionRE().MatchString(version) {
		return ConsentText{}, fmt.Errorf("--version %q: use 1 to 40 letters, digits and . _ / : - (for example termo-2025-01 or v2), no spaces", version)
	}
	if n := utf8.RuneCountInString(title); n < 1 || n > 200 {
		return ConsentText{}, errors.New("--title: give the consent text's title (1 to 200 characters)")
	}
	c := ConsentText{Version: version, Title: title}
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM consent_texts WHERE church_id = $1 AND version = $2)`, ch.ID, version).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return errConsentTextTaken(version, ch.Slug)
		}
		if err := tx.QueryRow(ctx, `INSERT INTO consent_texts (church_id, version, title) VALUES ($1, $2, $3) RETURNING id, registered_at`,
			ch.ID, version, title).Scan(&c.ID, &c.RegisteredAt); err != nil {
			return err
		}
		return record(ctx, tx, ch.ID, "consent_text.add", c.ID)
	})
	if store.IsUniqueViolation(err, "consent_texts_church_version_key") {
		return ConsentText{}, errConsentTextTaken(version, churchSlug)
	}
	return c, err
}

func errConsentTextTaken(version, slug string) error {
	return fmt.Errorf("church %q has a consent text with version %q already (neemias-mcp consent-text list --church %s); a registered text is never changed: register the new wording under a new version", slug, version, slug)
}

// ListConsentTexts lists the consent texts of the church with this slug, oldest first.
func ListConsentTexts(ctx context.Context, st *store.Store, churchSlug string) ([]ConsentText, error) {
	var out []ConsentText
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, version, title, registered_at FROM consent_texts WHERE church_id = $1 ORDER BY registered_at, version`, ch.ID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ConsentText, error) {
			var c ConsentText
			return c, r.Scan(&c.ID, &c.Version, &c.Title, &c.RegisteredAt)
		})
		return err
	})
	return out, err
}
