package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/gen/db"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/store"
)

// identityCmd manages the links of identity-provider accounts (issuer + subject) to local
// users: the login provider's of the built-in authorization server (--login-provider-issuer)
// and the external provider's (--oauth-issuer).
func identityCmd() *cobra.Command {
	c := &cobra.Command{Use: "identity", Short: "Manage links of identity-provider accounts (issuer + subject) to local users"}
	c.AddCommand(identityLinkCmd(), identityListCmd(), identityUnlinkCmd(), dexSubjectCmd())
	return c
}

// issuerEnv are the variables that name the providers serve trusts: the external provider
// (--oauth-issuer) and the login provider (--login-provider-issuer, formerly --upstream-issuer).
var issuerEnv = []string{"NEEMIAS_OAUTH_ISSUER", "NEEMIAS_LOGIN_PROVIDER_ISSUER", "NEEMIAS_UPSTREAM_ISSUER"}

// trustedIssuers are the issuers serve trusts as this environment configures it, plus those
// named with --trusted-issuer (for a shell without the server's environment).
func trustedIssuers(extra []string) []string {
	var out []string
	for _, name := range issuerEnv {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			out = append(out, oauth.NormalizeIssuer(v))
		}
	}
	for _, v := range extra {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, oauth.NormalizeIssuer(v))
		}
	}
	return out
}

// checkIssuer refuses an issuer that is not a URL serve could trust (https, or http on
// loopback), or that is not one of the trusted ones: a typo would make a link no token ever
// matches.
func checkIssuer(issuer string, trusted []string) error {
	u, err := url.Parse(issuer)
	loopback := err == nil && u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "::1" || u.Hostname() == "localhost")
	if err != nil || (u.Scheme != "https" && !loopback) || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--issuer %q is not an issuer URL (https, or http on loopback, without query or fragment), exactly as the provider's tokens carry it", issuer)
	}
	if len(trusted) == 0 {
		return fmt.Errorf("no trusted provider in this environment: set %s as serve has it, or name the server's --oauth-issuer (or --login-provider-issuer) with --trusted-issuer", strings.Join(issuerEnv[:2], " or "))
	}
	if !slices.Contains(trusted, oauth.NormalizeIssuer(issuer)) {
		return fmt.Errorf("--issuer %s is not a provider this server trusts (%s): its tokens would never be accepted", issuer, strings.Join(trusted, ", "))
	}
	return nil
}

// linkedUser is the local user an (issuer, subject) is linked to.
type linkedUser struct {
	churchID, userID uuid.UUID
	email, role      string
}

func currentLink(ctx context.Context, st *store.Store, issuer, subject string) (linkedUser, bool, error) {
	var l linkedUser
	err := st.Pool().QueryRow(ctx, `SELECT ui.church_id, ui.user_id, u.email, u.role
		FROM oauth_upstream_identities ui JOIN users u ON u.church_id = ui.church_id AND u.id = ui.user_id
		WHERE ui.issuer = $1 AND ui.subject = $2`, issuer, subject).Scan(&l.churchID, &l.userID, &l.email, &l.role)
	if errors.Is(err, pgx.ErrNoRows) {
		return linkedUser{}, false, nil
	}
	return l, err == nil, err
}

func identityLinkCmd() *cobra.Command {
	var (
		dbf                    dbFlags
		email, issuer, subject string
		trusted                []string
		force                  bool
	)
	c := &cobra.Command{
		Use:   "link",
		Short: "Let the provider's account (issuer + subject) log in as the local user with this email",
		Long: `Let the provider's account (issuer + subject) log in as the local user with this email.

The issuer must be one the server trusts: $NEEMIAS_OAUTH_ISSUER or $NEEMIAS_LOGIN_PROVIDER_ISSUER
of this environment (as serve reads them), or --trusted-issuer. An account already linked to
another user is not moved without --force. The subject is the provider's "sub" claim: the
server's log names it when an unlinked account is refused; docs/external-provider.md says
where each provider shows it (for Dex: neemias-mcp identity dex-subject).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if email == "" || issuer == "" || subject == "" {
				return fmt.Errorf("--email, --issuer and --subject are required")
			}
			if err := checkIssuer(issuer, trustedIssuers(trusted)); err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			var cands []db.LoginCandidatesRow
			err = st.InTx(cmd.Context(), store.Anonymous, func(ctx context.Context, tx pgx.Tx) error {
				var err error
				cands, err = db.New(tx).LoginCandidates(ctx, email)
				return err
			})
			if err != nil {
				return err
			}
			switch len(cands) {
			case 0:
				return fmt.Errorf("no enabled account with email %q", email)
			case 1:
			default:
				return fmt.Errorf("email %q has accounts in %d churches; linking is per account and such accounts are not supported", email, len(cands))
			}
			to := cands[0]
			prev, linked, err := currentLink(cmd.Context(), st, oauth.NormalizeIssuer(issuer), subject)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case linked && prev.churchID == to.ChurchID && prev.userID == to.ID:
				fmt.Fprintf(out, "%s %s is already linked to user %s (%s)\n", issuer, subject, to.ID, to.Role)
				return nil
			case linked && !force:
				where := "the same church"
				if prev.churchID != to.ChurchID {
					where = "church " + prev.churchID.String()
				}
				return fmt.Errorf("%s %s is already linked to user %s (%s, %s) in %s; --force moves the link to %s", issuer, subject, prev.userID, prev.email, prev.role, where, email)
			}
			if err := oauth.LinkUpstreamIdentity(cmd.Context(), st, issuer, subject, to.ChurchID, to.ID); err != nil {
				return err
			}
			if linked {
				fmt.Fprintf(out, "moved %s %s from user %s (%s) to user %s (%s)\n", issuer, subject, prev.userID, prev.email, to.ID, to.Role)
				return nil
			}
			fmt.Fprintf(out, "linked %s %s to user %s (%s)\n", issuer, subject, to.ID, to.Role)
			return nil
		},
	}
	dbf.add(c)
	c.Flags().StringVar(&email, "email", "", "the local user's email")
	c.Flags().StringVar(&issuer, "issuer", "", "the provider's issuer URL, exactly as in its tokens")
	c.Flags().StringVar(&subject, "subject", "", "the account's subject (sub claim) at the provider")
	c.Flags().BoolVar(&force, "force", false, "move a link that already names another user (of this or another church)")
	c.Flags().StringSliceVar(&trusted, "trusted-issuer", nil, "an issuer the server trusts, when this shell lacks its $NEEMIAS_OAUTH_ISSUER / $NEEMIAS_LOGIN_PROVIDER_ISSUER (repeatable)")
	return c
}

func identityListCmd() *cobra.Command {
	var (
		dbf           dbFlags
		issuer, email string
	)
	c := &cobra.Command{
		Use:   "list",
		Short: "List the linked provider accounts (issuer, subject, local user, role, church)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			rows, err := st.Pool().Query(cmd.Context(), `SELECT ui.issuer, ui.subject, ui.user_id, u.email, u.role, ui.church_id, u.disabled_at IS NOT NULL, ui.created_at
				FROM oauth_upstream_identities ui JOIN users u ON u.church_id = ui.church_id AND u.id = ui.user_id
				WHERE ($1 = '' OR ui.issuer = $1) AND ($2 = '' OR lower(u.email) = lower($2))
				ORDER BY ui.issuer, u.email, ui.subject`, oauth.NormalizeIssuer(issuer), email)
			if err != nil {
				return err
			}
			defer rows.Close()
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ISSUER\tSUBJECT\tUSER\tEMAIL\tROLE\tCHURCH\tLINKED")
			n := 0
			for rows.Next() {
				var (
					iss, sub, mail, role string
					user, church         uuid.UUID
					disabled             bool
					at                   time.Time
				)
				if err := rows.Scan(&iss, &sub, &user, &mail, &role, &church, &disabled, &at); err != nil {
					return err
				}
				if disabled {
					role += " (disabled)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", iss, sub, user, mail, role, church, at.UTC().Format(time.DateOnly))
				n++
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d linked accounts\n", n)
			return nil
		},
	}
	dbf.add(c)
	c.Flags().StringVar(&issuer, "issuer", "", "only this provider's accounts")
	c.Flags().StringVar(&email, "email", "", "only the links of the local user with this email")
	return c
}

func identityUnlinkCmd() *cobra.Command {
	var (
		dbf             dbFlags
		issuer, subject string
	)
	c := &cobra.Command{
		Use:   "unlink",
		Short: "Remove the link of a provider account (issuer + subject): its tokens are refused from the next request on",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if issuer == "" || subject == "" {
				return fmt.Errorf("--issuer and --subject are required")
			}
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			var user uuid.UUID
			err = st.Pool().QueryRow(cmd.Context(), `DELETE FROM oauth_upstream_identities WHERE issuer = $1 AND subject = $2 RETURNING user_id`,
				oauth.NormalizeIssuer(issuer), subject).Scan(&user)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("%s %s is not linked (neemias-mcp identity list shows the links)", issuer, subject)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "unlinked %s %s from user %s\n", issuer, subject, user)
			return nil
		},
	}
	dbf.add(c)
	c.Flags().StringVar(&issuer, "issuer", "", "the provider's issuer URL")
	c.Flags().StringVar(&subject, "subject", "", "the account's subject")
	return c
}

// dexSubjectCmd computes (or reads) the "sub" Dex gives an account: not the user id the
// connector knows, but base64url (no padding) of a protobuf message holding that id (field
// 1) and the connector id (field 2), e.g. for the local password connector's user
// 08a8684b-db88-4b73-90a9-3cd1661f5466, CiQwOGE4Njg0Yi1kYjg4LTRiNzMtOTBhOS0zY2QxNjYxZjU0NjYSBWxvY2Fs.
func dexSubjectCmd() *cobra.Command {
	var userID, connector, decode string
	c := &cobra.Command{
		Use:   "dex-subject",
		Short: "Print the sub Dex gives the account with this connector user id (--user-id, --connector), or decode one (--decode)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if decode != "" {
				u, conn, err := decodeDexSubject(decode)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "user id %s, connector %s\n", u, conn)
				return nil
			}
			if userID == "" || connector == "" {
				return errors.New("--user-id and --connector are required (or --decode SUB)")
			}
			fmt.Fprintln(cmd.OutOrStdout(), encodeDexSubject(userID, connector))
			return nil
		},
	}
	c.Flags().StringVar(&userID, "user-id", "", "the account's id at the connector (the local connector's userID; LDAP's, GitHub's user id …)")
	c.Flags().StringVar(&connector, "connector", "", "the connector's id in Dex's configuration (local for staticPasswords)")
	c.Flags().StringVar(&decode, "decode", "", "a Dex sub to read back")
	return c
}

func encodeDexSubject(userID, connector string) string {
	var b []byte
	for i, s := range []string{userID, connector} {
		b = append(b, byte(i+1)<<3|2) // field i+1, length-delimited
		b = appendVarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func decodeDexSubject(sub string) (userID, connector string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(sub)
	if err != nil {
		return "", "", errors.New("not a Dex subject: not unpadded base64url")
	}
	fields := map[byte]string{}
	for len(b) > 0 {
		tag := b[0]
		b = b[1:]
		if tag&7 != 2 {
			return "", "", errors.New("not a Dex subject: unexpected protobuf field")
		}
		var n uint64
		var shift uint
		for {
			if len(b) == 0 || shift > 28 {
				return "", "", errors.New("not a Dex subject: truncated")
			}
			c := b[0]
			b = b[1:]
			n |= uint64(c&0x7f) << shift
			if c < 0x80 {
				break
			}
			shift += 7
		}
		if uint64(len(b)) < n {
			return "", "", errors.New("not a Dex subject: truncated")
		}
		fields[tag>>3], b = string(b[:n]), b[n:]
	}
	if fields[1] == "" || fields[2] == "" {
		return "", "", errors.New("not a Dex subject: no user id or connector id")
	}
	return fields[1], fields[2], nil
}
