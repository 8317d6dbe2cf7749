// Package modbin builds, once per machine, the binary of a third-party Go program the tests
// run as a real peer (ORY Hydra, Dex), from the Go module proxy at a pinned version: the
// module is downloaded, copied out of the read-only module cache, its go.mod edited where the
// module zip lacks what a replace directive points at, and built without cgo into
// os.UserCacheDir()/neemias-mcp/<name>-<version>/ (outside the repository, reused across runs
// and worktrees). The build holds an exclusive lock on a file there, so parallel test binaries
// wait for one build instead of racing.
package modbin

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

// Program is a binary to build from a module.
type Program struct {
	// Name names the binary and its cache folder (name-Version).
	Name, Version string
	// Module and ModuleVersion are what `go mod download` fetches (ModuleVersion may be a
	// pseudo-version where the proxy does not serve the release's tag).
	Module, ModuleVersion string
	// Edits are go commands run in the copied module before the build (for example
	// {"mod", "edit", "-dropreplace=…"}, {"get", "…@v"}).
	Edits [][]string
	// Package is the package to build ("." or "./cmd/x"); LDFlags its -ldflags, if any.
	Package, LDFlags string

	once          sync.Once
	bin, skip     string
	err           error
	buildDuration time.Duration
}

// Binary returns the binary's path, building it the first time. Without a go command tb is
// skipped; a failed build fails tb.
func (p *Program) Binary(tb testing.TB) string {
	tb.Helper()
	p.once.Do(func() { p.bin, p.skip, p.err = p.build() })
	if p.skip != "" {
		tb.Skip(p.skip)
	}
	if p.err != nil {
		tb.Fatalf("building %s %s: %v", p.Name, p.Version, p.err)
	}
	return p.bin
}

// BuildDuration is how long this process spent building (zero when the cached binary was used).
func (p *Program) BuildDuration() time.Duration { return p.buildDuration }

func (p *Program) build() (bin, skip string, err error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", "the go command is not installed: " + p.Name + " cannot be built", nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", "", fmt.Errorf("no user cache directory: %w", err)
	}
	dir := filepath.Join(cache, "neemias-mcp", p.Name+"-"+p.Version)
	bin = filepath.Join(dir, p.Name)
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
	if err := p.buildInto(goBin, dir, bin); err != nil {
		return "", "", err
	}
	p.buildDuration = time.Since(start)
	return bin, "", nil
}

// usable reports whether bin is an executable regular file.
func usable(bin string) bool {
	fi, err := os.Stat(bin)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func (p *Program) buildInto(goBin, dir, bin string) error {
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
	out, err := run(dir, "mod", "download", "-json", p.Module+"@"+p.ModuleVersion)
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
		return fmt.Errorf("copying the %s module: %w", p.Name, err)
	}
	for _, e := range p.Edits {
		if _, err := run(src, e...); err != nil {
			return err
		}
	}
	tmp := bin + ".tmp"
	args := []string{"build", "-trimpath"}
	if p.LDFlags != "" {
		args = append(args, "-ldflags", p.LDFlags)
	}
	if _, err := run(src, append(args, "-o", tmp, p.Package)...); err != nil {
		return err
	}
	if err := os.Rename(tmp, bin); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return os.RemoveAll(src) // the binary is all later runs need
}
