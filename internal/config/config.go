// Package config is the server's one typed configuration (12-factor): every setting is a flag
// of `serve`, and every flag can come from the environment as NEEMIAS_<FLAG_IN_UPPER_SNAKE>
// (--rate-limit ⇒ NEEMIAS_RATE_LIMIT). A flag given on the command line wins over the
// environment, the environment over the default. Secrets can come from files: each secret
// flag --x has a --x-file twin (NEEMIAS_X_FILE) whose file's content, trimmed, is the value,
// so a Kubernetes Secret mounted as a file never shows in the process list or environment.
// Validate checks everything at start and names the setting of each error, flag and
// variable. Hand-written; nothing here is generated.
package config

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/neemias/neemias-mcp/internal/logging"
)

// EnvPrefix prefixes every setting's environment variable.
const EnvPrefix = "NEEMIAS_"

// EnvName is the environment variable of a flag: NEEMIAS_ and the flag in upper snake case.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// Setting names a setting in an error: its flag and its variable.
func Setting(flag string) string { return fmt.Sprintf("--%s ($%s)", flag, EnvName(flag)) }

// Serve is the configuration of `neemias-mcp serve` that is not the authorization server's
// (those stay beside their flags in cmd/neemias-mcp and are bound to the environment the
// same way).
type Serve struct {
	// DatabaseURL is the PostgreSQL URL; empty means DATABASE_URL, else 127.0.0.1:5432, else a
	// private cluster under DataDir (internal/devdb).
	DatabaseURL string
	DataDir     string
	Addr        string
	PublicURL   string
	Demo        bool
	// AllowedOrigins are browser origins allowed to call /mcp.
	AllowedOrigins []string
	RateLimit      float64
	RateBurst      int
	LogLevel       string
	// Metrics serves Prometheus /metrics on MetricsAddr's own listener. The main listener
	// (the public one: MCP, OAuth, REST) serves it only with MetricsPublic, which is off by
	// default: the figures (request rates, refusals, pool use) are the operator's, not the
	// internet's. Neither set: metrics are not served (MetricsServed).
	Metrics       bool
	MetricsAddr   string
	MetricsPublic bool
	// OTLPEndpoint turns tracing on: spans are exported by OTLP over HTTP to it (a URL like
	// http://collector:4318, or host:port); empty means tracing is off.
	OTLPEndpoint string
	// OTLPInsecure sends to a host:port endpoint over plain HTTP instead of HTTPS.
	OTLPInsecure bool
	// MCPHost and APIHost split the origin by Host header: MCP, OAuth and metadata on one,
	// REST and its OpenAPI on the other. Both empty: one origin serves everything.
	MCPHost, APIHost string
	// ShutdownTimeout bounds the graceful stop on SIGTERM.
	ShutdownTimeout time.Duration
	// Drain is how long, on SIGTERM, /readyz answers 503 while requests are still served
	// (a load balancer's time to stop sending), before the graceful shutdown.
	Drain time.Duration
	// CheckinWindowDays is how many days back a check-in may be registered.
	CheckinWindowDays int
	// TokenCheckCache is how long a token's passed revocation check is reused (0: every
	// request checks); a revocation or disable elsewhere takes effect within it.
	TokenCheckCache time.Duration
	// MCPEngineOnly serves every MCP request through the go-sdk engine, the fast path off
	// (internal/mcp fastpath.go): an escape hatch.
	MCPEngineOnly bool
}

// MetricsOnMain reports whether the main listener serves /metrics: only when asked for
// (--metrics-public).
func (s *Serve) MetricsOnMain() bool { return s.Metrics && s.MetricsAddr == "" && s.MetricsPublic }

// MetricsServed reports whether /metrics is served anywhere (its own listener, or the main one
// when asked for). Metrics on but served nowhere are not collected.
func (s *Serve) MetricsServed() bool { return s.Metrics && (s.MetricsAddr != "" || s.MetricsPublic) }

// Defaults of Serve.
const (
	DefaultAddr      = "127.0.0.1:8080"
	DefaultDataDir   = ".data/postgres"
	DefaultRateLimit = 10
	DefaultRateBurst = 60
	// DefaultTokenCheckCache is --token-check-cache's default.
	DefaultTokenCheckCache = time.Second
	// MaxTokenCheckCache bounds --token-check-cache: the delay of a revocation elsewhere.
	MaxTokenCheckCache = time.Minute
)

// AddFlags registers Serve's flags on fs with their defaults.
func (s *Serve) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (a secret: prefer --database-url-file); default $DATABASE_URL, else 127.0.0.1:5432, else a private cluster")
	fs.StringVar(&s.DataDir, "data-dir", DefaultDataDir, "folder of the private PostgreSQL cluster, when one is needed")
	fs.StringVar(&s.Addr, "addr", DefaultAddr, "listen address")
	fs.StringVar(&s.PublicURL, "public-url", "", "externally visible base URL (default http://ADDR)")
	fs.BoolVar(&s.Demo, "demo", false, "seed the demo church once and print how to connect")
	fs.StringSliceVar(&s.AllowedOrigins, "allowed-origin", nil, "browser origin allowed to call /mcp (repeatable, or comma-separated)")
	fs.Float64Var(&s.RateLimit, "rate-limit", DefaultRateLimit, "requests per second per caller (0 turns the limit off)")
	fs.IntVar(&s.RateBurst, "rate-burst", DefaultRateBurst, "burst of requests a caller may make above --rate-limit")
	fs.BoolVar(&s.Metrics, "metrics", true, "serve Prometheus metrics at /metrics")
	fs.StringVar(&s.MetricsAddr, "metrics-addr", "", "serve /metrics on this address, its own listener (like 127.0.0.1:9090; off the public port)")
	fs.BoolVar(&s.MetricsPublic, "metrics-public", false, "serve /metrics on the main listener (--addr), to anyone who reaches it; prefer --metrics-addr")
	fs.StringVar(&s.OTLPEndpoint, "otlp-endpoint", "", "export OpenTelemetry traces by OTLP/HTTP to this collector (http://host:4318 or host:port); empty: tracing off")
	fs.BoolVar(&s.OTLPInsecure, "otlp-insecure", false, "use plain HTTP for a host:port --otlp-endpoint")
	fs.StringVar(&s.MCPHost, "mcp-host", "", "host name that serves only MCP, OAuth and metadata (with --api-host)")
	fs.StringVar(&s.APIHost, "api-host", "", "host name that serves only REST (/api/v1) and its OpenAPI (with --mcp-host)")
	fs.DurationVar(&s.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish on SIGTERM")
	fs.DurationVar(&s.Drain, "drain", 5*time.Second, "on SIGTERM, how long /readyz answers 503 while requests are still served, before the graceful shutdown")
	// The default is the caller's preset (the composition root sets the business rule's,
	// logic.DefaultCheckinWindowDays); zero means that same default downstream.
	fs.IntVar(&s.CheckinWindowDays, "checkin-window-days", s.CheckinWindowDays, "how many days back a check-in may be registered")
	fs.DurationVar(&s.TokenCheckCache, "token-check-cache", DefaultTokenCheckCache, "how long a token's passed revocation check (grant not revoked, dev token's user enabled) is reused: a revocation or disable made elsewhere takes effect within it on every replica; 0 checks every request (at most 1m)")
	fs.BoolVar(&s.MCPEngineOnly, "mcp-engine-only", false, "serve every MCP request through the go-sdk engine, with the fast path of tools/call, resources/read and the lists off (an escape hatch; the answers are the same)")
	MarkSecret(fs, "database-url")
}

// AddLogFlags registers --log-level (a persistent flag of the root command).
func AddLogFlags(fs *pflag.FlagSet, level *string) {
	fs.StringVar(level, "log-level", "info", "log level: debug, info, warn, error (logs are JSON lines on standard error)")
}

// Validate checks s; each error names its setting.
func (s *Serve) Validate() error {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s %s", Setting(flag), fmt.Sprintf(format, args...)))
	}
	if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		bad("addr", "must be host:port, like 127.0.0.1:8080 (got %q)", s.Addr)
	}
	if s.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(s.MetricsAddr); err != nil {
			bad("metrics-addr", "must be host:port, like :9090 (got %q)", s.MetricsAddr)
		}
	}
	if s.MetricsPublic && s.MetricsAddr != "" {
		bad("metrics-public", "and --metrics-addr are exclusive: /metrics is served on one listener")
	}
	if s.MetricsPublic && !s.Metrics {
		bad("metrics-public", "needs --metrics")
	}
	if s.PublicURL != "" {
		u, err := url.Parse(s.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			bad("public-url", "must be an absolute http(s) URL without query, like https://mcp.church.example (got %q)", s.PublicURL)
		}
	}
	if s.DatabaseURL != "" && !strings.HasPrefix(s.DatabaseURL, "postgres://") && !strings.HasPrefix(s.DatabaseURL, "postgresql://") && !strings.Contains(s.DatabaseURL, "=") {
		bad("database-url", "must be a postgres:// URL or a key=value connection string") // never quote it: it may hold a password
	}
	if s.RateLimit < 0 {
		bad("rate-limit", "must be 0 (off) or more (got %v)", s.RateLimit)
	}
	if s.RateBurst < 1 {
		bad("rate-burst", "must be at least 1 (got %d)", s.RateBurst)
	}
	if _, err := logging.ParseLevel(s.LogLevel); err != nil {
		bad("log-level", "%v", err)
	}
	for _, o := range s.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			bad("allowed-origin", "must be origins like https://app.example (got %q)", o)
		}
	}
	if s.OTLPEndpoint != "" {
		if u, err := url.Parse(s.OTLPEndpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			// a URL
		} else if _, _, err := net.SplitHostPort(s.OTLPEndpoint); err != nil {
			bad("otlp-endpoint", "must be a URL like http://collector:4318 or host:port (got %q)", s.OTLPEndpoint)
		}
	}
	if (s.MCPHost == "") != (s.APIHost == "") {
		flag := "api-host"
		if s.MCPHost == "" {
			flag = "mcp-host"
		}
		bad(flag, "must be set too: host routing needs both --mcp-host and --api-host")
	}
	for flag, h := range map[string]string{"mcp-host": s.MCPHost, "api-host": s.APIHost} {
		if h != "" && (strings.ContainsAny(h, "/:@ ") || strings.ToLower(h) != h) {
			bad(flag, "must be a lower-case host name without scheme, port or path, like mcp.church.example (got %q)", h)
		}
	}
	if s.MCPHost != "" && s.MCPHost == s.APIHost {
		bad("api-host", "must differ from --mcp-host")
	}
	if s.TokenCheckCache < 0 || s.TokenCheckCache > MaxTokenCheckCache {
		bad("token-check-cache", "must be 0 (off) to %s (got %s)", MaxTokenCheckCache, s.TokenCheckCache)
	}
	if s.CheckinWindowDays < 0 || s.CheckinWindowDays > 366 {
		bad("checkin-window-days", "must be 1 to 366, or 0 for the default (got %d)", s.CheckinWindowDays)
	}
	if s.ShutdownTimeout <= 0 {
		bad("shutdown-timeout", "must be positive (got %s)", s.ShutdownTimeout)
	}
	return errors.Join(errs...)
}

const secretAnnotation = "neemias/secret"

// MarkSecret declares flag a secret: it gets a --flag-file twin, and its value is never shown
// as a default in --help.
func MarkSecret(fs *pflag.FlagSet, flag string) {
	f := fs.Lookup(flag)
	if f == nil {
		panic("config: no flag " + flag)
	}
	_ = fs.SetAnnotation(flag, secretAnnotation, []string{"true"})
	if fs.Lookup(flag+"-file") == nil {
		fs.String(flag+"-file", "", fmt.Sprintf("file holding --%s (content trimmed); for secrets mounted as files", flag))
	}
}

const aliasAnnotation = "neemias/deprecated-name-of"

// Deprecate registers old as the deprecated name of the flag current, kept for one release
// when a setting is renamed: --old sets the same value (pflag prints "Flag --old has been
// deprecated, use --current …" on standard error and hides it from --help), and its
// variable $NEEMIAS_OLD is read by [Apply] when $NEEMIAS_CURRENT is not set, with a warning.
// Giving both names on the command line, or both variables with different values, is an
// error. current's usage says what it used to be called.
func Deprecate(fs *pflag.FlagSet, old, current string) {
	f := fs.Lookup(current)
	if f == nil {
		panic("config: no flag " + current)
	}
	fs.AddFlag(&pflag.Flag{
		Name: old, Usage: "deprecated name of --" + current, Value: f.Value, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal, Hidden: true,
		Deprecated:  fmt.Sprintf("use --%s ($%s) instead; --%s goes away in the next release", current, EnvName(current), old),
		Annotations: map[string][]string{aliasAnnotation: {current}},
	})
	f.Usage += "; formerly --" + old
}

// deprecatedOf is the current name of the deprecated flag f, or "".
func deprecatedOf(f *pflag.Flag) string {
	if a := f.Annotations[aliasAnnotation]; len(a) == 1 {
		return a[0]
	}
	return ""
}

// Changed reports whether the flag name, or one of its deprecated names, was given.
func Changed(fs *pflag.FlagSet, name string) bool {
	changed := false
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed && (f.Name == name || deprecatedOf(f) == name) {
			changed = true
		}
	})
	return changed
}

// Apply is [ApplyWarn] with warnings (deprecated variables) on standard error.
func Apply(fs *pflag.FlagSet, lookup func(string) (string, bool), names ...string) error {
	return ApplyWarn(os.Stderr, fs, lookup, names...)
}

// ApplyWarn completes fs after the command line was parsed: every flag not given on the
// command line (under its name or a deprecated one) takes its NEEMIAS_* variable when set and
// not empty, or else its deprecated variable's, with a warning on warn; then each secret's
// --x-file, when given, sets --x from the file. Errors name the setting and never quote a
// secret's value. lookup is os.LookupEnv in production. With names, only those flags (and
// their -file twins) are completed: the administrative commands take only the database and
// log settings from the environment, never a stray $NEEMIAS_EMAIL.
func ApplyWarn(warn io.Writer, fs *pflag.FlagSet, lookup func(string) (string, bool), names ...string) error {
	var errs []error
	olds := map[string][]string{} // current name -> its deprecated names
	fs.VisitAll(func(f *pflag.Flag) {
		if cur := deprecatedOf(f); cur != "" {
			olds[cur] = append(olds[cur], f.Name)
			if f.Changed && fs.Lookup(cur).Changed {
				errs = append(errs, fmt.Errorf("--%s is the deprecated name of --%s: give only --%s", f.Name, cur, cur))
			}
		}
	})
	wanted := func(name string) bool {
		if len(names) == 0 {
			return true
		}
		for _, n := range names {
			if name == n || name == n+"-file" {
				return true
			}
		}
		return false
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if Changed(fs, f.Name) || f.Name == "help" || !wanted(f.Name) || deprecatedOf(f) != "" {
			return
		}
		env := EnvName(f.Name)
		v, ok := lookup(env)
		ok = ok && v != "" // an empty variable is an unset one (docker --env X= , a blank ConfigMap key)
		for _, old := range olds[f.Name] {
			ov, set := lookup(EnvName(old))
			if !set || ov == "" {
				continue
			}
			fmt.Fprintf(warn, "neemias-mcp: $%s is deprecated: use $%s (--%s) instead; $%s goes away in the next release\n",
				EnvName(old), env, f.Name, EnvName(old))
			switch {
			case ok && ov != v:
				errs = append(errs, fmt.Errorf("$%s and its deprecated name $%s are both set, to different values: keep only $%s", env, EnvName(old), env))
			case !ok:
				env, v, ok = EnvName(old), ov, true
			}
		}
		if !ok {
			return
		}
		if sv, isSlice := f.Value.(pflag.SliceValue); isSlice {
			var items []string
			for _, s := range strings.Split(v, envSeparator(f)) {
				if s = strings.TrimSpace(s); s != "" {
					items = append(items, s)
				}
			}
			if err := sv.Replace(items); err != nil {
				errs = append(errs, fmt.Errorf("$%s: %v", env, err))
			}
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			shown := fmt.Sprintf("%q", v)
			if isSecret(f) {
				shown = "(hidden)"
			}
			errs = append(errs, fmt.Errorf("$%s: invalid value %s for --%s: %s", env, shown, f.Name, cause(err)))
		}
	})
	fs.VisitAll(func(f *pflag.Flag) {
		if !isSecret(f) || !wanted(f.Name) {
			return
		}
		file := fs.Lookup(f.Name + "-file")
		if file == nil || file.Value.String() == "" {
			return
		}
		b, err := os.ReadFile(file.Value.String())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", Setting(file.Name), err))
			return
		}
		if Changed(fs, f.Name) && Changed(fs, f.Name+"-file") {
			errs = append(errs, fmt.Errorf("%s and --%s are exclusive", Setting(file.Name), f.Name))
			return
		}
		if err := fs.Set(f.Name, strings.TrimSpace(string(b))); err != nil {
			errs = append(errs, fmt.Errorf("%s: the file's content is not a valid --%s", Setting(file.Name), f.Name))
		}
	})
	return errors.Join(errs...)
}

func cause(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

func isSecret(f *pflag.Flag) bool { return len(f.Annotations[secretAnnotation]) > 0 }

// IsSecret reports whether the flag was marked with MarkSecret.
func IsSecret(f *pflag.Flag) bool { return isSecret(f) }

// MaskURLPassword returns s with the password of a URL's userinfo masked (s unchanged when
// it is not a URL with a password).
func MaskURLPassword(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); !has {
		return s
	}
	return u.Redacted()
}

const separatorAnnotation = "neemias/env-separator"

// SetEnvSeparator makes the list flag's variable split on sep instead of ',': for entries
// that themselves hold commas (--upstream-tools docs=echo,search ⇒
// NEEMIAS_UPSTREAM_TOOLS="docs=echo,search;wiki=find").
func SetEnvSeparator(fs *pflag.FlagSet, flag, sep string) {
	if fs.Lookup(flag) == nil {
		panic("config: no flag " + flag)
	}
	_ = fs.SetAnnotation(flag, separatorAnnotation, []string{sep})
}

// envSeparator is what the flag's variable is split on (list flags only).
func envSeparator(f *pflag.Flag) string {
	if s := f.Annotations[separatorAnnotation]; len(s) == 1 && s[0] != "" {
		return s[0]
	}
	return ","
}

// DocumentEnv appends each flag's variable to its usage ("[$NEEMIAS_ADDR]"), once, and hides
// secrets' defaults, so that --help lists every setting with its default and its variable.
func DocumentEnv(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || deprecatedOf(f) != "" { // deprecated names are not listed
			return
		}
		env := "$" + EnvName(f.Name)
		if i := strings.Index(f.Usage, " ("+env); i >= 0 {
			f.Usage = f.Usage[:i] + f.Usage[i+len(" ("+env):] // the older hand-written mention
			f.Usage = strings.TrimSuffix(strings.TrimSuffix(f.Usage, ")"), "=true")
		}
		if !strings.Contains(f.Usage, "[$"+EnvName(f.Name)+"]") {
			if sep := envSeparator(f); sep != "," {
				f.Usage += "; the variable's entries " + sep + "-separated"
			}
			f.Usage += " [" + env + "]"
		}
		if isSecret(f) {
			f.DefValue = ""
		}
	})
}
