// The one MCP Apps bridge of every view: the official App class of @modelcontextprotocol/ext-apps
// (its self-contained app-with-deps build), exposed as globalThis.NeemiasApp, with the
// package's theme helpers (data-theme and color-scheme; the host's CSS variables) on it.
import { App, applyDocumentTheme, applyHostStyleVariables } from "@modelcontextprotocol/ext-apps/app-with-deps";

App.applyDocumentTheme = applyDocumentTheme;
App.applyHostStyleVariables = applyHostStyleVariables;
globalThis.NeemiasApp = App;
