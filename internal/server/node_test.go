package server_test

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

// harness is the pinned npm install shared with internal/mcp/conformance: Node 22 (npm package
// node@22), the TypeScript SDK 1.32.2, @modelcontextprotocol/client 2.x and both conformance
// suites, plus its scripts (client-smoke.mjs, conformance.sh, mcp-proxy.mjs).
const harness = "../mcp/conformance/testdata/harness"

var (
	installOnce sync.Once
	installErr  error
	installSkip string
)

// installed reports whether every pinned package the tests use is in node_modules.
func installed() bool {
	for _, p := range []string{
		"node/bin/node",
		"@modelcontextprotocol/sdk/package.json",
		"@modelcontextprotocol/client/package.json",
		"@modelcontextprotocol/conformance/dist/index.js",
		"conformance-next/dist/index.js",
	} {
		if _, err := os.Stat(filepath.Join(harness, "node_modules", p)); err != nil {
			return false
		}
	}
	return true
}

// nodeBin returns the harness's pinned Node 22, running npm install in the harness first when
// a package is missing. It skips t only when npm is not installed; CI has npm, so these tests
// run there. The install holds an exclusive lock, so test binaries of several packages (go test
// ./... runs them at once) do not install into the same folder concurrently.
func nodeBin(t *testing.T) string {
	t.Helper()
	installOnce.Do(func() {
		if installed() {
			return
		}
		if _, err := exec.LookPath("npm"); err != nil {
			installSkip = "npm is not installed (" + err.Error() + "): the TypeScript client and conformance tests need Node/npm"
			return
		}
		if err := os.MkdirAll(filepath.Join(harness, "node_modules"), 0o755); err != nil {
			installErr = err
			return
		}
		lock, err := os.OpenFile(filepath.Join(harness, "node_modules", ".neemias-install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			installErr = err
			return
		}
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			installErr = err
			return
		}
		defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		if installed() { // another process installed while we waited
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund")
		cmd.Dir = harness
		if out, err := cmd.CombinedOutput(); err != nil {
			installErr = &installError{err: err, out: string(out)}
		}
	})
	if installSkip != "" {
		t.Skip(installSkip)
	}
	if installErr != nil {
		t.Fatalf("npm install in %s: %v", harness, installErr)
	}
	bin, err := filepath.Abs(filepath.Join(harness, "node_modules", "node", "bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the pinned node binary is missing after npm install: %v", err)
	}
	return bin
}

type installError struct {
	err error
	out string
}

func (e *installError) Error() string { return e.err.Error() + "\n" + e.out }
