// Command capgen generates Neemias MCP's code from the capability spec. It is a thin CLI over
// internal/capgen; see `capgen help` and docs/spec-reference.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/capgen"
	"github.com/neemias/neemias-mcp/internal/capgen/spec"
)

const module = "github.com/neemias/neemias-mcp"

func main() {
	if err := newRoot().Execute(); err != nil {
		os.Exit(1)
	}
}

type options struct {
	root     string
	specPath string
}

func newRoot() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:           "capgen",
		Short:         "Generate Neemias MCP's code from spec/capabilities.yaml",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.PersistentFlags().StringVar(&o.root, "root", ".", "repository root")
	root.PersistentFlags().StringVar(&o.specPath, "spec", "spec/capabilities.yaml", "spec path, relative to --root")
	root.AddCommand(generateCmd(o), checkCmd(o), scaffoldCmd(o), inspectCmd(o), validateCmd(o), nextMigrationCmd(o))
	return root
}

// load reads and validates the spec; diagnostics go to stderr one per line, compiler style.
func (o *options) load(stderr io.Writer) (*capgen.Model, error) {
	s, err := spec.Load(strings.TrimSuffix(o.root, "/") + "/" + o.specPath)
	if err != nil {
		var diags spec.Diagnostics
		if errors.As(err, &diags) {
			// Report paths relative to the repository root, as in spec/capabilities.yaml:12:5.
			for i := range diags {
				diags[i].File = o.specPath
			}
			fmt.Fprintln(stderr, diags.Error())
			return nil, fmt.Errorf("%d problem(s) in %s", len(diags), o.specPath)
		}
		return nil, err
	}
	// Views and columns the resource queries name, against the migrations, before sqlc runs
	// (sqlc's errors would point at the generated SQL, not at the spec).
	rel, err := capgen.SchemaRelations(o.root)
	if err != nil {
		return nil, err
	}
	if err := s.CheckRelations(rel); err != nil {
		var diags spec.Diagnostics
		if errors.As(err, &diags) {
			for i := range diags {
				diags[i].File = o.specPath
			}
			fmt.Fprintln(stderr, diags.Error())
			return nil, fmt.Errorf("%d problem(s) in %s", len(diags), o.specPath)
		}
		return nil, err
	}
	m := capgen.NewModel(s, o.specPath, module)
	if err := m.CheckToolQueriesIn(o.root); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, fmt.Errorf("tool queries in %s do not apply their row filters", capgen.CustomQueriesDir)
	}
	if err := m.CheckViewFilesIn(o.root); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, fmt.Errorf("view documents do not check out")
	}
	return m, nil
}

func generateCmd(o *options) *cobra.Command {
	var tools capgen.Tools
	c := &cobra.Command{
		Use:   "generate",
		Short: "Write every file capgen owns (types, catalog, scopes, JSON Schemas, OpenAPI, queries, migration, docs, server.json, spec schema), then gen/db and gen/openapi/oas with --sqlc and --ogen, all or nothing",
		Long: "generate builds every output in memory, writes it to a staging directory, runs sqlc and ogen\n" +
			"there (with --sqlc and --ogen; make generate passes both) and moves the result into the tree\n" +
			"only when every step succeeded: a broken spec, query or OpenAPI document leaves every\n" +
			"generated file as it was. Files capgen wrote before and no longer writes are deleted.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := o.load(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			files, err := capgen.Generate(m)
			if err != nil {
				return err
			}
			tools.Log = cmd.ErrOrStderr()
			return capgen.Apply(o.root, files, tools)
		},
	}
	c.Flags().StringVar(&tools.SQLC, "sqlc", "", "sqlc binary: also generate gen/db (make generate passes bin/sqlc)")
	c.Flags().StringVar(&tools.Ogen, "ogen", "", "ogen binary: also generate gen/openapi/oas (make generate passes bin/ogen)")
	return c
}

// nextMigrationCmd prints the number (or, given a name, the file) of the next migration.
func nextMigrationCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "next-migration [NAME]",
		Short:   "Print the next free migration number under queries/schema (one above the highest), or with NAME the file to create",
		Example: "  capgen next-migration               # NNNNN, the highest number under queries/schema plus one\n  capgen next-migration checkin_notes # queries/schema/NNNNN_checkin_notes.sql",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				p, err := capgen.NextMigrationFile(o.root, args[0])
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), p)
				return nil
			}
			n, err := capgen.NextMigration(o.root)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%05d\n", n)
			return nil
		},
	}
}

func checkCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Fail when any file capgen owns differs on disk from what the spec implies (writes nothing)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := o.load(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			files, err := capgen.Generate(m)
			if err != nil {
				return err
			}
			changed, err := capgen.Diff(o.root, files)
			if err != nil {
				return err
			}
			if len(changed) > 0 {
				return fmt.Errorf("generated files are out of date (run make generate):\n  %s", strings.Join(changed, "\n  "))
			}
			return nil
		},
	}
}

func scaffoldCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "scaffold",
		Short: "Create a hand-written stub for every capability that has none; report orphaned stubs",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := o.load(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			res, err := capgen.Scaffold(m, o.root)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, f := range res.Created {
				fmt.Fprintf(out, "created %s\n", f)
			}
			for _, orphan := range res.Orphans {
				fmt.Fprintf(out, "orphan %s\n", orphan)
			}
			if len(res.Created) == 0 && len(res.Orphans) == 0 {
				fmt.Fprintln(out, "every capability has a stub; nothing to do")
			}
			return nil
		},
	}
}

func inspectCmd(o *options) *cobra.Command {
	var role, scopes string
	c := &cobra.Command{
		Use:     "inspect",
		Short:   "Print what a caller can reach: capabilities, returned/redacted fields, row filters",
		Example: "  capgen inspect --role VOLUNTARIO\n  capgen inspect --scopes roster:read,checkins:read",
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := o.load(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			q := capgen.InspectQuery{Role: role}
			if scopes != "" {
				q.Scopes = strings.Split(scopes, ",")
			}
			report, err := capgen.Inspect(m, q)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), report)
			return nil
		},
	}
	c.Flags().StringVar(&role, "role", "", "a role of the spec (ADMIN, CADASTRO, VOLUNTARIO, RESPONSAVEL)")
	c.Flags().StringVar(&scopes, "scopes", "", "comma-separated scopes (with --role: narrows the role's scopes)")
	return c
}

func validateCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Load and validate the spec; print diagnostics",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := o.load(cmd.ErrOrStderr()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", o.specPath)
			return nil
		},
	}
}
