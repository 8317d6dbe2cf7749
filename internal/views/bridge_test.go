package views_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/neemias/neemias-mcp/internal/views"
)

// externalRef is what would load something from outside a document (as capgen checks the
// view files): views must work under the host's deny-all default CSP.
var externalRef = regexp.MustCompile(`(?i)(\b(src|href|action)\s*=\s*["']?\s*(https?:)?//)|(url\(\s*["']?\s*(https?:)?//)|(@import)`)

// TestViewsCarryTheBridgeOnce: every served view document holds the bridge once, inline (no
// marker left, the script not cut short by a "</script" inside it), references nothing outside
// itself, and has no bridge of its own (no postMessage outside the bridge).
func TestViewsCarryTheBridgeOnce(t *testing.T) {
	bridge := views.AppBridge()
	if strings.Contains(bridge, "</script") {
		t.Fatal("the bridge contains </script: it would end the inline script early")
	}
	if !strings.Contains(bridge, "window.NeemiasApp = NeemiasApp") || !strings.Contains(bridge, `"2026-01-26"`) {
		t.Fatal("app-bridge.js does not define NeemiasApp for protocol 2026-01-26")
	}
	for _, v := range views.All() {
		if n := strings.Count(v.HTML, bridge); n != 1 {
			t.Errorf("view %s carries the bridge %d times, want 1", v.ID, n)
		}
		if strings.Contains(v.HTML, views.BridgeMarker) {
			t.Errorf("view %s still has the marker %s", v.ID, views.BridgeMarker)
		}
		if loc := externalRef.FindStringIndex(v.HTML); loc != nil {
			t.Errorf("view %s loads %q from outside the document", v.ID, v.HTML[loc[0]:loc[1]])
		}
		own := strings.Replace(v.HTML, bridge, "", 1)
		if strings.Contains(own, "postMessage") || !strings.Contains(own, "new NeemiasApp(") {
			t.Errorf("view %s has a bridge of its own, or does not use NeemiasApp", v.ID)
		}
	}
}

// TestViewDocumentSize: each served view document, bridge included, weighs at most
// views.MaxDocumentBytes; the figures are printed for docs/views.md.
func TestViewDocumentSize(t *testing.T) {
	t.Logf("app-bridge.js: %d bytes", len(views.AppBridge()))
	for _, v := range views.All() {
		t.Logf("%s: %d bytes (limit %d)", v.URI, len(v.HTML), views.MaxDocumentBytes)
		if len(v.HTML) > views.MaxDocumentBytes {
			t.Errorf("view %s is %d bytes, over the %d a view document may weigh", v.ID, len(v.HTML), views.MaxDocumentBytes)
		}
	}
}
