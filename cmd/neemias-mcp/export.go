package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/rosterexport"
)

// exportCmd writes the roster and attendance as CSV for the church's spreadsheet
// (internal/rosterexport: UTF-8 BOM, ";" for pt, formula cells neutralized).
func exportCmd() *cobra.Command {
	c := &cobra.Command{Use: "export", Short: "Write the roster or attendance as CSV that opens correctly in Excel (UTF-8 BOM; ; for pt, , for en)"}
	var (
		rosterDB                   dbFlags
		rosterChurch, rosterLang   string
		rosterOut                  string
		attDB                      dbFlags
		attChurch, attLang, attOut string
		attFrom, attTo             string
	)
	roster := &cobra.Command{
		Use: "roster", Short: "The enrolled children, one row per child and guardian (personal data: the file is written with mode 0600)", Args: cobra.NoArgs,
		Example: "  neemias-mcp export roster --church central --output roster.csv",
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := rosterexport.ParseLang(rosterLang)
			if err != nil {
				return fmt.Errorf("--lang: %w", err)
			}
			st, closeDB, err := openStore(cmd.Context(), &rosterDB)
			if err != nil {
				return err
			}
			defer closeDB()
			return writeExport(cmd, rosterOut, func(w io.Writer) (string, error) {
				n, err := rosterexport.Roster(cmd.Context(), st, rosterChurch, l, w)
				return fmt.Sprintf("%d children", n), err
			})
		},
	}
	rosterDB.add(roster)
	roster.Flags().StringVar(&rosterChurch, "church", "", "the church's slug (required)")
	roster.Flags().StringVar(&rosterLang, "lang", "pt", "pt (header in Portuguese, separator ;) or en (English, separator ,)")
	roster.Flags().StringVar(&rosterOut, "output", "", "the file to write (default: standard output)")
	mustRequire(roster, "church")

	attendance := &cobra.Command{
		Use: "attendance", Short: "Every check-in of a date range, one row each", Args: cobra.NoArgs,
		Example: "  neemias-mcp export attendance --church central --from 2026-06-01 --to 2026-06-30 --output junho.csv",
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := rosterexport.ParseLang(attLang)
			if err != nil {
				return fmt.Errorf("--lang: %w", err)
			}
			from, err := time.Parse(time.DateOnly, attFrom)
			if err != nil {
				return fmt.Errorf("--from: not a date (YYYY-MM-DD)")
			}
			to, err := time.Parse(time.DateOnly, attTo)
			if err != nil {
				return fmt.Errorf("--to: not a date (YYYY-MM-DD)")
			}
			st, closeDB, err := openStore(cmd.Context(), &attDB)
			if err != nil {
				return err
			}
			defer closeDB()
			return writeExport(cmd, attOut, func(w io.Writer) (string, error) {
				n, err := rosterexport.Attendance(cmd.Context(), st, attChurch, from, to, l, w)
				return fmt.Sprintf("%d check-ins", n), err
			})
		},
	}
	attDB.add(attendance)
	attendance.Flags().StringVar(&attChurch, "church", "", "the church's slug (required)")
	attendance.Flags().StringVar(&attFrom, "from", "", "the first day, YYYY-MM-DD (required)")
	attendance.Flags().StringVar(&attTo, "to", "", "the last day, YYYY-MM-DD (required)")
	attendance.Flags().StringVar(&attLang, "lang", "pt", "pt (header in Portuguese, separator ;) or en (English, separator ,)")
	attendance.Flags().StringVar(&attOut, "output", "", "the file to write (default: standard output)")
	mustRequire(attendance, "church", "from", "to")
	c.AddCommand(roster, attendance)
	return c
}

// writeExport runs write into the --output file (created with mode 0600, removed when the
// export fails) or standard output, and says on standard error what was written.
func writeExport(cmd *cobra.Command, path string, write func(io.Writer) (string, error)) error {
	if path == "" {
		_, err := write(cmd.OutOrStdout())
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	what, err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s to %s\n", what, path)
	return nil
}
