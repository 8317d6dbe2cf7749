// Command neemias-mcp is the Neemias MCP server: `serve` runs it, `migrate` manages the
// schema, `seed` writes demo data, `token` mints a development access token. A thin CLI over
// internal/server, internal/store, internal/seed and internal/tokens.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/gen/scopes"
	"github.com/neemias/neemias-mcp/internal/capability"
	"github.com/neemias/neemias-mcp/internal/config"
	"github.com/neemias/neemias-mcp/internal/devdb"
	"github.com/neemias/neemias-mcp/internal/logging"
	"github.com/neemias/neemias-mcp/internal/logic"
	"github.com/neemias/neemias-mcp/internal/oauth"
	"github.com/neemias/neemias-mcp/internal/principal"
	"github.com/neemias/neemias-mcp/internal/seed"
	"github.com/neemias/neemias-mcp/internal/server"
	"github.com/neemias/neemias-mcp/internal/store"
	"github.com/neemias/neemias-mcp/internal/upstream"
)

// version is the server version reported to clients: the spec's server.version.
const version = capapi.ServerVersion

func main() {
	// One JSON log format from the first line on (configure re-installs it at --log-level); a
	// failure is logged as such a line too.
	logging.Install(logging.New(os.Stderr, &logLevel))
	r := root()
	r.SilenceErrors = true
	if err := r.Execute(); err != nil {
		slog.Error("neemias-mcp: "+err.Error(), "command", strings.Join(os.Args[1:2], ""))
		os.Exit(1)
	}
}

type dbFlags struct {
	url     string
	dataDir string
}

func (f *dbFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.url, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default: $DATABASE_URL, else 127.0.0.1:5432, else a private cluster)")
	c.Flags().StringVar(&f.dataDir, "data-dir", config.DefaultDataDir, "folder of the private cluster, when one is needed")
	config.MarkSecret(c.Flags(), "database-url")
}

func (f *dbFlags) resolve(ctx context.Context, log *slog.Logger) (*devdb.DB, error) {
	return devdb.Resolve(ctx, devdb.Options{URL: f.url, DataDir: f.dataDir, Logger: log})
}

// openStore resolves the database, migrates it and opens the store; the returned function
// closes both.
func openStore(ctx context.Context, f *dbFlags) (*store.Store, func(), error) {
	d, err := f.resolve(ctx, logger())
	if err != nil {
		return nil, nil, err
	}
	st, err := migrateAndOpen(ctx, d.URL, store.New)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return st, func() { st.Close(); d.Close() }, nil
}

// migrateAndOpen migrates the database at url (store.Migrate) and opens the store with open,
// the two at once: each mostly waits for a connection of its own (a PostgreSQL backend
// starting), so a start pays for one wait instead of two. The store is returned only once the
// migrations are applied, and nothing is served before it is; on an error it is closed.
func migrateAndOpen(ctx context.Context, url string, open func(context.Context, string) (*store.Store, error)) (*store.Store, error) {
	type opened struct {
		st  *store.Store
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		st, err := open(ctx, url)
		ch <- opened{st, err}
	}()
	_, err := store.Migrate(ctx, url)
	o := <-ch
	if err != nil { // the migration's error first, as when it ran alone
		if o.st != nil {
			o.st.Close()
		}
		return nil, err
	}
	return o.st, o.err
}

func root() *cobra.Command {
	var level string
	r := &cobra.Command{Use: "neemias-mcp", Short: "Neemias MCP server", SilenceUsage: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return configure(cmd, &level) }}
	config.AddLogFlags(r.PersistentFlags(), &level)
	r.AddCommand(serveCmd(), migrateCmd(), seedCmd(), tokenCmd(), identityCmd(), keysCmd(), churchCmd(), userCmd(), classCmd(), volunteerCmd(), consentTextCmd(), importCmd(), auditCmd(), subjectCmd(), exportCmd(), apikeyCmd(), upstreamCmd(), incidentCmd(), toolCmd())
	hideSecretDefaults(r) // helpsecrets.go
	return r
}

// configure completes the command's flags from the environment (every flag of serve; the
// database and log settings of the others) and installs the one JSON log format.
func configure(cmd *cobra.Command, level *string) error {
	var only []string
	if cmd.Name() != "serve" {
		only = []string{"database-url", "data-dir", "log-level"}
		if cmd.Flags().Lookup("upstreams") != nil { // upstream check: what serve would read
			only = append(only, upstreamFlagNames...)
		}
	}
	if err := config.ApplyWarn(cmd.ErrOrStderr(), cmd.Flags(), os.LookupEnv, only...); err != nil {
		return err
	}
	l, err := logging.ParseLevel(*level)
	if err != nil {
		return fmt.Errorf("%s %v", config.Setting("log-level"), err)
	}
	logLevel.Set(l)
	logging.Install(logging.New(os.Stderr, &logLevel)) // the process's standard error, whatever the command's writer
	return nil
}

// logLevel is the process's level (--log-level), shared by every logger() handler.
var logLevel slog.LevelVar

func logger() *slog.Logger { return slog.Default() }

func serveCmd() *cobra.Command {
	var (
		cfg config.Serve
		as  authServerFlags
		ext externalFlags
		up  upstreamFlags
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP (POST /mcp, /sse) and REST (/api/v1)",
		Long: `Serve MCP (POST /mcp, /sse) and REST (/api/v1).

Every setting below is a flag and an environment variable ([$NEEMIAS_…]); a flag given on the
command line wins. Secrets can be read from files (--…-file). Logs are JSON lines on standard
error; /healthz is liveness, /readyz readiness, /metrics Prometheus metrics.

By default (built-in mode) the server is also the OAuth authorization server of its clients:
/authorize, /token, /register, the login and consent pages, signing tokens with its own key.

With --oauth-issuer (external provider mode) it is a pure resource server of that OpenID
Connect provider: none of those endpoints exist, the protected-resource metadata names the
provider, and /mcp and /api accept only the provider's access tokens (aud: the MCP URL or
--oauth-audience), verified against its JWKS. Each provider account (issuer + subject) must be
linked to a local user first: neemias-mcp identity link --issuer ISSUER --subject SUB --email E.
Church and role are the local user's unless --oauth-church-claim / --oauth-role-claim map them.
In built-in mode the login page can also offer the church's own OpenID Connect provider
(--login-provider-*; formerly --upstream-issuer and friends, deprecated).

Governed upstream MCP servers (--upstream*, off by default) are another feature: with
--upstreams on, the tools the spec's upstreams: section declares are offered through a client
that allowlists them and scans personal data both ways (docs/operations.md). The runtime
gives their URLs and credentials and may only tighten the spec's personal-data policy.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.LogLevel = cmd.Flag("log-level").Value.String()
			if err := cfg.Validate(); err != nil {
				return err
			}
			x, err := ext.config()
			if err != nil {
				return err
			}
			if err := checkModes(cmd, x, &as); err != nil {
				return err
			}
			ups, err := up.config()
			if err != nil {
				return err
			}
			ctx, got, stop := notifyShutdown(cmd.Context())
			defer stop()
			return serve(ctx, cmd, cfg, as.options(), x, ups, got)
		},
	}
	cfg.CheckinWindowDays = logic.DefaultCheckinWindowDays // the business rule's default, shown by --help
	cfg.AddFlags(c.Flags())
	as.add(c)
	ext.add(c)
	up.add(c.Flags())
	config.MarkSecret(c.Flags(), "login-provider-client-secret")
	for _, r := range loginProviderRenames {
		config.Deprecate(c.Flags(), r[0], r[1])
	}
	config.DocumentEnv(c.Flags())
	return c
}

// serve runs the server of cfg until ctx ends.
func serve(ctx context.Context, cmd *cobra.Command, cfg config.Serve, as oauth.Options, x *server.ExternalAuth, ups upstream.Config, got func() os.Signal) error {
	log := logger()
	d, err := devdb.Resolve(ctx, devdb.Options{URL: cfg.DatabaseURL, DataDir: cfg.DataDir, Logger: log})
	if err != nil {
		return err
	}
	defer d.Close()
	ob, err := observability(ctx, cfg, version)
	if err != nil {
		return err
	}
	defer ob.shutdown()
	st, err := migrateAndOpen(ctx, d.URL, ob.openStore)
	if err != nil {
		return err
	}
	defer st.Close()
	if cfg.Demo {
		rep, err := seed.Demo(ctx, st.Pool())
		if err != nil {
			return err
		}
		if rep.Churches > 0 {
			log.Info("seeded the demo church", "rows", rep.Rows())
		}
		if _, err := store.AnalyzeStale(ctx, st.Pool()); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("%s: listening on %s: %w", config.Setting("addr"), cfg.Addr, err)
	}
	publicURL := cfg.PublicURL
	if publicURL == "" {
		publicURL = "http://" + ln.Addr().String()
	}
	srv, err := server.New(ctx, server.Config{
		PublicURL: publicURL, AllowedOrigins: cfg.AllowedOrigins, Logger: log, Version: version, AuthServer: as, External: x,
		RatePerSecond: cfg.RateLimit, RateBurst: cfg.RateBurst, RateLimitOff: cfg.RateLimit == 0, CheckinWindowDays: cfg.CheckinWindowDays,
		Metrics: ob.metrics, MetricsOnMain: cfg.MetricsOnMain(), Tracer: ob.tracer,
		MCPHost: cfg.MCPHost, APIHost: cfg.APIHost, TokenCheckCache: cfg.TokenCheckCache, Upstreams: ups,
		MCPEngineOnly: cfg.MCPEngineOnly,
	}, st)
	if err != nil {
		return err
	}
	defer srv.CloseUpstreams()
	if cfg.Demo {
		if err := printInstructions(cmd, srv, d); err != nil {
			return err
		}
	}
	if cfg.Metrics && cfg.MetricsAddr != "" {
		if err := ob.serveMetrics(ctx, cfg.MetricsAddr, log); err != nil {
			return err
		}
	}
	if cfg.Metrics && !cfg.MetricsServed() {
		log.Info("metrics are not served: set --metrics-addr (a listener of their own) or --metrics-public (the main one)")
	}
	// Slow clients (slowloris) are cut off; no WriteTimeout, SSE responses may legitimately last.
	hs := &http.Server{Handler: srv.Handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: logging.StdLogger(log, slog.LevelWarn)}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		drain := cfg.Drain
		if got() != syscall.SIGTERM {
			drain = 0 // Ctrl-C: a person is waiting, no balancer
		}
		drainThenShutdown(log, srv, hs, drain, cfg.ShutdownTimeout)
	}()
	log.Info("serving", "mcp", srv.ResourceURL, "authorization_server", srv.AuthorizationServer, "database", d.Source)
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-stopped // the requests in flight finish before the store closes
	return nil
}

type demoUser struct {
	email string
	id    uuid.UUID
	role  string
}

var demoUsers = []demoUser{
	{seed.DemoAdminEmail, seed.DemoAdminID, "ADMIN"},
	{seed.DemoCadastroEmail, seed.DemoCadastroID, "CADASTRO"},
	{seed.DemoVoluntarioEmail, seed.DemoVoluntarioID, "VOLUNTARIO"},
	{seed.DemoResponsavelEmail, seed.DemoResponsavelID, "RESPONSAVEL"},
}

func mintFor(srv *server.Server, u demoUser, ttl time.Duration) (string, error) {
	all, _ := scopes.RoleScopes(u.role)
	return srv.Minter.Mint(principal.Principal{UserID: u.id, ChurchID: seed.DemoChurchID, Role: u.role, Scopes: all, ClientID: server.DevTokenClient}, ttl)
}

func migrateCmd() *cobra.Command {
	c := &cobra.Command{Use: "migrate", Short: "Apply or list schema migrations"}
	c.AddCommand(
		migrationsCmd("up", "Apply pending migrations (a no-op when up to date)", store.Migrate),
		migrationsCmd("status", "List migrations and whether each is applied", store.MigrationStatus),
	)
	return c
}

// migrationsCmd runs one migration operation and lists the migrations it reports.
func migrationsCmd(use, short string, op func(context.Context, string) ([]store.Migration, error)) *cobra.Command {
	var db dbFlags
	c := &cobra.Command{
		Use: use, Short: short,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := db.resolve(cmd.Context(), logger())
			if err != nil {
				return err
			}
			defer d.Close()
			ms, err := op(cmd.Context(), d.URL)
			if err != nil {
				return err
			}
			for _, m := range ms {
				fmt.Fprintf(cmd.OutOrStdout(), "%-40s applied=%v\n", m.Name, m.Applied)
			}
			return nil
		},
	}
	db.add(c)
	return c
}

func seedCmd() *cobra.Command {
	var (
		db       dbFlags
		churches int
		months   int
	)
	c := &cobra.Command{
		Use:   "seed",
		Short: "Write deterministic synthetic demo data (no real people); existing churches are skipped",
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, closeDB, err := openStore(cmd.Context(), &db)
			if err != nil {
				return err
			}
			defer closeDB()
			start := time.Now()
			rep, err := seed.Run(cmd.Context(), st.Pool(), seed.Options{Churches: churches, Months: months})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\nin %s\n", rep, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	db.add(c)
	c.Flags().IntVar(&churches, "scale", 1, "number of churches (the first is the demo church)")
	c.Flags().IntVar(&months, "months", seed.DefaultMonths, "months of weekly attendance history")
	return c
}

func tokenCmd() *cobra.Command {
	var (
		db        dbFlags
		email     string
		scopeList string
		ttl       time.Duration
		publicURL string
	)
	c := &cobra.Command{
		Use:   "token",
		Short: "Mint a development access token for a demo user, signed with the local key",
		Long: `Mint a development access token for a demo user, signed with the local key.

Built-in mode only: the token is what the built-in authorization server would issue, so a
server in built-in mode (no --oauth-issuer) on the same database and --public-url accepts it.
A server in external provider mode (serve --oauth-issuer) accepts only its provider's tokens
and refuses this one (401); get a token from the provider instead.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("NEEMIAS_OAUTH_ISSUER") != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: $NEEMIAS_OAUTH_ISSUER is set; a server in external provider mode refuses this token (built-in mode only)")
			}
			if ttl <= 0 || ttl > server.MaxDevTokenTTL {
				return fmt.Errorf("--ttl must be between 1s and %s (got %s): development tokens are short-lived", server.MaxDevTokenTTL, ttl)
			}
			var u *demoUser
			for i := range demoUsers {
				if demoUsers[i].email == email {
					u = &demoUsers[i]
				}
			}
			if u == nil {
				var emails []string
				for _, d := range demoUsers {
					emails = append(emails, d.email)
				}
				return fmt.Errorf("unknown demo user %q; use one of: %s", email, strings.Join(emails, ", "))
			}
			st, closeDB, err := openStore(cmd.Context(), &db)
			if err != nil {
				return err
			}
			defer closeDB()
			srv, err := server.New(cmd.Context(), server.Config{PublicURL: publicURL, Logger: logger(), Version: version}, st)
			if err != nil {
				return err
			}
			role, _ := scopes.RoleScopes(u.role)
			requested := role
			if scopeList != "" {
				requested = capability.NewScopeSet(strings.Split(scopeList, ",")...)
				for _, s := range requested.List() {
					if !role.Has(s) {
						return fmt.Errorf("role %s cannot hold scope %q; it may hold: %s", u.role, s, role)
					}
				}
			}
			tok, err := srv.Minter.Mint(principal.Principal{UserID: u.id, ChurchID: seed.DemoChurchID, Role: u.role, Scopes: requested, ClientID: server.DevTokenClient}, ttl)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	db.add(c)
	c.Flags().StringVar(&email, "email", seed.DemoAdminEmail, "demo user")
	c.Flags().StringVar(&scopeList, "scopes", "", "comma-separated scopes (default: all of the role's)")
	c.Flags().DurationVar(&ttl, "ttl", time.Hour, "token lifetime (at most 12h; refused once the user is disabled)")
	c.Flags().StringVar(&publicURL, "public-url", "http://127.0.0.1:8080", "the server's base URL (issuer; audience is URL/mcp)")
	return c
}
