package views

import (
	_ "embed"
	"strings"
)

// BridgeMarker is where a view document asks for the MCP Apps bridge: the generated registry
// replaces it with an inline <script> holding app-bridge.js, so the bridge code exists once
// (in this directory) and every view is still one self-contained document.
const BridgeMarker = "<!-- neemias:app-bridge -->"

// MaxDocumentBytes is the most a served view document (its HTML with the bridge inlined) may
// weigh: hosts load it into an iframe on every tool result, often on a phone at the door.
const MaxDocumentBytes = 150 * 1024

// appBridge is the App side of the MCP Apps bridge (app-bridge.js, hand-written: the official
// App class bundles to 340 KB, see its header). It defines window.NeemiasApp.
//
//go:embed app-bridge.js
var appBridge string

// AppBridge returns the bridge script (app-bridge.js) every view inlines.
func AppBridge() string { return appBridge }

// withBridge returns doc with its BridgeMarker (the first one) replaced by the inline bridge
// script; a document without the marker is returned unchanged.
func withBridge(doc string) string {
	before, after, ok := strings.Cut(doc, BridgeMarker)
	if !ok {
		return doc
	}
	return before + "<script>\n" + appBridge + "\n</script>" + after
}
