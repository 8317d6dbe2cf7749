package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/audit"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/store"
)

// auditCmd reads the append-only audit log: `list` prints a table, `export` writes CSV or
// JSON, both filtered by church (required), child (or any record id), user, client and period.
func auditCmd() *cobra.Command {
	c := &cobra.Command{Use: "audit", Short: "Read the audit log: who used which capability on which records, and OAuth events",
		Long: `Read the append-only audit log of one church: every capability call (reads and changes, allowed
or refused) and the authorization server's events (grants, consents, token refreshes, refresh-
token reuse, revocations). It holds ids only, never personal data. Each read is itself audited
(action audit.export).

--child lists every access to a child's records, by whom, through which client, when. A
guardian's whole data-subject request (LGPD art. 18: their record, their children's, consents,
check-ins and these accesses, as JSON or HTML) is "neemias-mcp subject export".`}
	c.AddCommand(auditSub("list", "Print matching entries as a table", "table"),
		auditSub("export", "Write matching entries as CSV or JSON (--format), to standard output or --output", "csv"))
	return c
}

func auditSub(use, short, defFormat string) *cobra.Command {
	var (
		dbf                         dbFlags
		church, child, user, client string
		since, until                string
		format, output              string
		limit                       int
	)
	c := &cobra.Command{
		Use: use, Short: short, Args: cobra.NoArgs,
		Example: fmt.Sprintf(`  neemias-mcp audit %[1]s --church central --child CHILD_ID --since 2026-01-01
  neemias-mcp audit %[1]s --church central --user pastora@central.example --format json
  neemias-mcp audit %[1]s --church central --client neemias-dev-token --since 2026-11-01 --until 2026-12-01`, use),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch format {
			case "table", "csv", "json":
			default:
				return fmt.Errorf("--format must be table, csv or json (got %q)", format)
			}
			f := audit.Filter{Client: client, Limit: limit}
			var err error
			if f.Since, err = parseInstant("--since", since); err != nil {
				return err
			}
			if f.Until, err = parseInstant("--until", until); err != nil {
				return err
			}
			if child != "" {
				if f.Target, err = uuid.Parse(child); err != nil {
					return errors.New("--child must be the child's id (a UUID)")
				}
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			if f.Church, f.User, err = resolveChurchUser(cmd.Context(), st, church, user); err != nil {
				return err
			}
			rs, err := audit.List(cmd.Context(), st, f)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if output != "" {
				fh, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
				if err != nil {
					return fmt.Errorf("--output: %w", err)
				}
				defer fh.Close()
				out = fh
			}
			switch format {
			case "csv":
				err = audit.WriteCSV(out, rs)
			case "json":
				err = audit.WriteJSON(out, rs)
			default:
				err = writeAuditTable(out, rs)
			}
			if err == nil && output != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d entries written to %s\n", len(rs), output)
			}
			return err
		},
	}
	dbf.add(c)
	fl := c.Flags()
	fl.StringVar(&church, "church", "", "the church's slug (required)")
	fl.StringVar(&child, "child", "", "only entries naming this child (its id), or any record id")
	fl.StringVar(&user, "user", "", "only entries of this user (id or email)")
	fl.StringVar(&client, "client", "", "only entries through this OAuth client id")
	fl.StringVar(&since, "since", "", "from this day (YYYY-MM-DD, UTC) or instant (RFC 3339), inclusive")
	fl.StringVar(&until, "until", "", "up to this day or instant, exclusive")
	fl.StringVar(&format, "format", defFormat, "table, csv or json")
	fl.StringVar(&output, "output", "", "write to this file (mode 0600) instead of standard output")
	fl.IntVar(&limit, "limit", audit.MaxExport, "at most this many entries")
	mustRequire(c, "church")
	return c
}

// parseInstant reads a day (YYYY-MM-DD, UTC midnight) or an RFC 3339 instant; "" is open.
func parseInstant(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s must be YYYY-MM-DD or RFC 3339 (got %q)", flag, s)
	}
	return t, nil
}

// resolveChurchUser finds the church by slug and the user by id or email within it.
func resolveChurchUser(ctx context.Context, st *store.Store, slug, user string) (church, userID uuid.UUID, err error) {
	err = st.InSystemTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		ch, err := onboard.ChurchBySlug(ctx, tx, slug)
		if err != nil {
			return err
		}
		church = ch.ID
		if user == "" {
			return nil
		}
		if id, err := uuid.Parse(user); err == nil {
			userID = id
			return nil
		}
		u, err := db.New(tx).GetUserByEmail(ctx, db.GetUserByEmailParams{ChurchID: ch.ID, Email: strings.ToLower(strings.TrimSpace(user))})
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("--user: no account with this email in church %q", slug)
		}
		userID = u.ID
		return err
	})
	return church, userID, err
}

func writeAuditTable(w io.Writer, rs []audit.Row) error {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tUSER\tCLIENT\tCAPABILITY\tACTION\tOUTCOME\tTARGETS")
	for _, r := range rs {
		ids := make([]string, len(r.Targets))
		for i, t := range r.Targets {
			ids[i] = t.String()
		}
		user := "-"
		if r.UserID != nil {
			user = r.UserID.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.At.UTC().Format(time.RFC3339), user, orDash(r.ClientID), r.Capability, r.Action, r.Outcome, strings.Join(ids, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%d entries)\n", len(rs))
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
