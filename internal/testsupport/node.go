package testsupport

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// harnessPackages are the pinned packages the tests use; npm install runs when one is missing.
var harnessPackages = []string{
	"node/bin/node",
	"@modelcontextprotocol/sdk/package.json",
	"@modelcontextprotocol/client/package.json",
	"@modelcontextprotocol/conformance/dist/index.js",
	"conformance-next/dist/index.js",
	"@langchain/mcp-adapters/package.json",
	"@modelcontextprotocol/inspector/package.json",
	"mcp-remote/package.json",
	"@modelcontextprotocol/server-everything/package.json",
}

// install is the outcome of one harness folder's npm install in this test binary.
type install struct {
	once sync.Once
	skip string
	err  error
}

var (
	installsMu sync.Mutex
	installs   = map[string]*install{}
)

// HarnessNode returns the pinned Node 22 of the npm harness in dir
// (internal/mcp/conformance/testdata/harness, relative to the calling test's package), running
// npm install there first when a pinned package is missing. It skips t only when npm is not
// installed; CI has npm, so these tests run there. The install holds an exclusive lock on a
// file in node_modules, so the test binaries of several packages (go test ./... runs them at
// once) never install into the folder concurrently.
func HarnessNode(t testing.TB, dir string) string {
	t.Helper()
	abs := ensureNPM(t, dir, harnessPackages, "install")
	bin := filepath.Join(abs, "node_modules", "node", "bin", "node")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the pinned node binary is missing after npm install: %v", err)
	}
	return bin
}

// NPMPackages makes sure the npm folder dir (relative to the calling test's package, with a
// package-lock.json) has its locked packages, running npm ci there under the same lock as
// HarnessNode when one of pkgs (paths under node_modules, such as "esbuild/package.json") is
// missing, and returns the node on PATH. It skips t when npm or node is not installed.
func NPMPackages(t testing.TB, dir string, pkgs ...string) string {
	t.Helper()
	ensureNPM(t, dir, pkgs, "ci")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed (%v)", err)
	}
	return node
}

// ensureNPM runs npm cmdName in dir once per test binary (npmInstall: only when one of pkgs is
// missing, under the file lock), skipping t when npm is not installed, and returns dir as an
// absolute path.
func ensureNPM(t testing.TB, dir string, pkgs []string, cmdName string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	installsMu.Lock()
	in, ok := installs[abs]
	if !ok {
		in = &install{}
		installs[abs] = in
	}
	installsMu.Unlock()
	in.once.Do(func() { in.skip, in.err = npmInstall(abs, pkgs, cmdName) })
	if in.skip != "" {
		t.Skip(in.skip)
	}
	if in.err != nil {
		t.Fatalf("npm %s in %s: %v", cmdName, dir, in.err)
	}
	return abs
}

// npmInstall runs npm cmd (install or ci) in dir unless every package of pkgs is there, under
// the lock. It returns a skip reason when npm is not installed.
func npmInstall(dir string, pkgs []string, cmdName string) (skip string, err error) {
	if installed(dir, pkgs) {
		return "", nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "npm is not installed (" + err.Error() + "): the TypeScript client and conformance tests need Node/npm", nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "node_modules", ".neemias-install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if installed(dir, pkgs) { // another process installed while we waited
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", cmdName, "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &installError{err: err, out: string(out)}
	}
	return "", nil
}

// installed reports whether every package of pkgs is in dir's node_modules.
func installed(dir string, pkgs []string) bool {
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p)); err != nil {
			return false
		}
	}
	return true
}

type installError struct {
	err error
	out string
}

func (e *installError) Error() string { return e.err.Error() + "\n" + e.out }
