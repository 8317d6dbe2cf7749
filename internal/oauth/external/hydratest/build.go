package hydratest

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
	"time"
)

// Version is the Hydra release the tests run: github.com/ory/hydra/v2 from the Go module proxy.
const Version = "v2.3.0"

// clientVersion is the hydra-client-go release that replaces Hydra's nested module (absent
// from the module zip) in the copied go.mod.
const clientVersion = "v2.2.1"

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
	buildSkip string
	// BuildDuration is how long this process spent building Hydra (zero when the cached binary
	// was used).
	BuildDuration time.Duration
)

// Binary returns the path of a Hydra binary, building it the first time into
// os.UserCacheDir()/neemias-mcp/hydra-<Version>/ (outside the repository, reused across runs
// and worktrees). The build holds an exclusive lock on a file there, so parallel test binaries
// wait for one build instead of racing. Without a go command tb is skipped; a failed build
// fails tb.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() { buildBin, buildSkip, buildErr = build() })
	if buildSkip != "" {
		tb.Skip(buildSkip)
	}
	if buildErr != nil {
		tb.Fatalf("building Hydra %s: %v", Version, buildErr)
	}
	return buildBin
}

func build() (bin, skip string, err error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", "the go command is not installed: Hydra cannot be built", nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", "", fmt.Errorf("no user cache directory: %w", err)
	}
	dir := filepath.Join(cache, "neemias-mcp", "hydra-"+Version)
	bin = filepath.Join(dir, "hydra")
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
	if usable(bin) {                                     // built by another process while we waited
		return bin, "", nil
	}
	start := time.Now()
	if err := buildInto(goBin, dir, bin); err != nil {
		return "", "", err
	}
	BuildDuration = time.Since(start)
	return bin, "", nil
}

// usable reports whether bin is an executable regular file.
func usable(bin string) bool {
	fi, err := os.Stat(bin)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// buildInto copies Hydra's module out of the module cache into dir/src (the cache is
// read-only), drops the replace directive that points at the nested hydra-client-go module
// (not part of the module zip), requires the published client instead, and builds bin.
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
	out, err := run(dir, "mod", "download", "-json", "github.com/ory/hydra/v2@"+Version)
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
		return fmt.Errorf("copying the Hydra module: %w", err)
	}
	if _, err := run(src, "mod", "edit", "-dropreplace=github.com/ory/hydra-client-go/v2"); err != nil {
		return err
	}
	if _, err := run(src, "get", "github.com/ory/hydra-client-go/v2@"+clientVersion); err != nil {
		return err
	}
	tmp := bin + ".tmp"
	if _, err := run(src, "build", "-trimpath", "-o", tmp, "."); err != nil {
		return err
	}
	if err := os.Rename(tmp, bin); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return os.RemoveAll(src) // the binary is all later runs need
}
