package main

import (
	"errors"
	"fmt"

	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/rosterimport"
)

// importCmd brings data a church already has into Neemias (internal/rosterimport).
func importCmd() *cobra.Command {
	c := &cobra.Command{Use: "import", Short: "Import a church's existing data"}
	var (
		dbf            dbFlags
		church, report string
		dryRun, strict bool
	)
	var cols strings.Builder
	for _, col := range rosterimport.Columns {
		req := ""
		if col.Required {
			req = " (required)"
		}
		fmt.Fprintf(&cols, "  %-13s%s: %s\n", col.Field, req, strings.Join(col.Aliases, ", "))
	}
	roster := &cobra.Command{
		Use:   "roster FILE.csv",
		Short: "Import children, guardians and consent from the church's spreadsheet (CSV)",
		Long: `Import children, guardians, their links and the guardians' consent from a CSV file: the
export of the spreadsheet the church keeps (Google Sheets, Excel), UTF-8 or Windows-1252,
separated by commas or semicolons. Header names are matched in Portuguese or English, ignoring
case and accents:

` + cols.String() + `
Dates: DD/MM/AAAA or AAAA-MM-DD. Phones: Brazilian numbers in any common format, with the area
code. Relationship: mãe, pai, avó, avô, responsável legal, outro (empty: outro). A child goes to
the class named in the class column, else to the class its age fits.

Consent: a row is imported only with the version of the consent text the guardian agreed to
(consent column), or another legal basis named in the legal-basis column (obrigação legal,
legítimo interesse). Rows without either are refused and reported.

A child is matched by name and birth date, a guardian by phone: importing the same file twice
changes nothing, a corrected file updates what changed. The whole run is one transaction:
all or nothing. The report (stdout, or --report FILE) lists every refused row by line number
and reason and never quotes personal data; nothing is logged.`,
		Example: `  neemias-mcp import roster docs/examples/roster-sample.csv --church central --dry-run
  neemias-mcp import roster cadastro.csv --church central --report relatorio.txt
  neemias-mcp import roster cadastro.csv --church central --strict`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("opening the roster file: %w", err)
			}
			defer f.Close()
			out := cmd.OutOrStdout()
			if report != "" {
				rf, err := os.OpenFile(report, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
				if err != nil {
					return fmt.Errorf("creating the report file: %w", err)
				}
				defer rf.Close()
				out = rf
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			rep, runErr := rosterimport.Run(cmd.Context(), st, f, rosterimport.Options{Church: church, DryRun: dryRun, Strict: strict})
			if rep != nil {
				if err := rep.WriteText(out); err != nil {
					return err
				}
				if report != "" {
					summary := "imported"
					if !rep.Committed {
						summary = "nothing written"
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %d rows imported, %d refused, in %s; report in %s\n",
						summary, rep.Imported, len(rep.Refused), rep.Elapsed.Round(1e6), report)
				}
			}
			if errors.Is(runErr, rosterimport.ErrRefusedRows) {
				return fmt.Errorf("%d rows refused and --strict is set: nothing was imported", len(rep.Refused))
			}
			return runErr
		},
	}
	dbf.add(roster)
	roster.Flags().StringVar(&church, "church", "", "the church's slug (required)")
	roster.Flags().BoolVar(&dryRun, "dry-run", false, "do everything, then roll back: print what would be created, updated and refused")
	roster.Flags().BoolVar(&strict, "strict", false, "import nothing when any row is refused")
	roster.Flags().StringVar(&report, "report", "", "write the report to this file (mode 0600) instead of standard output")
	mustRequire(roster, "church")
	c.AddCommand(roster)
	return c
}
