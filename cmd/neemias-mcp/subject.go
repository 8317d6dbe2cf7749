package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/subject"
)

// subjectCmd answers a guardian's data-subject requests (LGPD art. 18) and applies a church's
// retention period (internal/subject): export, erase, retention. Each runs in the maintenance
// context and is audited as an operator action; nothing personal is printed except into the
// export itself.
func subjectCmd() *cobra.Command {
	c := &cobra.Command{Use: "subject", Short: "A guardian's data-subject requests (LGPD art. 18): export, erase; the church's retention period",
		Long: `Answer a guardian's data-subject request (LGPD arts. 18-19, within 15 days):

  export     everything held about the guardian and their children (JSON, or a readable HTML
             page to hand over), with who read or changed it (the audit log) and what cannot
             be erased and why;
  erase      anonymize the guardian and each child with no other guardian (names, phone,
             birth date to the year, alerts, pick-up list), archive those children, keep
             check-ins as counts and the audit log's facts; --dry-run first;
  retention  erase every guardian whose children have not checked in for the church's period.

A guardian is named by id (on the child's record, neemias_roster_child), never by name.`}
	c.AddCommand(subjectExportCmd(), subjectEraseCmd(), subjectRetentionCmd())
	return c
}

func parseGuardian(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, errors.New("--guardian must be the guardian's id (a UUID)")
	}
	return id, nil
}

func subjectExportCmd() *cobra.Command {
	var (
		dbf              dbFlags
		church, guardian string
		format, output   string
	)
	c := &cobra.Command{
		Use: "export", Short: "Write everything held about a guardian and their children, as JSON or HTML", Args: cobra.NoArgs,
		Example: `  neemias-mcp subject export --church central --guardian GUARDIAN_ID --format html --output pedido.html
  neemias-mcp subject export --church central --guardian GUARDIAN_ID --format json`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "json" && format != "html" {
				return fmt.Errorf("--format must be json or html (got %q)", format)
			}
			id, err := parseGuardian(guardian)
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			r, err := subject.Export(cmd.Context(), st, church, id)
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
			if format == "html" {
				err = subject.WriteHTML(out, r)
			} else {
				err = subject.WriteJSON(out, r)
			}
			if err == nil && output != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "export of guardian %s written to %s: %d children, %d check-ins, %d audit entries\n",
					id, output, len(r.Children), len(r.Checkins), len(r.Audit))
			}
			return err
		},
	}
	dbf.add(c)
	fl := c.Flags()
	fl.StringVar(&church, "church", "", "the church's slug (required)")
	fl.StringVar(&guardian, "guardian", "", "the guardian's id (required)")
	fl.StringVar(&format, "format", "json", "json or html")
	fl.StringVar(&output, "output", "", "write to this file (mode 0600) instead of standard output")
	mustRequire(c, "church", "guardian")
	return c
}

func subjectEraseCmd() *cobra.Command {
	var (
		dbf              dbFlags
		church, guardian string
		dryRun, asJSON   bool
	)
	c := &cobra.Command{
		Use: "erase", Short: "Anonymize a guardian and each child of theirs with no other guardian (one transaction, audited)", Args: cobra.NoArgs,
		Example: `  neemias-mcp subject erase --church central --guardian GUARDIAN_ID --dry-run
  neemias-mcp subject erase --church central --guardian GUARDIAN_ID`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := parseGuardian(guardian)
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			p, err := subject.Erase(cmd.Context(), st, church, id, dryRun)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), p)
			}
			writePlan(cmd.OutOrStdout(), p)
			return nil
		},
	}
	dbf.add(c)
	fl := c.Flags()
	fl.StringVar(&church, "church", "", "the church's slug (required)")
	fl.StringVar(&guardian, "guardian", "", "the guardian's id (required)")
	fl.BoolVar(&dryRun, "dry-run", false, "say what would change, change nothing")
	fl.BoolVar(&asJSON, "json", false, "print the plan as JSON")
	mustRequire(c, "church", "guardian")
	return c
}

func writePlan(w io.Writer, p subject.Plan) {
	verb := "erased"
	if p.DryRun {
		verb = "would be erased (dry run: nothing changed)"
	}
	ids := func(xs []uuid.UUID) string {
		if len(xs) == 0 {
			return "-"
		}
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = x.String()
		}
		return strings.Join(s, ",")
	}
	fmt.Fprintf(w, "guardians %s: %s\n", verb, ids(p.Guardians))
	fmt.Fprintf(w, "accounts anonymized and disabled: %s\n", ids(p.Accounts))
	fmt.Fprintf(w, "children anonymized and archived (no other guardian): %s\n", ids(p.ChildrenAnonymized))
	fmt.Fprintf(w, "children kept, only unlinked (another guardian remains): %s\n", ids(p.ChildrenUnlinked))
	fmt.Fprintf(w, "pick-up list entries anonymized: %d; restrictions on remaining children kept: %d\n", p.PickupEntries, p.RestrictionsKept)
	fmt.Fprintf(w, "check-ins kept as counts: %d; consents revoked (kept as evidence): %d\n", p.CheckinsKept, p.ConsentsRevoked)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func subjectRetentionCmd() *cobra.Command {
	var (
		dbf            dbFlags
		church, period string
		dryRun, asJSON bool
	)
	c := &cobra.Command{
		Use: "retention", Short: "Erase the guardians whose children have not checked in for the church's retention period", Args: cobra.NoArgs,
		Long: `Erase, as 'subject erase' does, every guardian of the church whose record and linked children
are older than the period and none of whose children checked in within it (a guardian with no
child left is included). The period is the church's decision (LGPD arts. 15-16: data end with
their purpose): a number and a unit, d, w, m (months) or y, at least 30 days. The answer gives
counts, never names; run it with --dry-run first.`,
		Example: `  neemias-mcp subject retention --church central --inactive-for 24m --dry-run
  neemias-mcp subject retention --church central --inactive-for 24m`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := subject.ParsePeriod(period)
			if err != nil {
				return fmt.Errorf("--inactive-for: %w", err)
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			res, err := subject.Retention(cmd.Context(), st, church, p, dryRun)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			verb := "erased"
			if res.DryRun {
				verb = "would be erased (dry run: nothing changed)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "no check-in since %s: %d guardians %s; %d children anonymized and archived, %d kept with another guardian; %d check-ins kept as counts\n",
				res.Cutoff.Format("2006-01-02"), res.Guardians, verb, res.ChildrenAnonymized, res.ChildrenUnlinked, res.CheckinsKept)
			return nil
		},
	}
	dbf.add(c)
	fl := c.Flags()
	fl.StringVar(&church, "church", "", "the church's slug (required)")
	fl.StringVar(&period, "inactive-for", "", "the retention period: 90d, 12w, 24m (months), 2y (required)")
	fl.BoolVar(&dryRun, "dry-run", false, "count what would be erased, change nothing")
	fl.BoolVar(&asJSON, "json", false, "print the counts as JSON")
	mustRequire(c, "church", "inactive-for")
	return c
}
