package capgen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

var (
	migrationName = regexp.MustCompile(`^(\d+)_[a-z0-9_]+\.sql$`)
	snakeCase     = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
)

// NextMigration is the version a new migration under root/SchemaDir takes: one above the
// highest there. Never a gap below it: goose refuses to apply a version lower than one a
// database already has (it reports it as a missing migration), so a number free in the tree
// but below the highest (00094 today) would break every database migrated since.
func NextMigration(root string) (int, error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(SchemaDir)))
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", SchemaDir, err)
	}
	highest := 0
	for _, e := range entries {
		if m := migrationName.FindStringSubmatch(e.Name()); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > highest {
				highest = n
			}
		}
	}
	return highest + 1, nil
}

// NextMigrationFile is the path, relative to root, of a new migration called name
// ("checkin_notes"): queries/schema/00110_checkin_notes.sql.
func NextMigrationFile(root, name string) (string, error) {
	if !snakeCase.MatchString(name) {
		return "", fmt.Errorf("migration name %q is not snake_case; use lower-case words joined by _, such as checkin_notes", name)
	}
	n, err := NextMigration(root)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s/%05d_%s.sql", SchemaDir, n, name), nil
}
