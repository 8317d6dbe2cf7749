// Package rosterexport writes a church's roster and attendance as CSV files that open correctly
// in the spreadsheet the church already uses (issue 22): `neemias-mcp export roster|attendance`.
//
// Excel decides a CSV's encoding and separator from the file alone: without a byte-order mark
// it reads Windows-1252 (accents turn to mojibake), and in a pt-BR locale it splits on ";", not
// ",". So a file starts with the UTF-8 BOM, and its separator is ";" for pt-BR and "," for en,
// as is the header's language. A cell that starts with "=", "+", "-", "@", a tab or a carriage
// return would be run as a formula (CSV injection, OWASP): it is written with a leading "'",
// which spreadsheets show as text (internal/csvsafe, the rule every CSV export shares).
//
// Both exports run in the maintenance context (store.InSystemTx, as internal/onboard does): an
// operator's command, audited as one operator action (export.roster, export.attendance) with
// the children's ids. The roster holds personal data (names, birth dates, guardians' phones):
// the file is the operator's to protect, and the command writes it with mode 0600.
package rosterexport

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/csvsafe"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Lang is the language of a file's header, which also decides its separator.
type Lang string

// The languages.
const (
	PT Lang = "pt"
	EN Lang = "en"
)

// ParseLang reads a --lang value.
func ParseLang(s string) (Lang, error) {
	switch Lang(strings.ToLower(strings.TrimSpace(s))) {
	case PT, "pt-br":
		return PT, nil
	case EN:
		return EN, nil
	}
	return "", fmt.Errorf("unknown language %q: use pt (separator ;) or en (separator ,)", s)
}

func (l Lang) sep() rune {
	if l == EN {
		return ','
	}
	return ';'
}

// bom is the UTF-8 byte-order mark Excel needs to read the file as UTF-8.
const bom = "\uFEFF"

// writer writes a file's rows; every cell goes through csvsafe.Cell.
type writer struct{ w *csv.Writer }

func newWriter(out io.Writer, l Lang) (*writer, error) {
	if _, err := io.WriteString(out, bom); err != nil {
		return nil, err
	}
	w := csv.NewWriter(out)
	w.Comma, w.UseCRLF = l.sep(), true // CRLF: what Excel writes and reads everywhere
	return &writer{w}, nil
}

func (w *writer) row(cells ...string) error {
	return w.w.Write(csvsafe.Row(cells))
}

func (w *writer) flush() error { w.w.Flush(); return w.w.Error() }

// Roster writes the church's enrolled (not archived) children, one row per child and guardian
// (a child without a guardian gets one row), ordered by class and name; it returns the
// children written.
func Roster(ctx context.Context, st *store.Store, churchSlug string, l Lang, out io.Writer) (int, error) {
	header := map[Lang][]string{
		PT: {"Nome da criança", "Data de nascimento", "Turma", "Código", "Alergias", "Observações médicas", "Responsável", "Parentesco", "Telefone"},
		EN: {"Child's name", "Birth date", "Class", "Handle", "Allergies", "Medical notes", "Guardian", "Relationship", "Phone"},
	}[l]
	children := 0
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := onboard.ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			SELECT c.id, c.name, c.birth_date, coalesce(cl.name, ''), c.handle, coalesce(c.allergies, ''), coalesce(c.medical_notes, ''),
			       coalesce(g.name, ''), coalesce(gc.relationship, ''), coalesce(g.phone, '')
			FROM children c
			LEFT JOIN classes cl ON cl.church_id = c.church_id AND cl.id = c.class_id
			LEFT JOIN guardian_children gc ON gc.church_id = c.church_id AND gc.child_id = c.id
			LEFT JOIN guardians g ON g.church_id = gc.church_id AND g.id = gc.guardian_id
			WHERE c.church_id = $1 AND c.archived_at IS NULL AND c.consent_revoked_at IS NULL
			ORDER BY cl.min_age NULLS LAST, cl.name, c.name, c.id, g.name`, ch.ID)
		if err != nil {
			return fmt.Errorf("rosterexport: roster: %w", err)
		}
		defer rows.Close()
		w, err := newWriter(out, l)
		if err != nil {
			return err
		}
		if err := w.row(header...); err != nil {
			return err
		}
		var ids []uuid.UUID
		for rows.Next() {
			var id uuid.UUID
			var name, class, handle, allergies, notes, guardian, rel, phone string
			var birth time.Time
			if err := rows.Scan(&id, &name, &birth, &class, &handle, &allergies, &notes, &guardian, &rel, &phone); err != nil {
				return fmt.Errorf("rosterexport: roster: %w", err)
			}
			if len(ids) == 0 || ids[len(ids)-1] != id {
				ids = append(ids, id)
			}
			if err := w.row(name, dateOf(birth, l), class, handle, allergies, notes, guardian, relationship(rel, l), phone); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("rosterexport: roster: %w", err)
		}
		if err := w.flush(); err != nil {
			return err
		}
		children = len(ids)
		return record(ctx, tx, ch.ID, "export.roster", ids)
	})
	return children, err
}

// Attendance writes every check-in from from to to (both included), one row each, ordered by
// date, class and child; it returns the rows written.
func Attendance(ctx context.Context, st *store.Store, churchSlug string, from, to time.Time, l Lang, out io.Writer) (int, error) {
	if to.Before(from) {
		return 0, fmt.Errorf("--to %s is before --from %s", to.Format(time.DateOnly), from.Format(time.DateOnly))
	}
	header := map[Lang][]string{
		PT: {"Data", "Turma", "Nome da criança", "Código", "Entrada", "Saída", "Retirada por"},
		EN: {"Date", "Class", "Child's name", "Handle", "Checked in", "Picked up", "Picked up by"},
	}[l]
	n := 0
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := onboard.ChurchBySlug(ctx, tx, churchSlug)
		if err != nil {
			return err
		}
		loc, err := time.LoadLocation(ch.TimeZone)
		if err != nil {
			return fmt.Errorf("rosterexport: the church's time zone %q: %w", ch.TimeZone, err)
		}
		rows, err := tx.Query(ctx, `
			SELECT ck.child_id, ck.service_date, cl.name, c.name, c.handle, ck.checked_in_at, ck.checked_out_at, coalesce(ck.picked_up_by_name, '')
			FROM checkins ck
			JOIN children c ON c.church_id = ck.church_id AND c.id = ck.child_id
			JOIN classes cl ON cl.church_id = ck.church_id AND cl.id = ck.class_id
			WHERE ck.church_id = $1 AND ck.service_date BETWEEN $2 AND $3
			ORDER BY ck.service_date, cl.min_age, cl.name, c.name, ck.id`, ch.ID, from, to)
		if err != nil {
			return fmt.Errorf("rosterexport: attendance: %w", err)
		}
		defer rows.Close()
		w, err := newWriter(out, l)
		if err != nil {
			return err
		}
		if err := w.row(header...); err != nil {
			return err
		}
		seen := map[uuid.UUID]bool{}
		var ids []uuid.UUID
		for rows.Next() {
			var id uuid.UUID
			var day, in time.Time
			var out *time.Time
			var class, name, handle, by string
			if err := rows.Scan(&id, &day, &class, &name, &handle, &in, &out, &by); err != nil {
				return fmt.Errorf("rosterexport: attendance: %w", err)
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
			outText := ""
			if out != nil {
				outText = out.In(loc).Format("15:04")
			}
			if err := w.row(dateOf(day, l), class, name, handle, in.In(loc).Format("15:04"), outText, by); err != nil {
				return err
			}
			n++
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("rosterexport: attendance: %w", err)
		}
		if err := w.flush(); err != nil {
			return err
		}
		return record(ctx, tx, ch.ID, "export.attendance", ids)
	})
	return n, err
}

// dateOf is a date as the file's language writes it: DD/MM/AAAA in pt, YYYY-MM-DD in en (which
// every spreadsheet reads the same way in every locale).
func dateOf(t time.Time, l Lang) string {
	if l == PT {
		return t.Format("02/01/2006")
	}
	return t.Format(time.DateOnly)
}

// relationship is a stored relationship in the file's language.
func relationship(r string, l Lang) string {
	if l == EN {
		return r
	}
	return map[string]string{"mother": "mãe", "father": "pai", "grandparent": "avó/avô", "legal_guardian": "tutor legal", "other": "outro"}[r]
}

// record appends the operator audit entry of an export: which children's data left the system.
func record(ctx context.Context, tx pgx.Tx, church uuid.UUID, action string, ids []uuid.UUID) error {
	return audit.InsertOperator(ctx, db.New(tx), church, audit.Entry{
		Capability: onboard.Capability, Action: action, Targets: ids, Outcome: audit.Allowed,
	})
}
