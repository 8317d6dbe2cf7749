package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/attendanceimport"
	"github.com/neemias/neemias-mcp/internal/rosterexport"
	"github.com/neemias/neemias-mcp/internal/rosterimport"
	"github.com/neemias/neemias-mcp/internal/store"
)

// importCmd brings data a church already has into Neemias (internal/rosterimport).
func importCmd() *cobra.Command {
	c := &cobra.Command{Use: "import", Short: "Import a church's existing data"}
	var (
		fl             importFlags
		country        string
		consentVersion string
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
export of the spreadsheet the church keeps (Google Sheets, Google Forms, Excel, another church
system): UTF-8 (with or without BOM), UTF-16 with BOM, Windows-1252 or CP850 (Excel's "CSV
(MS-DOS)"), separated by commas, semicolons or tabs, with an optional "sep=;" first line and
title rows above the header. Header names are matched in Portuguese or English, ignoring case,
accents and punctuation; a first-name column may come with a last-name column:

` + cols.String() + `
Dates: YYYY-MM-DD, DD/MM/YYYY or MM/DD/YYYY (the order is read from the values; a file whose
dates all fit both is refused: give --date-order), Excel serial dates. Phones: numbers of
--default-country (default BR) in any common format, others with +country; a number not valid
there is refused. Relationship: mãe, pai, avó materna, tutora legal, mom, dad, grandma, ...;
a word not known is "outro" with a warning. A child goes to the class named in the class
column, else to the class its age fits.

Consent: a row is imported only with the version of the consent text the guardian agreed to
(consent column), a "Sim"/"Yes" there with --consent-version naming a registered text
(neemias-mcp consent-text add), or another legal basis named in the legal-basis column
(obrigação legal, legítimo interesse). "Não", "Pendente", "Recusado" ... refuse the row
(consent pending), as does a row with nothing.

A child is matched by name and birth date and a guardian in common, a guardian by name and
phone (docs/onboarding.md has the rules): importing the same file twice changes nothing, a
corrected file updates what changed. The whole run is one transaction: all or nothing. The
report (stdout, or --report FILE) lists every refused row by spreadsheet row number and reason
and never quotes a cell; nothing is logged. An import that imports no row exits non-zero.`,
		Example: `  neemias-mcp import roster docs/examples/roster-sample.csv --church central --dry-run
  neemias-mcp import roster cadastro.csv --church central --report relatorio.txt
  neemias-mcp import roster cadastro.csv --church central --strict
  neemias-mcp import roster formulario.csv --church central --consent-version termo-2025-01
  neemias-mcp import roster us-export.csv --church central --default-country US --date-order mdy`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return fl.run(cmd, args[0], "roster", func(ctx context.Context, st *store.Store, in io.Reader, out io.Writer) (importOutcome, error) {
				rep, err := rosterimport.Run(ctx, st, in, rosterimport.Options{Church: fl.church, DryRun: fl.dryRun, Strict: fl.strict,
					DateOrder: strings.ToLower(fl.dateOrder), DefaultCountry: country, ConsentVersion: strings.TrimSpace(consentVersion)})
				if rep == nil {
					return importOutcome{}, err
				}
				if werr := rep.WriteText(out); werr != nil {
					return importOutcome{}, werr
				}
				return importOutcome{committed: rep.Committed, accepted: rep.Imported, refused: len(rep.Refused),
					counts:        fmt.Sprintf("%d rows imported, %d refused", rep.Imported, len(rep.Refused)),
					strictRefused: errors.Is(err, rosterimport.ErrRefusedRows), elapsed: rep.Elapsed}, err
			})
		},
	}
	fl.add(roster, "do everything, then roll back: print what would be created, updated and refused")
	roster.Flags().StringVar(&country, "default-country", "BR", "ISO 3166 country of phone numbers written without +")
	roster.Flags().StringVar(&consentVersion, "consent-version", "", "the registered consent text (consent-text add) a Sim/Yes consent cell refers to")
	c.AddCommand(roster, importAttendanceCmd())
	return c
}

// importAttendanceCmd is `import attendance` (internal/attendanceimport).
func importAttendanceCmd() *cobra.Command {
	var (
		fl   importFlags
		lang string
	)
	var cols strings.Builder
	for _, col := range attendanceimport.Columns {
		req := ""
		switch {
		case col.Field == attendanceimport.FieldChild:
			req = " (required, or a handle column)"
		case col.Required:
			req = " (required)"
		}
		fmt.Fprintf(&cols, "  %-13s%s: %s\n", col.Field, req, strings.Join(col.Aliases, ", "))
	}
	cmd := &cobra.Command{
		Use:   "attendance FILE.csv",
		Short: "Import past attendance (one check-in per row) from the church's spreadsheet (CSV)",
		Long: `Import the attendance a church recorded before Neemias, one check-in per row, so that
attendance_summary answers "how many kids came in June?" from the first day. The file is read as
import roster reads one (UTF-8, UTF-16, Windows-1252 or CP850; , ; or tab; title rows; header
names in Portuguese or English, case and accents ignored); export attendance's file imports as
it is. Columns:

` + cols.String() + `
The child is named by handle (a handle column, or a child cell that is one of the church's
handles) or by full name, compared ignoring case, accents and punctuation with every child of
the church (archived ones too): a name two children share is refused unless the birth-date
column tells them apart. The class must be one of the church's (case and accents ignored): an
unknown class is refused, never created. Dates as import roster reads them (--date-order, or
the values; Excel serials); times HH:MM (9h30, 9:30 AM) in the church's time zone.

Refused: a date today or later, a date before the child's birth, a check-out before the
check-in, a row repeating an earlier one's child and day, a child with that day's check-in in
another class. A child with that day's check-in in the same class is "already present": an
import never changes a check-in, so importing a file again changes nothing. Imported check-ins
are recorded by the church's import account (` + attendanceimport.ImportAccountEmail + `,
disabled) and carry no pick-up code. One transaction; --strict imports nothing when a row is
refused. The report (stdout, or --report FILE) lists refused rows by spreadsheet row number and
reason, in Portuguese and English (--lang pt or en for one), and never quotes a cell. An import
in which every row is refused exits non-zero.`,
		Example: `  neemias-mcp import attendance presenca-2025.csv --church central --dry-run
  neemias-mcp import attendance presenca-2025.csv --church central --report relatorio.txt
  neemias-mcp import attendance attendance.csv --church central --date-order mdy --lang en`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if lang != "" {
				l, err := rosterexport.ParseLang(lang)
				if err != nil {
					return fmt.Errorf("--lang: %w", err)
				}
				lang = string(l)
			}
			return fl.run(cmd, args[0], "attendance", func(ctx context.Context, st *store.Store, in io.Reader, out io.Writer) (importOutcome, error) {
				rep, err := attendanceimport.Run(ctx, st, in, attendanceimport.Options{Church: fl.church, DryRun: fl.dryRun, Strict: fl.strict,
					DateOrder: strings.ToLower(fl.dateOrder)})
				if rep == nil {
					return importOutcome{}, err
				}
				if werr := rep.WriteText(out, lang); werr != nil {
					return importOutcome{}, werr
				}
				return importOutcome{committed: rep.Committed, accepted: rep.Accepted(), refused: len(rep.Refused),
					counts:        fmt.Sprintf("%d check-ins imported, %d already present, %d rows refused", rep.Imported, rep.Present, len(rep.Refused)),
					strictRefused: errors.Is(err, attendanceimport.ErrRefusedRows), elapsed: rep.Elapsed}, err
			})
		},
	}
	fl.add(cmd, "do everything, then roll back: print what would be imported and refused")
	cmd.Flags().StringVar(&lang, "lang", "", "the report's language: pt or en (default: both)")
	return cmd
}

// importFlags are the flags every import takes, and run is what every import does around its
// importer: open the file, the report's destination and the store, print the summary, and turn
// "refused under --strict" and "nothing imported" into a non-zero exit.
type importFlags struct {
	dbf                       dbFlags
	church, report, dateOrder string
	dryRun, strict            bool
}

func (f *importFlags) add(c *cobra.Command, dryRunDoes string) {
	f.dbf.add(c)
	fl := c.Flags()
	fl.StringVar(&f.church, "church", "", "the church's slug (required)")
	fl.BoolVar(&f.dryRun, "dry-run", false, dryRunDoes)
	fl.BoolVar(&f.strict, "strict", false, "import nothing when any row is refused")
	fl.StringVar(&f.dateOrder, "date-order", "", "the order of day/month dates: dmy, mdy or ymd (default: read from the values)")
	fl.StringVar(&f.report, "report", "", "write the report to this file (mode 0600) instead of standard output")
	mustRequire(c, "church")
}

// importOutcome is what an importer's report says, for the command's summary and exit code.
type importOutcome struct {
	committed         bool
	accepted, refused int
	counts            string
	strictRefused     bool
	elapsed           time.Duration
}

func (f *importFlags) run(cmd *cobra.Command, path, what string, do func(ctx context.Context, st *store.Store, in io.Reader, out io.Writer) (importOutcome, error)) error {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening the %s file: %w", what, err)
	}
	defer in.Close()
	out := cmd.OutOrStdout()
	if f.report != "" {
		rf, err := os.OpenFile(f.report, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return fmt.Errorf("creating the report file: %w", err)
		}
		defer rf.Close()
		out = rf
	}
	st, closeDB, err := openStore(cmd.Context(), &f.dbf)
	if err != nil {
		return err
	}
	defer closeDB()
	o, runErr := do(cmd.Context(), st, in, out)
	if o.counts != "" && f.report != "" {
		summary := "imported"
		if !o.committed {
			summary = "nothing written"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, in %s; report in %s\n", summary, o.counts, o.elapsed.Round(time.Millisecond), f.report)
	}
	switch {
	case o.strictRefused:
		return fmt.Errorf("%d rows refused and --strict is set: nothing was imported", o.refused)
	case runErr == nil && o.counts != "" && o.accepted == 0:
		return fmt.Errorf("nenhuma linha importada (%d recusadas): veja o relatório / no row was imported (%d refused): see the report", o.refused, o.refused)
	}
	return runErr
}
