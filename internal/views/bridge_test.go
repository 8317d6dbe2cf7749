package views_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/testsupport"
	"github.com/neemias/neemias-mcp/internal/views"
)

// TestBridgeBundle rebuilds ext-apps-app.js (the official App class of
// @modelcontextprotocol/ext-apps, bundled by bridge/build.mjs with the versions pinned in
// bridge/package-lock.json) and fails when the committed file differs, as check-generated
// does for generated code.
func TestBridgeBundle(t *testing.T) {
	node := testsupport.NPMPackages(t, "bridge", "@modelcontextprotocol/ext-apps/package.json", "@modelcontextprotocol/client/package.json",
		"@modelcontextprotocol/core/package.json", "zod/package.json", "esbuild/package.json")
	out := filepath.Join(t.TempDir(), "ext-apps-app.js")
	cmd := exec.Command(node, "build.mjs", "--out", out)
	cmd.Dir = "bridge"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("ext-apps-app.js")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("internal/views/ext-apps-app.js is not what bridge/build.mjs builds (%d bytes, built %d); run: cd internal/views/bridge && npm ci && node build.mjs, and commit", len(want), len(got))
	}
	for _, s := range []string{"@modelcontextprotocol/ext-apps 2.0.4", "@modelcontextprotocol/client 2.0.0", "zod 4.6.7", "License: MIT", "esbuild 0.28.2"} {
		if !strings.Contains(string(want[:600]), s) {
			t.Errorf("the bundle's header does not say %q", s)
		}
	}
}

// externalRef is what would load something from outside a document (as capgen checks the
// view files): views must work under the host's deny-all default CSP.
var externalRef = regexp.MustCompile(`(?i)(\b(src|href|action)\s*=\s*["']?\s*(https?:)?//)|(url\(\s*["']?\s*(https?:)?//)|(@import)`)

var bundleRef = regexp.MustCompile(`(?i)(\b(src|href|action)\s*=\s*["']?\s*(https?:)?//)|(@import)`)

// TestViewsCarryTheBridgeOnce: every served view document holds the bundled App class once,
// inline (no marker left, the script not cut short by a "</script" inside it), references
// nothing outside itself, and has no bridge of its own (no postMessage of its own).
func TestViewsCarryTheBridgeOnce(t *testing.T) {
	bundle := views.ExtAppsApp()
	if strings.Contains(bundle, "</script") {
		t.Fatal("the bundle contains </script: it would end the inline script early")
	}
	// In the bundle, only markup-like references count (its JavaScript names URLs, such as a
	// base for new URL(...), that it never loads: TestBrowserViews watches the network).
	if loc := bundleRef.FindStringIndex(bundle); loc != nil {
		t.Errorf("the bundle references %q", bundle[loc[0]:loc[1]])
	}
	for _, v := range views.All() {
		if n := strings.Count(v.HTML, bundle); n != 1 {
			t.Errorf("view %s carries the bundle %d times, want 1", v.ID, n)
		}
		if strings.Contains(v.HTML, views.BridgeMarker) {
			t.Errorf("view %s still has the marker %s", v.ID, views.BridgeMarker)
		}
		own := strings.Replace(v.HTML, bundle, "", 1)
		if loc := externalRef.FindStringIndex(own); loc != nil {
			t.Errorf("view %s loads %q from outside the document", v.ID, own[loc[0]:loc[1]])
		}
		if strings.Contains(own, "postMessage") || !strings.Contains(own, "new NeemiasApp(") {
			t.Errorf("view %s has a bridge of its own, or does not use NeemiasApp", v.ID)
		}
	}
}
