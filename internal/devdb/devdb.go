// Package devdb finds a PostgreSQL for `make run` with zero configuration: DATABASE_URL if
// set, else the local server on 127.0.0.1:5432, else a private cluster it creates from the
// installed PostgreSQL binaries in a project-local data folder (as an unprivileged user when
// running as root, because PostgreSQL refuses to run as root). It is for development and demos;
// production passes DATABASE_URL.
package devdb

import (
	"github.com/neemias/neemias-mcp/internal/freeport"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options say where to look.
type Options struct {
	// URL is an explicit database URL (DATABASE_URL); used as is when set.
	URL string
	// LocalAdminURL is the local server to try next (default postgres://postgres@127.0.0.1:5432/postgres).
	LocalAdminURL string
	// Database is the database to use or create on the local server (default neemias).
	Database string
	// DataDir holds the private cluster (default .data/postgres).
	DataDir string
	// SkipLocal forces the private cluster even when a local server answers (tests).
	SkipLocal bool
	Logger    *slog.Logger
}

// DB is a resolved database.
type DB struct {
	URL string
	// Source says which path was taken: "DATABASE_URL", "local", or "private cluster".
	Source string
	stop   func() error
}

// Close stops the private cluster, if one was started.
func (d *DB) Close() error {
	if d.stop == nil {
		return nil
	}
	return d.stop()
}

// Resolve finds or starts a database.
func Resolve(ctx context.Context, o Options) (*DB, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Database == "" {
		o.Database = "neemias"
	}
	if o.URL != "" {
		return &DB{URL: o.URL, Source: "DATABASE_URL"}, nil
	}
	if o.LocalAdminURL == "" {
		o.LocalAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	if !o.SkipLocal {
		u, err := ensureDatabase(ctx, o.LocalAdminURL, o.Database)
		if err == nil {
			return &DB{URL: u, Source: "local"}, nil
		}
		o.Logger.Info("no local PostgreSQL; starting a private cluster", "tried", redactURL(o.LocalAdminURL), "reason", err)
	}
	return startPrivate(ctx, o)
}

// ensureDatabase connects to adminURL and creates database name if missing; it returns the
// URL of that database.
func ensureDatabase(ctx context.Context, adminURL, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("checking database %q: %w", name, err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			var again bool
			if conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&again) != nil || !again {
				return "", fmt.Errorf("creating database %q: %w", name, err)
			}
		}
	}
	cfg := conn.Config()
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", cfg.User, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), name), nil
}

func redactURL(u string) string {
	if i := strings.Index(u, "@"); i > 0 {
		if j := strings.Index(u, "://"); j > 0 && j < i {
			return u[:j+3] + "…" + u[i:]
		}
	}
	return u
}

// binDir finds the directory of initdb/pg_ctl/postgres.
func binDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL found (no server on 127.0.0.1:5432, no initdb): run make db-deps (installs Debian's postgresql), or install PostgreSQL (apt-get install postgresql, brew install postgresql@17), or set DATABASE_URL")
}

// runAs is the unprivileged user the cluster runs as when we are root.
func runAs() (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		return nil, "", nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, name, nil
	}
	return nil, "", errors.New("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as")
}

func startPrivate(ctx context.Context, o Options) (*DB, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	if o.DataDir == "" {
		o.DataDir = filepath.Join(".data", "postgres")
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, err
	}
	cred, who, err := runAs()
	if err != nil {
		return nil, err
	}
	cmd := func(name string, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		c.Env = append(os.Environ(), "LC_ALL=C")
		if cred != nil {
			c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		return c
	}
	chown := func(p string) error {
		if cred == nil {
			return nil
		}
		return os.Chown(p, int(cred.Uid), int(cred.Gid))
	}
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(dataDir), err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dataDir, err)
		}
		if err := chown(dataDir); err != nil {
			return nil, fmt.Errorf("handing %s to %s: %w", dataDir, who, err)
		}
		// A root-owned parent the unprivileged user cannot traverse would make initdb fail.
		if out, err := cmd("initdb", "-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("initdb in %s as %s: %w\n%s", dataDir, orMe(who), err, out)
		}
	}
	port, err := freeport.Port()
	if err != nil {
		return nil, fmt.Errorf("finding a free port: %w", err)
	}
	logFile := filepath.Join(dataDir, "server.log")
	start := cmd("pg_ctl", "-D", dataDir, "-l", logFile, "-w", "-t", "60", "start",
		"-o", fmt.Sprintf("-p %d -h 127.0.0.1 -k %s -c fsync=off", port, dataDir))
	if out, err := start.CombinedOutput(); err != nil {
		tail, _ := os.ReadFile(logFile)
		return nil, fmt.Errorf("starting the private cluster: %w\n%s\n%s", err, out, lastLines(string(tail), 20))
	}
	stop := func() error {
		out, err := cmd("pg_ctl", "-D", dataDir, "-m", "fast", "-w", "stop").CombinedOutput()
		if err != nil {
			return fmt.Errorf("stopping the private cluster: %w\n%s", err, out)
		}
		return nil
	}
	admin := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	u, err := ensureDatabase(ctx, admin, o.Database)
	if err != nil {
		_ = stop()
		return nil, fmt.Errorf("private cluster: %w", err)
	}
	o.Logger.Info("private PostgreSQL cluster started", "data_dir", dataDir, "port", port, "user", orMe(who))
	return &DB{URL: u, Source: "private cluster", stop: stop}, nil
}

func orMe(who string) string {
	if who == "" {
		return "the current user"
	}
	return who
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
