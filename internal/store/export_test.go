package store

import (
	"context"
	"io/fs"
)

// UpToDate is Migrate's fast path, upToDate, over the migrations of fsys.
func UpToDate(ctx context.Context, url string, fsys fs.FS) (bool, error) {
	files, err := scanMigrations(fsys)
	if err != nil {
		return false, err
	}
	return upToDate(ctx, url, files)
}
