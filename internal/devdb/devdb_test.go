package devdb

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestExplicitURLWins(t *testing.T) {
	db, err := Resolve(context.Background(), Options{URL: "postgres://x@db.example/y"})
	if err != nil || db.URL != "postgres://x@db.example/y" || db.Source != "DATABASE_URL" {
		t.Fatalf("got %+v, %v", db, err)
	}
}

func TestLocalServerGetsItsOwnDatabase(t *testing.T) {
	db, err := Resolve(context.Background(), Options{Database: "neemias_devdb_test"})
	if err != nil {
		t.Fatalf("local PostgreSQL on 127.0.0.1:5432 is expected here: %v", err)
	}
	if db.Source != "local" {
		t.Fatalf("source = %s", db.Source)
	}
	ping(t, db.URL)
}

// TestPrivateCluster exercises the no-PostgreSQL-running path: initdb in a project-local
// folder, start on a free port as an unprivileged user, create the database, stop.
func TestPrivateCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("initdb takes a few seconds")
	}
	if _, err := binDir(); err != nil {
		t.Skip(err)
	}
	// The folder must be traversable by the unprivileged user PostgreSQL runs as.
	parent, err := os.MkdirTemp("", "neemias-devdb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pg")
	ctx := context.Background()
	db, err := Resolve(ctx, Options{SkipLocal: true, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if db.Source != "private cluster" {
		t.Fatalf("source = %s", db.Source)
	}
	ping(t, db.URL)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// A second start reuses the initialised folder.
	db2, err := Resolve(ctx, Options{SkipLocal: true, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ping(t, db2.URL)
	if err := db2.Close(); err != nil {
		t.Fatal(err)
	}
}

func ping(t *testing.T, url string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var one int
	if err := conn.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}
