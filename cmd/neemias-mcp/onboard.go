package main

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/google/uuid"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/onboard"
	"github.com/neemias/neemias-mcp/internal/password"
	"github.com/neemias/neemias-mcp/internal/store"
)

// The operator's commands that set a church up (internal/onboard): church, user, class and
// volunteer. Each runs in one transaction as the schema owner and is audited as an operator
// action.

func churchCmd() *cobra.Command {
	c := &cobra.Command{Use: "church", Short: "Create and list churches"}
	var (
		dbf                dbFlags
		name, slug, tzName string
	)
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a church (its name, the slug other commands name it by, its time zone)",
		Example: `  neemias-mcp church create --name "Igreja Batista Central" --slug central
  neemias-mcp church create --name "Comunidade Esperança" --slug esperanca-manaus --time-zone America/Manaus`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &dbf)
			if err != nil {
				return err
			}
			defer closeDB()
			ch, err := onboard.CreateChurch(cmd.Context(), st, onboard.NewChurch{Name: name, Slug: slug, TimeZone: tzName})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created church %q (slug %s, time zone %s, id %s)\nnext: neemias-mcp user add --church %s --email EMAIL --role ADMIN\n",
				ch.Name, ch.Slug, ch.TimeZone, ch.ID, ch.Slug)
			return nil
		},
	}
	dbf.add(create)
	create.Flags().StringVar(&name, "name", "", "the church's name (required)")
	create.Flags().StringVar(&slug, "slug", "", "short name for the other commands: lower-case letters, digits, hyphens (required)")
	create.Flags().StringVar(&tzName, "time-zone", onboard.DefaultTimeZone, "IANA time zone: what \"today\" is for check-ins and ages")
	mustRequire(create, "name", "slug")

	var listDB dbFlags
	list := &cobra.Command{
		Use: "list", Short: "List the churches", Args: cobra.NoArgs,
		Example: "  neemias-mcp church list",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &listDB)
			if err != nil {
				return err
			}
			defer closeDB()
			cs, err := onboard.ListChurches(cmd.Context(), st)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "SLUG\tNAME\tTIME ZONE\tID")
			for _, ch := range cs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ch.Slug, ch.Name, ch.TimeZone, ch.ID)
			}
			return tw.Flush()
		},
	}
	listDB.add(list)
	c.AddCommand(create, list)
	return c
}

func userCmd() *cobra.Command {
	c := &cobra.Command{Use: "user", Short: "Add, list and disable a church's accounts; set-password links"}
	roles := strings.Join(scopes.Roles(), ", ")

	var (
		addDB                         dbFlags
		church, email, role, dispName string
		addLink                       linkFlags
		localLogin                    bool
	)
	add := &cobra.Command{
		Use:   "add",
		Short: "Add an account (" + roles + "); for a local login, print a one-time set-password link",
		Long: `Add an account to a church, with one of the spec's roles (` + roles + `).

For a local login (the default) it prints, once, a set-password link to the server's page
<public-url>/set-password?code=… and the code itself: send it to the person through a private
channel; they open it, choose their password (twice) and then sign in from their agent. The
code is single use, bound to this account and valid for --expires-in (default 72h); only its
hash is stored, so it cannot be shown again: user reset-password issues a new one. No password
ever goes on the command line or through the operator. (The operator's alternative, user
set-password, reads one from the terminal or standard input.)

An account that logs in through the church's identity provider needs no password: add it with
--local-login=false and link the provider account with identity link.`,
		Example: `  neemias-mcp user add --church central --email pastora@central.example --role ADMIN --name "Pastora Ana" --public-url https://mcp.central.example
  neemias-mcp user add --church central --email secretaria@central.example --role CADASTRO --expires-in 24h
  neemias-mcp user add --church central --email tio.joao@google.example --role VOLUNTARIO --local-login=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			publicURL, err := addLink.check(localLogin)
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &addDB)
			if err != nil {
				return err
			}
			defer closeDB()
			in := onboard.NewUser{Email: email, Role: role, DisplayName: dispName}
			if !localLogin {
				u, err := onboard.AddUser(cmd.Context(), st, church, in)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added %s (%s, id %s) to church %s, without a local password\nprovider login: link the account with neemias-mcp identity link\n",
					u.Email, u.Role, u.ID, church)
				return nil
			}
			u, pc, err := onboard.AddLocalUser(cmd.Context(), st, church, in, addLink.ttl)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added %s (%s, id %s) to church %s\n", u.Email, u.Role, u.ID, church)
			printLink(cmd, pc, publicURL, church)
			return nil
		},
	}
	addDB.add(add)
	addLink.add(add)
	add.Flags().StringVar(&church, "church", "", "the church's slug (required)")
	add.Flags().StringVar(&email, "email", "", "the account's email, its login (required)")
	add.Flags().StringVar(&role, "role", "", "one of "+roles+" (required)")
	add.Flags().StringVar(&dispName, "name", "", "display name (default: the email before the @)")
	add.Flags().BoolVar(&localLogin, "local-login", true, "print a one-time set-password link (false: the account logs in through the church's identity provider)")
	mustRequire(add, "church", "email", "role")

	var (
		rsDB              dbFlags
		rsChurch, rsEmail string
		rsLink            linkFlags
	)
	reset := &cobra.Command{
		Use:   "reset-password",
		Short: "Print a new one-time set-password link for an account (revokes its earlier unused links)",
		Long: `Print, once, a new set-password link for an enabled account and its code: for a forgotten
password or a link that expired. Earlier links of the account that were not used stop working.
The current password, if any, keeps working until the new link is used; using it ends the
account's sessions (its OAuth grants are revoked, so its agents sign in again).`,
		Example: `  neemias-mcp user reset-password --church central --email secretaria@central.example --public-url https://mcp.central.example`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			publicURL, err := rsLink.check(true)
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &rsDB)
			if err != nil {
				return err
			}
			defer closeDB()
			pc, err := onboard.IssuePasswordCode(cmd.Context(), st, rsChurch, rsEmail, rsLink.ttl)
			if err != nil {
				return err
			}
			printLink(cmd, pc, publicURL, rsChurch)
			return nil
		},
	}
	rsDB.add(reset)
	rsLink.add(reset)
	reset.Flags().StringVar(&rsChurch, "church", "", "the church's slug (required)")
	reset.Flags().StringVar(&rsEmail, "email", "", "the account's email (required)")
	mustRequire(reset, "church", "email")

	var (
		disDB               dbFlags
		disChurch, disEmail string
	)
	disable := &cobra.Command{
		Use:     "disable",
		Short:   "Disable an account: no more logins, its OAuth grants and tokens revoked",
		Example: "  neemias-mcp user disable --church central --email tio.joao@central.example",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &disDB)
			if err != nil {
				return err
			}
			defer closeDB()
			u, changed, err := onboard.DisableUser(cmd.Context(), st, disChurch, disEmail)
			if err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(cmd.OutOrStdout(), "%s was disabled already (since %s)\n", u.Email, u.DisabledAt.Format("2006-01-02 15:04"))
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "disabled %s; its grants are revoked\n", u.Email)
			return nil
		},
	}
	disDB.add(disable)
	disable.Flags().StringVar(&disChurch, "church", "", "the church's slug (required)")
	disable.Flags().StringVar(&disEmail, "email", "", "the account's email (required)")
	mustRequire(disable, "church", "email")

	var (
		listDB     dbFlags
		listChurch string
	)
	list := &cobra.Command{
		Use: "list", Short: "List a church's accounts", Args: cobra.NoArgs,
		Example: "  neemias-mcp user list --church central",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &listDB)
			if err != nil {
				return err
			}
			defer closeDB()
			us, err := onboard.ListUsers(cmd.Context(), st, listChurch)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "EMAIL\tROLE\tNAME\tPASSWORD\tSTATUS")
			for _, u := range us {
				pw, status := "no", "enabled"
				if u.HasPassword {
					pw = "set"
				}
				if u.LinkUntil != nil {
					pw += ", link until " + u.LinkUntil.UTC().Format("2006-01-02 15:04 UTC")
				}
				if u.DisabledAt != nil {
					status = "disabled " + u.DisabledAt.Format("2006-01-02")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Email, u.Role, u.DisplayName, pw, status)
			}
			return tw.Flush()
		},
	}
	listDB.add(list)
	list.Flags().StringVar(&listChurch, "church", "", "the church's slug (required)")
	mustRequire(list, "church")

	var (
		pwDB              dbFlags
		pwChurch, pwEmail string
	)
	setPassword := &cobra.Command{
		Use:   "set-password",
		Short: "Set an account's local password, read from the terminal (or the first line of standard input)",
		Long: fmt.Sprintf(`Set an account's local password: the operator's alternative to the set-password link of
user add and user reset-password, for when the person cannot open the link. The password is
read from the terminal, twice and without echo, or from the first line of standard input when
it is not a terminal; never from the command line, where the shell history and other users of
the machine would see it. At least %d characters. Only its argon2id hash is stored. Like a
used link, it revokes the account's unused links and ends its sessions (OAuth grants revoked).`, onboard.MinPasswordLen),
		Example: `  neemias-mcp user set-password --church central --email pastora@central.example
  gpg -d senha.gpg | neemias-mcp user set-password --church central --email pastora@central.example`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pw, err := readPassword(cmd)
			if err != nil {
				return err
			}
			st, closeDB, err := openStore(cmd.Context(), &pwDB)
			if err != nil {
				return err
			}
			defer closeDB()
			if err := onboard.SetPassword(cmd.Context(), st, pwChurch, pwEmail, pw); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "password set for %s\n", strings.ToLower(strings.TrimSpace(pwEmail)))
			return nil
		},
	}
	pwDB.add(setPassword)
	setPassword.Flags().StringVar(&pwChurch, "church", "", "the church's slug (required)")
	setPassword.Flags().StringVar(&pwEmail, "email", "", "the account's email (required)")
	mustRequire(setPassword, "church", "email")

	var (
		linkDB                        dbFlags
		linkChurch, linkEmail, linkTo string
	)
	linkGuardian := &cobra.Command{
		Use:     "link-guardian",
		Short:   "Tie a RESPONSAVEL account to its guardian record, so it sees that guardian's children",
		Example: "  neemias-mcp user link-guardian --church central --email mae.ana@central.example --guardian GUARDIAN_ID",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := uuid.Parse(linkTo)
			if err != nil {
				return fmt.Errorf("--guardian: not a guardian id (a UUID, from the child's record)")
			}
			st, closeDB, err := openStore(cmd.Context(), &linkDB)
			if err != nil {
				return err
			}
			defer closeDB()
			changed, err := onboard.LinkGuardian(cmd.Context(), st, linkChurch, linkEmail, id)
			if err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(cmd.OutOrStdout(), "%s was linked to guardian %s already\n", linkEmail, id)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "linked %s to guardian %s: the account now sees that guardian's children\n", linkEmail, id)
			return nil
		},
	}
	linkDB.add(linkGuardian)
	linkGuardian.Flags().StringVar(&linkChurch, "church", "", "the church's slug (required)")
	linkGuardian.Flags().StringVar(&linkEmail, "email", "", "the RESPONSAVEL account's email (required)")
	linkGuardian.Flags().StringVar(&linkTo, "guardian", "", "the guardian record's id (required)")
	mustRequire(linkGuardian, "church", "email", "guardian")

	c.AddCommand(add, disable, list, reset, setPassword, linkGuardian)
	return c
}

// linkFlags are the set-password link's flags of user add and user reset-password.
type linkFlags struct {
	publicURL string
	ttl       time.Duration
}

func (l *linkFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&l.publicURL, "public-url", "http://127.0.0.1:8080", "the server's base URL, as serve --public-url has it: the link goes to its /set-password page")
	c.Flags().DurationVar(&l.ttl, "expires-in", password.DefaultCodeTTL, "how long the link stays valid (from 5m to 720h)")
}

// check validates the flags when a link will be printed.
func (l *linkFlags) check(link bool) (string, error) {
	if !link {
		return "", nil
	}
	return onboard.CheckPublicURL(l.publicURL)
}

// printLink shows a just-issued code, the only time it is ever shown.
func printLink(cmd *cobra.Command, pc onboard.PasswordCode, publicURL, church string) {
	fmt.Fprintf(cmd.OutOrStdout(), `set-password link for %s (shown only now; single use; valid until %s):
  %s
code, if the link gets cut: %s
Send it to the person privately. A new one: neemias-mcp user reset-password --church %s --email %s
`, pc.User.Email, pc.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"), pc.Link(publicURL), pc.Code, church, pc.User.Email)
}

// readPassword reads a new password: from the terminal twice without echo, else the first
// line of standard input.
func readPassword(cmd *cobra.Command) (string, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(cmd.ErrOrStderr(), "new password: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		fmt.Fprint(cmd.ErrOrStderr(), "again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		if string(a) != string(b) {
			return "", errors.New("the two passwords differ; nothing was changed")
		}
		return string(a), nil
	}
	line, err := bufio.NewReaderSize(in, onboard.MaxPasswordLen+2).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on standard input (give it on the first line, or run in a terminal)")
	}
	return line, nil
}

func classCmd() *cobra.Command {
	c := &cobra.Command{Use: "class", Short: "Add and list a church's classes"}
	var (
		addDB          dbFlags
		church, name   string
		minAge, maxAge int
		addLimits      limitFlags
	)
	add := &cobra.Command{
		Use:   "add",
		Short: "Add a class for an age range (completed years, both ends included)",
		Long: `Add a class for an age range, in completed years, both ends included (0 to 18). Ranges may
overlap: a child is placed in the narrowest class whose range holds its age.`,
		Example: `  neemias-mcp class add --church central --name Berçário --min-age 0 --max-age 2
  neemias-mcp class add --church central --name "Primários" --min-age 6 --max-age 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &addDB)
			if err != nil {
				return err
			}
			defer closeDB()
			cl, err := onboard.AddClass(cmd.Context(), st, church, onboard.NewClass{Name: name, MinAge: minAge, MaxAge: maxAge, Limits: addLimits.of(cmd)})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added class %q (ages %d to %d, id %s) to church %s\n", cl.Name, cl.MinAge, cl.MaxAge, cl.ID, church)
			return nil
		},
	}
	addDB.add(add)
	add.Flags().StringVar(&church, "church", "", "the church's slug (required)")
	add.Flags().StringVar(&name, "name", "", "the class's name (required)")
	add.Flags().IntVar(&minAge, "min-age", 0, "youngest age, in completed years (required)")
	add.Flags().IntVar(&maxAge, "max-age", 0, "oldest age, in completed years (required)")
	mustRequire(add, "church", "name", "min-age", "max-age")
	addLimits.add(add)

	var (
		setDB     dbFlags
		setChurch string
		setName   string
		setLimits limitFlags
		setClear  []string
	)
	set := &cobra.Command{
		Use:   "set",
		Short: "Set a class's room limits: soft and firm capacity, children per volunteer",
		Long: `Set a class's room limits. Past the soft capacity a check-in succeeds with a warning; at the
firm capacity it is refused, naming the limit; past the children per volunteer (counting the
volunteers assigned to the class) it succeeds with a warning. Limits not given stay as they
are; --clear removes one. A capacity below the children in the class now is refused.`,
		Example: `  neemias-mcp class set --church central --name Maternal --soft-capacity 12 --firm-capacity 15 --per-volunteer 6
  neemias-mcp class set --church central --name Maternal --clear soft-capacity`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l := setLimits.of(cmd)
			l.Clear = setClear
			if l.SoftCapacity == nil && l.FirmCapacity == nil && l.PerVolunteer == nil && len(l.Clear) == 0 {
				return fmt.Errorf("give a limit to set (--soft-capacity, --firm-capacity, --per-volunteer) or --clear one")
			}
			st, closeDB, err := openStore(cmd.Context(), &setDB)
			if err != nil {
				return err
			}
			defer closeDB()
			cl, err := onboard.SetClassLimits(cmd.Context(), st, setChurch, setName, l)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "class %q of church %s: %s\n", cl.Name, setChurch, limitsText(cl))
			return nil
		},
	}
	setDB.add(set)
	set.Flags().StringVar(&setChurch, "church", "", "the church's slug (required)")
	set.Flags().StringVar(&setName, "name", "", "the class's name, as class list shows it (required)")
	set.Flags().StringSliceVar(&setClear, "clear", nil, "remove a limit: soft-capacity, firm-capacity or per-volunteer")
	setLimits.add(set)
	mustRequire(set, "church", "name")

	var (
		listDB     dbFlags
		listChurch string
	)
	list := &cobra.Command{
		Use: "list", Short: "List a church's classes, with their volunteers and children", Args: cobra.NoArgs,
		Example: "  neemias-mcp class list --church central",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &listDB)
			if err != nil {
				return err
			}
			defer closeDB()
			cs, err := onboard.ListClasses(cmd.Context(), st, listChurch)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tAGES\tVOLUNTEERS\tCHILDREN\tSTATUS\tLIMITS")
			for _, cl := range cs {
				status := "active"
				if cl.ArchivedAt != nil {
					status = "archived"
				}
				fmt.Fprintf(tw, "%s\t%d-%d\t%d\t%d\t%s\t%s\n", cl.Name, cl.MinAge, cl.MaxAge, cl.Volunteers, cl.Children, status, limitsText(cl))
			}
			return tw.Flush()
		},
	}
	listDB.add(list)
	list.Flags().StringVar(&listChurch, "church", "", "the church's slug (required)")
	mustRequire(list, "church")
	c.AddCommand(add, set, list)
	return c
}

// limitFlags are the room-limit flags of class add and class set; only those given count.
type limitFlags struct{ soft, firm, per int }

func (f *limitFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.soft, "soft-capacity", 0, "children past which a check-in warns")
	cmd.Flags().IntVar(&f.firm, "firm-capacity", 0, "children at which the room is full: check-ins are refused")
	cmd.Flags().IntVar(&f.per, "per-volunteer", 0, "children per assigned volunteer past which a check-in warns")
}

// of is the limits given on the command line (a flag not given is nil; a given 0 is refused
// by onboard, naming the flag).
func (f *limitFlags) of(cmd *cobra.Command) onboard.ClassLimits {
	var l onboard.ClassLimits
	given := func(name string, v int) *int {
		if !cmd.Flags().Changed(name) {
			return nil
		}
		return &v
	}
	l.SoftCapacity, l.FirmCapacity, l.PerVolunteer = given("soft-capacity", f.soft), given("firm-capacity", f.firm), given("per-volunteer", f.per)
	return l
}

// limitsText renders a class's limits for people: "soft 12, firm 15, 6 per volunteer", or "none".
func limitsText(cl onboard.Class) string {
	var parts []string
	if cl.SoftCapacity != nil {
		parts = append(parts, fmt.Sprintf("soft %d", *cl.SoftCapacity))
	}
	if cl.FirmCapacity != nil {
		parts = append(parts, fmt.Sprintf("firm %d", *cl.FirmCapacity))
	}
	if cl.PerVolunteer != nil {
		parts = append(parts, fmt.Sprintf("%d per volunteer", *cl.PerVolunteer))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func volunteerCmd() *cobra.Command {
	c := &cobra.Command{Use: "volunteer", Short: "Assign VOLUNTARIO accounts to the classes they serve"}
	mk := func(use, short, example string, op func(cmd *cobra.Command, st *store.Store, church, email, class string) error) *cobra.Command {
		var (
			dbf                  dbFlags
			church, email, class string
		)
		sub := &cobra.Command{
			Use: use, Short: short, Example: example, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				st, closeDB, err := openStore(cmd.Context(), &dbf)
				if err != nil {
					return err
				}
				defer closeDB()
				return op(cmd, st, church, email, class)
			},
		}
		dbf.add(sub)
		sub.Flags().StringVar(&church, "church", "", "the church's slug (required)")
		sub.Flags().StringVar(&email, "email", "", "the VOLUNTARIO account's email (required)")
		sub.Flags().StringVar(&class, "class", "", "the class's name, as class list shows it (required)")
		mustRequire(sub, "church", "email", "class")
		return sub
	}
	assign := mk("assign", "Let a volunteer see and check in the children of a class",
		`  neemias-mcp volunteer assign --church central --email tio.joao@central.example --class Primários`,
		func(cmd *cobra.Command, st *store.Store, church, email, class string) error {
			changed, err := onboard.AssignVolunteer(cmd.Context(), st, church, email, class)
			if err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(cmd.OutOrStdout(), "%s serves class %q already\n", email, class)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s now serves class %q\n", email, class)
			return nil
		})
	unassign := mk("unassign", "End a volunteer's assignment to a class",
		`  neemias-mcp volunteer unassign --church central --email tio.joao@central.example --class Primários`,
		func(cmd *cobra.Command, st *store.Store, church, email, class string) error {
			changed, err := onboard.UnassignVolunteer(cmd.Context(), st, church, email, class)
			if err != nil {
				return err
			}
			if !changed {
				fmt.Fprintf(cmd.OutOrStdout(), "%s was not assigned to class %q; nothing changed\n", email, class)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s no longer serves class %q\n", email, class)
			return nil
		})
	c.AddCommand(assign, unassign)
	return c
}

// mustRequire marks flags required; a name that is not a flag is a programming error.
func mustRequire(c *cobra.Command, names ...string) {
	for _, n := range names {
		if err := c.MarkFlagRequired(n); err != nil {
			panic(err)
		}
	}
}

// consentTextCmd registers and lists the consent texts of a church: the versions a roster's
// "Sim"/"Yes" consent cells may be recorded against (import roster --consent-version).
func consentTextCmd() *cobra.Command {
	c := &cobra.Command{Use: "consent-text", Short: "Register and list a church's consent texts (the versions of its LGPD consent term)"}
	var (
		addDB                  dbFlags
		church, version, title string
	)
	add := &cobra.Command{
		Use:   "add",
		Short: "Register a version of the church's consent term",
		Long: `Register a version of the consent term guardians sign (LGPD art. 14). A roster whose consent
column says "Sim"/"Yes" (a Google Form's checkbox, for instance) is imported with
--consent-version naming one of these versions: the consent records then say which text the
guardian agreed to. A registered text is never changed; new wording is a new version.`,
		Example: `  neemias-mcp consent-text add --church central --version termo-2025-01 --title "Termo de consentimento LGPD 2025"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &addDB)
			if err != nil {
				return err
			}
			defer closeDB()
			t, err := onboard.AddConsentText(cmd.Context(), st, church, version, title)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "registered consent text %s (%q, id %s) of church %s\nnext: neemias-mcp import roster FILE.csv --church %s --consent-version %s\n",
				t.Version, t.Title, t.ID, church, church, t.Version)
			return nil
		},
	}
	addDB.add(add)
	add.Flags().StringVar(&church, "church", "", "the church's slug (required)")
	add.Flags().StringVar(&version, "version", "", "the text's version, as the import names it: letters, digits, . _ / : - (required)")
	add.Flags().StringVar(&title, "title", "", "the text's title (required)")
	mustRequire(add, "church", "version", "title")

	var (
		listDB     dbFlags
		listChurch string
	)
	list := &cobra.Command{
		Use: "list", Short: "List a church's consent texts", Args: cobra.NoArgs,
		Example: "  neemias-mcp consent-text list --church central",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &listDB)
			if err != nil {
				return err
			}
			defer closeDB()
			ts, err := onboard.ListConsentTexts(cmd.Context(), st, listChurch)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tTITLE\tREGISTERED")
			for _, t := range ts {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Version, t.Title, t.RegisteredAt.UTC().Format("2006-01-02 15:04 UTC"))
			}
			return tw.Flush()
		},
	}
	listDB.add(list)
	list.Flags().StringVar(&listChurch, "church", "", "the church's slug (required)")
	mustRequire(list, "church")
	c.AddCommand(add, list)
	return c
}
