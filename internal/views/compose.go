package views

import (
	_ "embed"
	"strings"
)

// BridgeMarker is where a view document asks for the MCP Apps bridge: the generated registry
// replaces it with an inline <script> holding ext-apps-app.js, so the bridge code exists once
// (in this directory) and every view is still one self-contained document.
const BridgeMarker = "<!-- neemias:ext-apps-app -->"

// extAppsApp is the official App class of @modelcontextprotocol/ext-apps, bundled by
// bridge/build.mjs (pinned versions in bridge/package-lock.json; TestBridgeBundle rebuilds it
// and fails on drift). It defines globalThis.NeemiasApp.
//
//go:embed ext-apps-app.js
var extAppsApp string

// ExtAppsApp returns the bundled bridge script (ext-apps-app.js).
func ExtAppsApp() string { return extAppsApp }

// withBridge returns doc with its BridgeMarker (the first one) replaced by the inline bridge
// script; a document without the marker is returned unchanged.
func withBridge(doc string) string {
	before, after, ok := strings.Cut(doc, BridgeMarker)
	if !ok {
		return doc
	}
	return before + "<script>\n" + extAppsApp + "\n</script>" + after
}
