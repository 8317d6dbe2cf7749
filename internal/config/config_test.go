package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/neemias/neemias-mcp/internal/config"
)

func parse(t *testing.T, args []string, env map[string]string) (*config.Serve, error) {
	t.Helper()
	var s config.Serve
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	s.AddFlags(fs)
	config.AddLogFlags(fs, &s.LogLevel)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := config.Apply(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		return &s, err
	}
	return &s, s.Validate()
}

func TestDefaultsAreValid(t *testing.T) {
	s, err := parse(t, nil, nil)
	if err != nil {
		t.Fatalf("the defaults (make run) are refused: %v", err)
	}
	if s.Addr != config.DefaultAddr || s.RateLimit != config.DefaultRateLimit || s.RateBurst != config.DefaultRateBurst || !s.Metrics || s.OTLPEndpoint != "" || s.LogLevel != "info" {
		t.Errorf("defaults: %+v", s)
	}
}

func TestEnvironmentAndPrecedence(t *testing.T) {
	s, err := parse(t, []string{"--rate-burst", "7"}, map[string]string{
		"NEEMIAS_ADDR": "0.0.0.0:9000", "NEEMIAS_RATE_BURST": "99", "NEEMIAS_ALLOWED_ORIGIN": "https://a.example, https://b.example",
		"NEEMIAS_LOG_LEVEL": "debug", "NEEMIAS_METRICS": "false", "NEEMIAS_SHUTDOWN_TIMEOUT": "30s",
		"NEEMIAS_MCP_HOST": "mcp.example", "NEEMIAS_API_HOST": "api.example",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr != "0.0.0.0:9000" || s.RateBurst != 7 || len(s.AllowedOrigins) != 2 || s.LogLevel != "debug" || s.Metrics ||
		s.ShutdownTimeout != 30*time.Second || s.MCPHost != "mcp.example" {
		t.Errorf("got %+v", s)
	}
}

func TestSecretFromFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(f, []byte("postgres://u:hunter2@db/neemias\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := parse(t, nil, map[string]string{"NEEMIAS_DATABASE_URL_FILE": f})
	if err != nil || s.DatabaseURL != "postgres://u:hunter2@db/neemias" {
		t.Fatalf("%v %q", err, s.DatabaseURL)
	}
	_, err = parse(t, []string{"--database-url-file", filepath.Join(t.TempDir(), "missing")}, nil)
	if err == nil || !strings.Contains(err.Error(), "--database-url-file ($NEEMIAS_DATABASE_URL_FILE)") {
		t.Errorf("missing file: %v", err)
	}
}

// TestErrorsNameTheSetting: every refusal names the flag and its variable, and a secret's
// value is never quoted.
func TestErrorsNameTheSetting(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--addr", "8080"}, nil, "--addr ($NEEMIAS_ADDR) must be host:port"},
		{[]string{"--public-url", "mcp.example"}, nil, "--public-url ($NEEMIAS_PUBLIC_URL) must be an absolute"},
		{[]string{"--rate-limit", "-1"}, nil, "--rate-limit ($NEEMIAS_RATE_LIMIT) must be 0"},
		{[]string{"--rate-burst", "0"}, nil, "--rate-burst ($NEEMIAS_RATE_BURST) must be at least 1"},
		{[]string{"--token-check-cache", "2m"}, nil, "--token-check-cache ($NEEMIAS_TOKEN_CHECK_CACHE) must be 0 (off) to 1m0s"},
		{[]string{"--token-check-cache", "-1s"}, nil, "--token-check-cache ($NEEMIAS_TOKEN_CHECK_CACHE) must be 0 (off)"},
		{[]string{"--log-level", "loud"}, nil, "--log-level ($NEEMIAS_LOG_LEVEL) must be one of"},
		{[]string{"--mcp-host", "mcp.example"}, nil, "--api-host ($NEEMIAS_API_HOST) must be set too"},
		{[]string{"--mcp-host", "https://mcp.example", "--api-host", "api.example"}, nil, "--mcp-host ($NEEMIAS_MCP_HOST) must be a lower-case host name"},
		{[]string{"--otlp-endpoint", "collector"}, nil, "--otlp-endpoint ($NEEMIAS_OTLP_ENDPOINT) must be a URL"},
		{[]string{"--allowed-origin", "app.example"}, nil, "--allowed-origin ($NEEMIAS_ALLOWED_ORIGIN) must be origins"},
		{[]string{"--metrics-addr", "9090"}, nil, "--metrics-addr ($NEEMIAS_METRICS_ADDR) must be host:port"},
		{[]string{"--metrics-addr", "127.0.0.1:9090", "--metrics-public"}, nil, "--metrics-public ($NEEMIAS_METRICS_PUBLIC) and --metrics-addr are exclusive"},
		{[]string{"--metrics=false", "--metrics-public"}, nil, "--metrics-public ($NEEMIAS_METRICS_PUBLIC) needs --metrics"},
		{[]string{"--checkin-window-days", "-1"}, nil, "--checkin-window-days ($NEEMIAS_CHECKIN_WINDOW_DAYS) must be 1 to 366, or 0 for the default"},
		{nil, map[string]string{"NEEMIAS_RATE_BURST": "many"}, `$NEEMIAS_RATE_BURST: invalid value "many" for --rate-burst`},
		{nil, map[string]string{"NEEMIAS_DATABASE_URL": "mysql://u:hunter2@x"}, "--database-url ($NEEMIAS_DATABASE_URL) must be a postgres:// URL"},
	} {
		_, err := parse(t, tc.args, tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want it to contain %q", tc.args, tc.env, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error quotes a secret: %v", err)
		}
	}
}

func TestDocumentEnv(t *testing.T) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	var s config.Serve
	s.AddFlags(fs)
	fs.String("oauth-issuer", "", "the provider ($NEEMIAS_OAUTH_ISSUER)")
	config.DocumentEnv(fs)
	config.DocumentEnv(fs) // idempotent
	usage := fs.FlagUsages()
	for _, want := range []string{"[$NEEMIAS_ADDR]", `(default "127.0.0.1:8080")`, "[$NEEMIAS_DATABASE_URL_FILE]", "the provider [$NEEMIAS_OAUTH_ISSUER]"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage lacks %q:\n%s", want, usage)
		}
	}
	if strings.Count(usage, "[$NEEMIAS_ADDR]") != 1 {
		t.Errorf("the variable is listed twice")
	}
}

// TestEnvSeparator: a list flag whose entries hold commas splits its variable on its own
// separator, and --help says so.
func TestEnvSeparator(t *testing.T) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	tools := fs.StringArray("upstream-tools", nil, "id=tool1,tool2")
	origins := fs.StringSlice("allowed-origin", nil, "origins")
	config.SetEnvSeparator(fs, "upstream-tools", ";")
	env := map[string]string{"NEEMIAS_UPSTREAM_TOOLS": "docs=echo,search; wiki=find", "NEEMIAS_ALLOWED_ORIGIN": "https://a.example,https://b.example"}
	if err := config.Apply(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(*tools, "|") != "docs=echo,search|wiki=find" || len(*origins) != 2 {
		t.Errorf("upstream-tools = %q, allowed-origin = %q", *tools, *origins)
	}
	config.DocumentEnv(fs)
	config.DocumentEnv(fs)
	if u := fs.FlagUsages(); strings.Count(u, "id=tool1,tool2; the variable's entries ;-separated [$NEEMIAS_UPSTREAM_TOOLS]") != 1 {
		t.Errorf("usage:\n%s", u)
	}
}

// TestMetricsOffThePublicListener (issue 24): /metrics is on the main listener (the public
// one) only when asked for; by default it is served nowhere until --metrics-addr names a
// listener of its own.
func TestMetricsOffThePublicListener(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		env            map[string]string
		onMain, served bool
	}{
		{nil, nil, false, false},
		{[]string{"--metrics-addr", "127.0.0.1:9090"}, nil, false, true},
		{[]string{"--metrics-public"}, nil, true, true},
		{nil, map[string]string{"NEEMIAS_METRICS_PUBLIC": "true"}, true, true},
		{[]string{"--metrics=false"}, nil, false, false},
	} {
		s, err := parse(t, tc.args, tc.env)
		if err != nil {
			t.Fatalf("%v %v: %v", tc.args, tc.env, err)
		}
		if s.MetricsOnMain() != tc.onMain || s.MetricsServed() != tc.served {
			t.Errorf("%v %v: on the main listener %v, served %v; want %v, %v", tc.args, tc.env, s.MetricsOnMain(), s.MetricsServed(), tc.onMain, tc.served)
		}
	}
}

// TestDeprecate: a renamed setting keeps working under its old flag and variable for one
// release, with a warning on standard error; the new name wins, and both names at once are
// an error (issue 26 renamed the login provider's --upstream-* flags).
func TestDeprecate(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		issuer string // want
		only   bool
		secret string
		warn   string // want on the warning output ("" none)
		err    string
	}{
		{name: "new flag", args: []string{"--login-provider-issuer", "https://new.example"}, issuer: "https://new.example"},
		{name: "old flag", args: []string{"--upstream-issuer", "https://old.example"}, issuer: "https://old.example",
			warn: "Flag --upstream-issuer has been deprecated, use --login-provider-issuer ($NEEMIAS_LOGIN_PROVIDER_ISSUER) instead; --upstream-issuer goes away in the next release"},
		{name: "old bool flag", args: []string{"--upstream-only"}, only: true, warn: "--upstream-only has been deprecated"},
		{name: "new variable", env: map[string]string{"NEEMIAS_LOGIN_PROVIDER_ISSUER": "https://new.example"}, issuer: "https://new.example"},
		{name: "old variable", env: map[string]string{"NEEMIAS_UPSTREAM_ISSUER": "https://old.example", "NEEMIAS_UPSTREAM_ONLY": "true"},
			issuer: "https://old.example", only: true,
			warn: "$NEEMIAS_UPSTREAM_ISSUER is deprecated: use $NEEMIAS_LOGIN_PROVIDER_ISSUER (--login-provider-issuer) instead"},
		{name: "old secret file variable", env: map[string]string{"NEEMIAS_UPSTREAM_CLIENT_SECRET_FILE": secret}, secret: "s3cr3t",
			warn: "$NEEMIAS_UPSTREAM_CLIENT_SECRET_FILE is deprecated: use $NEEMIAS_LOGIN_PROVIDER_CLIENT_SECRET_FILE"},
		{name: "old secret file flag", args: []string{"--upstream-client-secret-file", secret}, secret: "s3cr3t", warn: "deprecated"},
		{name: "both variables agreeing", env: map[string]string{"NEEMIAS_UPSTREAM_ISSUER": "https://a.example", "NEEMIAS_LOGIN_PROVIDER_ISSUER": "https://a.example"},
			issuer: "https://a.example", warn: "$NEEMIAS_UPSTREAM_ISSUER is deprecated"},
		{name: "both variables differing", env: map[string]string{"NEEMIAS_UPSTREAM_ISSUER": "https://a.example", "NEEMIAS_LOGIN_PROVIDER_ISSUER": "https://b.example"},
			err: "$NEEMIAS_LOGIN_PROVIDER_ISSUER and its deprecated name $NEEMIAS_UPSTREAM_ISSUER are both set, to different values: keep only $NEEMIAS_LOGIN_PROVIDER_ISSUER"},
		{name: "the command line wins over the old variable", args: []string{"--login-provider-issuer", "https://flag.example"},
			env: map[string]string{"NEEMIAS_UPSTREAM_ISSUER": "https://env.example"}, issuer: "https://flag.example"},
		{name: "the old flag wins over the new variable", args: []string{"--upstream-issuer", "https://flag.example"},
			env: map[string]string{"NEEMIAS_LOGIN_PROVIDER_ISSUER": "https://env.example"}, issuer: "https://flag.example", warn: "deprecated"},
		{name: "both flags", args: []string{"--upstream-issuer", "https://a.example", "--login-provider-issuer", "https://b.example"},
			err: "--upstream-issuer is the deprecated name of --login-provider-issuer: give only --login-provider-issuer"},
		{name: "old secret variable value never quoted", env: map[string]string{"NEEMIAS_UPSTREAM_CLIENT_SECRET": "hunter2", "NEEMIAS_LOGIN_PROVIDER_CLIENT_SECRET": "other"},
			err: "keep only $NEEMIAS_LOGIN_PROVIDER_CLIENT_SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			var warn strings.Builder
			fs.SetOutput(&warn)
			issuer := fs.String("login-provider-issuer", "", "issuer")
			only := fs.Bool("login-provider-only", false, "only")
			sec := fs.String("login-provider-client-secret", "", "secret")
			config.MarkSecret(fs, "login-provider-client-secret")
			for _, r := range [][2]string{{"upstream-issuer", "login-provider-issuer"}, {"upstream-only", "login-provider-only"},
				{"upstream-client-secret", "login-provider-client-secret"}, {"upstream-client-secret-file", "login-provider-client-secret-file"}} {
				config.Deprecate(fs, r[0], r[1])
			}
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := config.ApplyWarn(&warn, fs, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error quotes a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *issuer != tc.issuer || *only != tc.only || *sec != tc.secret {
				t.Errorf("issuer %q only %v secret %q; want %q %v %q", *issuer, *only, *sec, tc.issuer, tc.only, tc.secret)
			}
			if tc.warn == "" && warn.Len() > 0 || !strings.Contains(warn.String(), tc.warn) {
				t.Errorf("warnings %q, want %q", warn.String(), tc.warn)
			}
			config.DocumentEnv(fs)
			if u := fs.FlagUsages(); strings.Contains(u, "--upstream-issuer string") || !strings.Contains(u, "formerly --upstream-issuer [$NEEMIAS_LOGIN_PROVIDER_ISSUER]") {
				t.Errorf("usage lists the deprecated name as a flag, or does not say what the new one was called:\n%s", u)
			}
		})
	}
}
