package dextest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// Version is the Dex release the tests run. Dex's go.mod says "module github.com/dexidp/dex"
// (no /v2), so the Go module proxy does not serve its v2 tags by name; ModuleVersion is the
// pseudo-version of the commit tagged v2.45.1 (11d2eeb52b42, 2026-03-03), which it serves.
const (
	Version       = "v2.45.1"
	ModuleVersion = "v0.0.0-20260303133905-11d2eeb52b42"
)

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
	buildSkip string
)

// Binary returns the path of a Dex binary, building it the first time into
// os.UserCacheDir()/neemias-mcp/dex-<Version>/ (about a minute and a half on 2 cores; reused
// across runs and worktrees), under an exclusive file lock so parallel test binaries wait for
// one build. Without a go command tb is skipped; a failed build fails tb.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() { buildBin, buildSkip, buildErr = build() })
	if buildSkip != "" {
		tb.Skip(buildSkip)
	}
	if buildErr != nil {
		tb.Fatalf("building Dex %s: %v", Version, buildErr)
	}
	return buildBin
}

func build() (bin, skip string, err error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", "the go command is not installed: Dex cannot be built", nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", "", fmt.Errorf("no user cache directory: %w", err)
	}
	dir := filepath.Join(cache, "neemias-mcp", "dex-"+Version)
	bin = filepath.Join(dir, "dex")
	if usable(bin) {
		return bin, "", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", "", fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // released on close anyway
	if usable(bin) {
		return bin, "", nil
	}
	return bin, "", buildInto(goBin, dir, bin)
}

func usable(bin string) bool {
	fi, err := os.Stat(bin)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// buildInto copies Dex's module out of the (read-only) module cache into dir/src, drops the
// replace directive that points at its nested api/v2 module (absent from the module zip; the
// published github.com/dexidp/dex/api/v2 its go.mod requires is used instead), and builds
// ./cmd/dex without cgo (the memory storage needs no SQLite).
func buildInto(goBin, dir, bin string) error {
	env := append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	run := func(wd string, args ...string) ([]byte, error) {
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = wd, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go %v: %w\n%s", args, err, stderr.Bytes())
		}
		return out, nil
	}
	out, err := run(dir, "mod", "download", "-json", "github.com/dexidp/dex@"+ModuleVersion)
	if err != nil {
		return err
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return fmt.Errorf("go mod download: no module directory (%s)", mod.Error)
	}
	src := filepath.Join(dir, "src")
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	if err := os.CopyFS(src, os.DirFS(mod.Dir)); err != nil {
		return fmt.Errorf("copying the Dex module: %w", err)
	}
	if _, err := run(src, "mod", "edit", "-dropreplace=github.com/dexidp/dex/api/v2"); err != nil {
		return err
	}
	tmp := bin + ".tmp"
	if _, err := run(src, "build", "-trimpath", "-ldflags", "-X main.version="+Version, "-o", tmp, "./cmd/dex"); err != nil {
		return err
	}
	if err := os.Rename(tmp, bin); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return os.RemoveAll(src)
}
