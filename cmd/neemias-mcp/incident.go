package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/incident"
)

// incidentCmd is the register of security incidents (internal/incident; docs/operations.md's
// runbook "A security incident").
func incidentCmd() *cobra.Command {
	c := &cobra.Command{Use: "incident", Short: "The register of security incidents (LGPD art. 48): record, list, show, update, subjects",
		Long: `Keep the register of security incidents that LGPD art. 48 and Resolução CD/ANPD nº 15/2024 require:
every incident, notified or not, kept at least five years. An incident that reached children's
or sensitive data (a church's records always reveal religious affiliation) must be notified to
the ANPD and to the data subjects within three business days of knowing.

"record" reads the reach from the audit log when the incident has an actor it knows (a stolen
token's account, a leaked API key's or OAuth client's id): which churches, how many children
and guardians, which kinds of data (from the spec's PII rules of the capabilities used, narrowed
by the account's role). Without one (a lost backup, a leaked dump) name the churches with
--whole-church. It prints the facts the notification needs; "show" prints them again, "update"
completes the follow-up, "subjects" writes the guardians to notify to a private file.

Never put personal data in --summary or --measures: the register keeps facts and counts.`}
	c.AddCommand(incidentRecordCmd(), incidentListCmd(), incidentShowCmd(), incidentUpdateCmd(), incidentSubjectsCmd())
	return c
}

func incidentRecordCmd() *cobra.Command {
	var (
		dbf                        dbFlags
		by, summary, measures, dpo string
		detected, from, until      string
		churchSlugs                []string
		actorUser, actorClient     string
		wholeChurch, asJSON        bool
	)
	c := &cobra.Command{Use: "record", Short: "Record an incident and print what its notification needs", Args: cobra.NoArgs,
		Example: `  # a volunteer's phone with an open session was stolen on Sunday morning
  neemias-mcp incident record --by "Pr. Marcos (DPO)" --church central \
    --actor-user voluntaria@central.example --from 2026-11-29T08:00:00-03:00 --detected 2026-11-29T13:10:00-03:00 \
    --summary "Phone of a volunteer stolen with the MCP client signed in; session revoked at 13:20"
  # a database backup file was left on a public link
  neemias-mcp incident record --by "TI" --church central --whole-church \
    --detected 2026-11-30T09:00:00-03:00 --summary "Backup of 2026-11-28 shared by a public link for two days"`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := incident.Request{RecordedBy: by, Summary: summary, ActorClient: actorClient, WholeChurch: wholeChurch,
				Measures: measures, DPO: dpo}
			var err error
			if r.Detected, err = parseInstant("--detected", detected); err != nil {
				return err
			}
			if r.From, err = optionalInstant("--from", from); err != nil {
				return err
			}
			if r.Until, err = optionalInstant("--until", until); err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			for _, slug := range churchSlugs {
				user := ""
				if len(churchSlugs) == 1 {
					user = actorUser
				}
				ch, u, err := resolveChurchUser(cmd.Context(), st, slug, user)
				if err != nil {
					return err
				}
				r.Churches = append(r.Churches, ch)
				if u != uuid.Nil {
					r.ActorUser = u
				}
			}
			if actorUser != "" && r.ActorUser == uuid.Nil {
				return errors.New("--actor-user needs the one --church the account belongs to")
			}
			in, err := incident.Record(cmd.Context(), st, r)
			if err != nil {
				return err
			}
			return printIncident(cmd, in, asJSON)
		},
	}
	dbf.add(c)
	fl := c.Flags()
	fl.StringVar(&by, "by", "", "who records it (name and role), required")
	fl.StringVar(&summary, "summary", "", "what happened and how (no personal data), required")
	fl.StringVar(&detected, "detected", "", "when it became known (RFC 3339, or YYYY-MM-DD UTC): starts the 3 business days, required")
	fl.StringVar(&from, "from", "", "when it started, as far as known (required with an actor: the audit log is read from there)")
	fl.StringVar(&until, "until", "", "when it stopped (default: still open, the audit log is read up to now)")
	fl.StringSliceVar(&churchSlugs, "church", nil, "a church reached, by slug (repeatable; with --actor-user, the account's church)")
	fl.StringVar(&actorUser, "actor-user", "", "the account the incident acted as (id or email)")
	fl.StringVar(&actorClient, "actor-client", "", "the OAuth client id or API key client the incident acted through")
	fl.BoolVar(&wholeChurch, "whole-church", false, "the incident reached every record of the churches named (a lost backup, a leaked dump)")
	fl.StringVar(&measures, "measures", "", "measures taken or to be taken (can be added later)")
	fl.StringVar(&dpo, "dpo", "", "the data protection officer's name and contact (can be added later)")
	fl.BoolVar(&asJSON, "json", false, "print the entry as JSON instead of the report")
	mustRequire(c, "by", "summary", "detected")
	return c
}

func incidentListCmd() *cobra.Command {
	var (
		dbf   dbFlags
		since string
	)
	c := &cobra.Command{Use: "list", Short: "List the register, oldest first, with each entry's deadline and notifications", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := optionalInstant("--since", since)
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			rows, err := incident.List(cmd.Context(), st, s)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKNOWN\tDEADLINE\tCHILDREN\tGUARDIANS\tANPD\tSUBJECTS\tSUMMARY")
			now := time.Now()
			for _, r := range rows {
				anpd := stamp(r.ANPDNotifiedAt)
				switch {
				case r.ANPDNotifiedAt == nil && r.NotNotified:
					anpd = "not notified"
				case r.ANPDNotifiedAt == nil && now.After(r.Deadline):
					anpd = "OVERDUE"
				}
				sum := []rune(r.Summary)
				if len(sum) > 50 {
					sum = append(sum[:49], '…')
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.ID, r.Detected.Format("2006-01-02"),
					r.Deadline.Format("2006-01-02"), r.Children, r.Guardians, anpd, stamp(r.SubjectsNotifiedAt), string(sum))
			}
			return tw.Flush()
		},
	}
	dbf.add(c)
	c.Flags().StringVar(&since, "since", "", "only entries recorded from this day or instant on")
	return c
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format("2006-01-02")
}

func incidentShowCmd() *cobra.Command {
	var (
		dbf    dbFlags
		asJSON bool
	)
	c := &cobra.Command{Use: "show ID", Short: "Print an entry as the facts its notification needs", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := incidentID(args[0])
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			in, err := incident.Get(cmd.Context(), st, id)
			if err != nil {
				return err
			}
			return printIncident(cmd, in, asJSON)
		},
	}
	dbf.add(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the entry as JSON")
	return c
}

func incidentUpdateCmd() *cobra.Command {
	var (
		dbf                                   dbFlags
		measures, dpo, reason, anpd, subjects string
	)
	c := &cobra.Command{Use: "update ID", Short: "Complete an entry's follow-up: measures, DPO, notification dates, or why it was not notified", Args: cobra.ExactArgs(1),
		Example: `  neemias-mcp incident update 0b6f... --anpd-notified 2026-12-01T10:00:00-03:00 --subjects-notified 2026-12-01T16:00:00-03:00 \
    --measures "Sessions of the account revoked; password reset; volunteers briefed on screen locks"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := incidentID(args[0])
			if err != nil {
				return err
			}
			f := incident.FollowUp{Measures: measures, DPO: dpo, NotNotifiedReason: reason}
			if f.ANPDNotifiedAt, err = optionalInstant("--anpd-notified", anpd); err != nil {
				return err
			}
			if f.SubjectsNotified, err = optionalInstant("--subjects-notified", subjects); err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			in, err := incident.Update(cmd.Context(), st, id, f)
			if err != nil {
				return err
			}
			return printIncident(cmd, in, false)
		},
	}
	dbf.add(c)
	fl := c.Flags()
	fl.StringVar(&measures, "measures", "", "measures taken or to be taken (replaces the recorded text)")
	fl.StringVar(&dpo, "dpo", "", "the data protection officer's name and contact")
	fl.StringVar(&anpd, "anpd-notified", "", "when the ANPD was notified")
	fl.StringVar(&subjects, "subjects-notified", "", "when the data subjects were notified")
	fl.StringVar(&reason, "not-notified-reason", "", "why the incident is not notified (no relevant risk), kept with the entry")
	return c
}

func incidentSubjectsCmd() *cobra.Command {
	var (
		dbf    dbFlags
		output string
	)
	c := &cobra.Command{Use: "subjects ID", Short: "Write the guardians an incident reached, with their contact, to a private CSV file (audited)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := incidentID(args[0])
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			subjects, err := incident.Subjects(cmd.Context(), st, id)
			if err != nil {
				return err
			}
			fh, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return fmt.Errorf("--output: %w", err)
			}
			if err := incident.WriteSubjectsCSV(fh, subjects); err != nil {
				fh.Close()
				return err
			}
			if err := fh.Close(); err != nil {
				return fmt.Errorf("--output: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d guardians written to %s (personal data: mode 0600; delete it once they are told)\n", len(subjects), output)
			return nil
		},
	}
	dbf.add(c)
	c.Flags().StringVar(&output, "output", "", "the CSV file to write (mode 0600), required: personal data never goes to the terminal")
	mustRequire(c, "output")
	return c
}

func printIncident(cmd *cobra.Command, in incident.Incident, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	return incident.WriteReport(cmd.OutOrStdout(), in, time.Now())
}

func incidentID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, fmt.Errorf("the incident's id is a UUID, as incident list prints it (got %q)", s)
	}
	return id, nil
}

func optionalInstant(flag, s string) (*time.Time, error) {
	t, err := parseInstant(flag, s)
	if err != nil || t.IsZero() {
		return nil, err
	}
	return &t, nil
}
