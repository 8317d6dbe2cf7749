package subject

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Capability is the capability of this package's audit entries.
const Capability = "data_subject"

// Marker replaces an erased name; PlaceholderPhone an erased phone (guardians.phone is NOT
// NULL and must look like a phone number).
const (
	Marker           = "Removido"
	PlaceholderPhone = "00000000"
)

// Report is everything held about one guardian and their children (see the package doc).
type Report struct {
	GeneratedAt time.Time     `json:"generated_at"`
	Church      Church        `json:"church"`
	Guardian    Guardian      `json:"guardian"`
	Children    []Child       `json:"children"`
	Links       []Link        `json:"guardian_links"`
	Consents    []Consent     `json:"consents"`
	Pickups     []PickupEntry `json:"pickup_list"`
	Checkins    []Checkin     `json:"checkins"`
	Accounts    []Account     `json:"accounts_that_acted"`
	Audit       []audit.Row   `json:"audit_log"`
	Retained    []Retained    `json:"cannot_be_erased"`
}

// Church names the controller.
type Church struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
	Slug string    `json:"slug"`
}

// Guardian is the guardian's record.
type Guardian struct {
	ID         uuid.UUID    `json:"id"`
	Name       string       `json:"name"`
	Phone      string       `json:"phone"`
	RecordedAt time.Time    `json:"recorded_at"`
	Account    *UserAccount `json:"account"`
}

// UserAccount is the guardian's login account, without its password hash.
type UserAccount struct {
	ID          uuid.UUID  `json:"id"`
	Email       string     `json:"email"`
	DisplayName string     `json:"display_name"`
	Role        string     `json:"role"`
	CreatedAt   time.Time  `json:"created_at"`
	DisabledAt  *time.Time `json:"disabled_at"`
}

// Child is a linked child's record.
type Child struct {
	ID           uuid.UUID  `json:"id"`
	Name         string     `json:"name"`
	BirthDate    string     `json:"birth_date"`
	ClassID      *uuid.UUID `json:"class_id"`
	ClassName    string     `json:"class_name"`
	Handle       string     `json:"handle"`
	Allergies    string     `json:"allergies"`
	MedicalNotes string     `json:"medical_notes"`
	Archived     bool       `json:"archived"`
	ArchivedAt   *time.Time `json:"archived_at"`
	EnrolledAt   time.Time  `json:"enrolled_at"`
}

// Link is one guardian-child link. Another guardian of the child is named by id only.
type Link struct {
	ChildID      uuid.UUID `json:"child_id"`
	GuardianID   uuid.UUID `json:"guardian_id"`
	Requester    bool      `json:"is_requester"`
	Relationship string    `json:"relationship"`
	LinkedAt     time.Time `json:"linked_at"`
}

// Consent is one consent record.
type Consent struct {
	ID          uuid.UUID  `json:"id"`
	ChildID     uuid.UUID  `json:"child_id"`
	GuardianID  uuid.UUID  `json:"guardian_id"`
	Requester   bool       `json:"is_requester"`
	TextVersion string     `json:"text_version"`
	TextTitle   string     `json:"text_title"`
	LegalBasis  string     `json:"legal_basis"`
	GrantedAt   time.Time  `json:"granted_at"`
	GrantedBy   *uuid.UUID `json:"granted_by"`
	RevokedAt   *time.Time `json:"revoked_at"`
}

// PickupEntry is one entry of a child's pick-up list. A restriction's person and note are
// withheld (Withheld true, Name, Relationship, Phone and Note empty).
type PickupEntry struct {
	ID           uuid.UUID  `json:"id"`
	ChildID      uuid.UUID  `json:"child_id"`
	Authorized   bool       `json:"authorized"`
	Withheld     bool       `json:"withheld"`
	Name         string     `json:"name,omitempty"`
	Relationship string     `json:"relationship,omitempty"`
	Phone        string     `json:"phone,omitempty"`
	Note         string     `json:"note,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	CreatedBy    uuid.UUID  `json:"created_by"`
	RemovedAt    *time.Time `json:"removed_at"`
}

// Checkin is one check-in of a child.
type Checkin struct {
	ID           uuid.UUID  `json:"id"`
	ChildID      uuid.UUID  `json:"child_id"`
	ServiceDate  string     `json:"service_date"`
	ClassName    string     `json:"class_name"`
	CheckedInAt  time.Time  `json:"checked_in_at"`
	CheckedInBy  uuid.UUID  `json:"checked_in_by"`
	CheckedOutAt *time.Time `json:"checked_out_at"`
	ReleasedBy   *uuid.UUID `json:"released_by"`
	PickedUpBy   string     `json:"picked_up_by"`
	ByGuardian   *uuid.UUID `json:"picked_up_by_guardian"`
}

// Account is an account named by the export (who granted, checked in, released, read): its
// role, and its display name when it is a staff account or the requester's own.
type Account struct {
	ID   uuid.UUID `json:"id"`
	Role string    `json:"role"`
	Name string    `json:"name,omitempty"`
}

// Retained is what an erasure keeps, and why.
type Retained struct {
	What string `json:"what"`
	Why  string `json:"why"`
}

// RetainedStatements are stated in every export.
var RetainedStatements = []Retained{
	{"O registro de auditoria (quem acessou ou alterou os dados, quando, por qual aplicativo), só com identificadores, sem nomes.",
		"É o registro legal do tratamento (LGPD arts. 37 e 16 I) e é imutável; não contém nome, telefone nem data de nascimento."},
	{"As presenças (check-ins) das crianças, como registros de uma criança anonimizada: data, turma, horários e identificadores de quem registrou.",
		"Contagens de frequência e registro de segurança de quem entregou a criança; prazos não correm contra menores de 16 anos (Código Civil arts. 3 e 198 I). O nome de quem buscou a criança é removido."},
	{"Os registros de consentimento (versão do termo, base legal, datas e quem registrou), revogados.",
		"Prova de que o tratamento teve base legal (LGPD art. 8 §2) e exercício regular de direitos (art. 16)."},
	{"O ano de nascimento da criança anonimizada (a data vira 1º de janeiro do mesmo ano) e sua turma.",
		"Mantém as contagens por faixa etária; sem nome nem família, não identifica ninguém."},
	{"Restrições de retirada (pessoas que não podem buscar uma criança) de crianças que continuam matriculadas com outro responsável.",
		"Protegem uma criança que permanece (ECA); são registro de segurança da igreja, não dados do responsável."},
}

// errGuardian is the refusal for an id that names no guardian of the church.
func errGuardian(id uuid.UUID, slug string) error {
	return fmt.Errorf("no guardian %s in church %q (the id is on the child's record: neemias_roster_child)", id, slug)
}

// Export gathers the report of guardian in the church of churchSlug. The read is audited
// (subject.export), and the audit log is read with audit.List, which audits its reads too.
func Export(ctx context.Context, st *store.Store, churchSlug string, guardian uuid.UUID) (Report, error) {
	r := Report{GeneratedAt: time.Now().UTC(), Retained: RetainedStatements}
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := onboard.ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		r.Church = Church{ID: ch.ID, Name: ch.Name, Slug: ch.Slug}
		return readReport(ctx, tx, &r, guardian, ch.Slug)
	})
	if err != nil {
		return Report{}, err
	}
	// The audit log, through the same reader as `neemias-mcp audit export`.
	targets := []audit.Filter{{Church: r.Church.ID, Target: guardian}}
	for _, c := range r.Children {
		targets = append(targets, audit.Filter{Church: r.Church.ID, Target: c.ID})
	}
	if a := r.Guardian.Account; a != nil {
		targets = append(targets, audit.Filter{Church: r.Church.ID, User: a.ID}, audit.Filter{Church: r.Church.ID, Target: a.ID})
	}
	seen := map[int64]bool{}
	for _, f := range targets {
		rows, err := audit.List(ctx, st, f)
		if err != nil {
			return Report{}, err
		}
		for _, row := range rows {
			if !seen[row.ID] {
				seen[row.ID] = true
				r.Audit = append(r.Audit, row)
			}
		}
	}
	sort.Slice(r.Audit, func(i, j int) bool { return r.Audit[i].ID < r.Audit[j].ID })
	if r.Audit == nil {
		r.Audit = []audit.Row{}
	}
	// Accounts named by the audit entries too.
	var ids []uuid.UUID
	for _, row := range r.Audit {
		if row.UserID != nil {
			ids = append(ids, *row.UserID)
		}
	}
	if len(ids) > 0 {
		err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error { return addAccounts(ctx, tx, &r, ids) })
		if err != nil {
			return Report{}, err
		}
	}
	return r, nil
}

func readReport(ctx context.Context, tx pgx.Tx, r *Report, guardian uuid.UUID, slug string) error {
	church := r.Church.ID
	g := &r.Guardian
	var userID *uuid.UUID
	err := tx.QueryRow(ctx, `SELECT id, name, phone, created_at, user_id FROM guardians WHERE church_id = $1 AND id = $2`, church, guardian).
		Scan(&g.ID, &g.Name, &g.Phone, &g.RecordedAt, &userID)
	if errors.Is(err, pgx.ErrNoRows) {
		return errGuardian(guardian, slug)
	}
	if err != nil {
		return err
	}
	if userID != nil {
		a := &UserAccount{}
		if err := tx.QueryRow(ctx, `SELECT id, email, display_name, role, created_at, disabled_at FROM users WHERE church_id = $1 AND id = $2`,
			church, *userID).Scan(&a.ID, &a.Email, &a.DisplayName, &a.Role, &a.CreatedAt, &a.DisabledAt); err != nil {
			return err
		}
		g.Account = a
	}

	rows, err := tx.Query(ctx, `SELECT c.id, c.name, to_char(c.birth_date, 'YYYY-MM-DD'), c.class_id, coalesce(cl.name, ''), c.handle,
			coalesce(c.allergies, ''), coalesce(c.medical_notes, ''), c.archived_at, c.created_at
		FROM guardian_children gc
		JOIN children c ON c.id = gc.child_id AND c.church_id = gc.church_id
		LEFT JOIN classes cl ON cl.id = c.class_id AND cl.church_id = c.church_id
		WHERE gc.church_id = $1 AND gc.guardian_id = $2
		ORDER BY c.created_at, c.id`, church, guardian)
	if err != nil {
		return err
	}
	r.Children, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Child, error) {
		var c Child
		err := row.Scan(&c.ID, &c.Name, &c.BirthDate, &c.ClassID, &c.ClassName, &c.Handle, &c.Allergies, &c.MedicalNotes, &c.ArchivedAt, &c.EnrolledAt)
		c.Archived = c.ArchivedAt != nil
		return c, err
	})
	if err != nil {
		return err
	}
	children := make([]uuid.UUID, len(r.Children))
	for i, c := range r.Children {
		children[i] = c.ID
	}

	rows, err = tx.Query(ctx, `SELECT child_id, guardian_id, relationship, created_at FROM guardian_children
		WHERE church_id = $1 AND child_id = ANY($2) ORDER BY child_id, created_at, guardian_id`, church, children)
	if err != nil {
		return err
	}
	r.Links, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Link, error) {
		var l Link
		err := row.Scan(&l.ChildID, &l.GuardianID, &l.Relationship, &l.LinkedAt)
		l.Requester = l.GuardianID == guardian
		return l, err
	})
	if err != nil {
		return err
	}

	rows, err = tx.Query(ctx, `SELECT cr.id, cr.child_id, cr.guardian_id, cr.text_version, coalesce(ct.title, ''), cr.legal_basis,
			cr.granted_at, cr.granted_by, cr.revoked_at
		FROM consent_records cr
		LEFT JOIN consent_texts ct ON ct.church_id = cr.church_id AND ct.version = cr.text_version
		WHERE cr.church_id = $1 AND (cr.guardian_id = $2 OR cr.child_id = ANY($3))
		ORDER BY cr.granted_at, cr.id`, church, guardian, children)
	if err != nil {
		return err
	}
	r.Consents, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Consent, error) {
		var c Consent
		err := row.Scan(&c.ID, &c.ChildID, &c.GuardianID, &c.TextVersion, &c.TextTitle, &c.LegalBasis, &c.GrantedAt, &c.GrantedBy, &c.RevokedAt)
		c.Requester = c.GuardianID == guardian
		return c, err
	})
	if err != nil {
		return err
	}

	rows, err = tx.Query(ctx, `SELECT id, child_id, authorized, name, relationship, coalesce(phone, ''), coalesce(note, ''), created_at, created_by, removed_at
		FROM pickup_adults WHERE church_id = $1 AND child_id = ANY($2) ORDER BY child_id, created_at, id`, church, children)
	if err != nil {
		return err
	}
	r.Pickups, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (PickupEntry, error) {
		var p PickupEntry
		err := row.Scan(&p.ID, &p.ChildID, &p.Authorized, &p.Name, &p.Relationship, &p.Phone, &p.Note, &p.CreatedAt, &p.CreatedBy, &p.RemovedAt)
		if !p.Authorized { // a restriction: a third person's data and a safeguarding measure
			p.Withheld, p.Name, p.Relationship, p.Phone, p.Note = true, "", "", "", ""
		}
		return p, err
	})
	if err != nil {
		return err
	}

	rows, err = tx.Query(ctx, `SELECT ck.id, ck.child_id, to_char(ck.service_date, 'YYYY-MM-DD'), cl.name, ck.checked_in_at, ck.checked_in_by,
			ck.checked_out_at, ck.checked_out_by, coalesce(ck.picked_up_by_name, ''), ck.picked_up_by_guardian
		FROM checkins ck JOIN classes cl ON cl.id = ck.class_id AND cl.church_id = ck.church_id
		WHERE ck.church_id = $1 AND ck.child_id = ANY($2) ORDER BY ck.service_date, ck.child_id`, church, children)
	if err != nil {
		return err
	}
	r.Checkins, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Checkin, error) {
		var c Checkin
		return c, row.Scan(&c.ID, &c.ChildID, &c.ServiceDate, &c.ClassName, &c.CheckedInAt, &c.CheckedInBy, &c.CheckedOutAt, &c.ReleasedBy, &c.PickedUpBy, &c.ByGuardian)
	})
	if err != nil {
		return err
	}

	var ids []uuid.UUID
	for _, c := range r.Consents {
		if c.GrantedBy != nil {
			ids = append(ids, *c.GrantedBy)
		}
	}
	for _, p := range r.Pickups {
		ids = append(ids, p.CreatedBy)
	}
	for _, c := range r.Checkins {
		ids = append(ids, c.CheckedInBy)
		if c.ReleasedBy != nil {
			ids = append(ids, *c.ReleasedBy)
		}
	}
	if err := addAccounts(ctx, tx, r, ids); err != nil {
		return err
	}
	targets := append([]uuid.UUID{guardian}, children...)
	return audit.InsertOperator(ctx, db.New(tx), church, audit.Entry{Capability: Capability, Action: "subject.export", Targets: targets, Outcome: audit.Allowed})
}

// addAccounts adds the accounts of ids not named yet, sorted by id: staff and the requester's
// own account with their display names, other guardians' accounts with their role only.
func addAccounts(ctx context.Context, tx pgx.Tx, r *Report, ids []uuid.UUID) error {
	have := map[uuid.UUID]bool{}
	for _, a := range r.Accounts {
		have[a.ID] = true
	}
	var want []uuid.UUID
	for _, id := range ids {
		if !have[id] {
			have[id] = true
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT id, role, display_name FROM users WHERE church_id = $1 AND id = ANY($2)`, r.Church.ID, want)
	if err != nil {
		return err
	}
	got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Account, error) {
		var a Account
		err := row.Scan(&a.ID, &a.Role, &a.Name)
		own := r.Guardian.Account != nil && r.Guardian.Account.ID == a.ID
		if a.Role == store.RoleResponsavel && !own {
			a.Name = ""
		}
		return a, err
	})
	if err != nil {
		return err
	}
	r.Accounts = append(r.Accounts, got...)
	sort.Slice(r.Accounts, func(i, j int) bool { return r.Accounts[i].ID.String() < r.Accounts[j].ID.String() })
	return nil
}
