package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/internal/apikey"
)

// apikeyCmd manages church API keys for REST automation: create (shown once), list, revoke.
func apikeyCmd() *cobra.Command {
	c := &cobra.Command{Use: "apikey", Short: "Manage a church's API keys for REST automation (never accepted on MCP)",
		Long: `Manage a church's API keys for REST automation (n8n, scripts, spreadsheets).

A key acts as one account of the church (--user): its scopes are that account's role's, or fewer
(--scopes). It is accepted on the REST API (/api/v1, Authorization: Bearer nmk_…) only; the MCP
endpoint refuses it, because MCP clients use OAuth. Only a hash is stored: the key is shown once.
Revoking it, disabling its account or reaching its expiry refuses it on the next request.`}

	var (
		cdb                      dbFlags
		church, user, name, list string
		ttl                      time.Duration
	)
	create := &cobra.Command{
		Use: "create", Short: "Create a key and print it once", Args: cobra.NoArgs,
		Example: `  neemias-mcp apikey create --church central --user secretaria@central.example --name n8n-checkins --scopes checkins:read,roster:read`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &cdb)
			if err != nil {
				return err
			}
			defer closeDB()
			if user == "" {
				return errors.New("--user is required: the account the key acts as")
			}
			ch, u, err := resolveChurchUser(cmd.Context(), st, church, user)
			if err != nil {
				return err
			}
			var sc []string
			if list != "" {
				sc = strings.Split(list, ",")
			}
			k, token, err := apikey.Create(cmd.Context(), st, apikey.New{Church: ch, User: u, Name: name, Scopes: sc, TTL: ttl})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), token)
			fmt.Fprintf(cmd.ErrOrStderr(), "key %s (%s) acts as a %s with scopes %s; it is shown only now. REST only: MCP needs OAuth.\n", k.ID, k.Name, k.Role, k.Scopes)
			return nil
		},
	}
	cdb.add(create)
	create.Flags().StringVar(&church, "church", "", "the church's slug (required)")
	create.Flags().StringVar(&user, "user", "", "the account the key acts as: email or id (required)")
	create.Flags().StringVar(&name, "name", "", "what the key is for, e.g. n8n-checkins (required)")
	create.Flags().StringVar(&list, "scopes", "", "comma-separated scopes (default: all of the account's role)")
	create.Flags().DurationVar(&ttl, "ttl", 0, "expire the key after this long (default: never)")
	mustRequire(create, "church", "user", "name")

	var (
		ldb     dbFlags
		lchurch string
	)
	ls := &cobra.Command{
		Use: "list", Short: "List a church's keys (never the secrets)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &ldb)
			if err != nil {
				return err
			}
			defer closeDB()
			ch, _, err := resolveChurchUser(cmd.Context(), st, lchurch, "")
			if err != nil {
				return err
			}
			keys, err := apikey.List(cmd.Context(), st, ch)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tACCOUNT\tROLE\tSCOPES\tCREATED\tSTATUS")
			for _, k := range keys {
				status := "active"
				switch {
				case k.RevokedAt != nil:
					status = "revoked " + k.RevokedAt.Format(time.DateOnly)
				case k.ExpiresAt != nil && k.ExpiresAt.Before(time.Now()):
					status = "expired " + k.ExpiresAt.Format(time.DateOnly)
				case k.ExpiresAt != nil:
					status = "active until " + k.ExpiresAt.Format(time.DateOnly)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Email, k.Role, k.Scopes, k.CreatedAt.Format(time.DateOnly), status)
			}
			return tw.Flush()
		},
	}
	ldb.add(ls)
	ls.Flags().StringVar(&lchurch, "church", "", "the church's slug (required)")
	mustRequire(ls, "church")

	var (
		rdb         dbFlags
		rchurch, id string
	)
	revoke := &cobra.Command{
		Use: "revoke", Short: "Revoke a key (refused from the next request on)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kid, err := uuid.Parse(id)
			if err != nil {
				return errors.New("--id must be a key's id, as apikey list shows it")
			}
			st, closeDB, err := openStore(cmd.Context(), &rdb)
			if err != nil {
				return err
			}
			defer closeDB()
			ch, _, err := resolveChurchUser(cmd.Context(), st, rchurch, "")
			if err != nil {
				return err
			}
			ok, err := apikey.Revoke(cmd.Context(), st, ch, kid)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no active key %s in church %q", kid, rchurch)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked key %s\n", kid)
			return nil
		},
	}
	rdb.add(revoke)
	revoke.Flags().StringVar(&rchurch, "church", "", "the church's slug (required)")
	revoke.Flags().StringVar(&id, "id", "", "the key's id (required)")
	mustRequire(revoke, "church", "id")

	c.AddCommand(create, ls, revoke)
	return c
}
