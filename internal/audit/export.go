package audit

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/csvsafe"
	"github.com/neemias/neemias-mcp/internal/store"
)

// Filter selects entries of one church for an operator's read of the log (neemias-mcp audit):
// the answer to a guardian's data-access request (LGPD art. 18) is Filter{Church, Target: the
// child}: who read or changed the child's records, when, through which client, and whether
// it was allowed.
type Filter struct {
	Church uuid.UUID
	// Target, User, Client: only entries naming this record, by this user, through this client
	// (zero: any).
	Target, User uuid.UUID
	Client       string
	// Since and Until bound the period [Since, Until) (zero: open).
	Since, Until time.Time
	// Limit caps the rows (default and maximum MaxExport).
	Limit int
}

// MaxExport is the most entries one read returns.
const MaxExport = 1_000_000

// Row is one entry as exported: ids, names of capabilities and actions; no personal data,
// because the log holds none.
type Row struct {
	ID            int64       `json:"id"`
	At            time.Time   `json:"at"`
	ChurchID      *uuid.UUID  `json:"church_id"`
	UserID        *uuid.UUID  `json:"user_id"`
	ClientID      string      `json:"client_id"`
	Capability    string      `json:"capability"`
	Action        string      `json:"action"`
	Targets       []uuid.UUID `json:"target_ids"`
	Outcome       string      `json:"outcome"`
	CorrelationID string      `json:"correlation_id"`
}

// List returns the entries of f, oldest first, read in the owner's maintenance transaction
// (the application role reads only as an ADMIN of the church). The read itself is audited:
// an "audit.export" entry of the operator, naming the target when there is one.
func List(ctx context.Context, st *store.Store, f Filter) ([]Row, error) {
	if f.Church == uuid.Nil {
		return nil, fmt.Errorf("audit: a church is required")
	}
	if f.Limit <= 0 || f.Limit > MaxExport {
		f.Limit = MaxExport
	}
	p := db.ListAuditParams{ChurchID: f.Church, MaxRows: int32(f.Limit)}
	if f.Target != uuid.Nil {
		p.TargetID = &f.Target
	}
	if f.User != uuid.Nil {
		p.UserID = &f.User
	}
	if f.Client != "" {
		p.ClientID = &f.Client
	}
	if !f.Since.IsZero() {
		p.Since = &f.Since
	}
	if !f.Until.IsZero() {
		p.Until = &f.Until
	}
	var out []Row
	err := st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		q := db.New(tx)
		rows, err := q.ListAudit(ctx, p)
		if err != nil {
			return err
		}
		out = make([]Row, 0, len(rows))
		for _, r := range rows {
			out = append(out, Row{ID: r.ID, At: r.At, ChurchID: r.ChurchID, UserID: r.UserID, ClientID: deref(r.ClientID),
				Capability: r.Capability, Action: r.Action, Targets: r.TargetIds, Outcome: r.Outcome, CorrelationID: deref(r.CorrelationID)})
		}
		var targets []uuid.UUID
		for _, id := range []uuid.UUID{f.Target, f.User} {
			if id != uuid.Nil {
				targets = append(targets, id)
			}
		}
		return InsertOperator(ctx, q, f.Church, Entry{Capability: "audit_log", Action: "audit.export", Targets: targets, Outcome: Allowed})
	})
	if err != nil {
		return nil, fmt.Errorf("audit: reading the log: %w", err)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Columns of the CSV export, in order.
var Columns = []string{"id", "at", "church_id", "user_id", "client_id", "capability", "action", "target_ids", "outcome", "correlation_id"}

// WriteCSV writes rs as CSV with a header row (RFC 4180; target ids space-separated; times in
// RFC 3339, UTC). Every cell goes through csvsafe.Cell, the rule of every CSV export: a client
// id is the client's own text (a metadata document URL, a registered name), and a cell
// starting with "=", "+", "-", "@", a tab or a carriage return would run as a formula in the
// spreadsheet the operator opens the file with.
func WriteCSV(w io.Writer, rs []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	for _, r := range rs {
		ids := make([]string, len(r.Targets))
		for i, t := range r.Targets {
			ids[i] = t.String()
		}
		if err := cw.Write(csvsafe.Row([]string{strconv.FormatInt(r.ID, 10), r.At.UTC().Format(time.RFC3339Nano), idOrEmpty(r.ChurchID), idOrEmpty(r.UserID),
			r.ClientID, r.Capability, r.Action, strings.Join(ids, " "), r.Outcome, r.CorrelationID})); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes rs as one JSON array.
func WriteJSON(w io.Writer, rs []Row) error {
	if rs == nil {
		rs = []Row{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rs)
}

func idOrEmpty(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}
