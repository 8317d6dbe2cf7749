// The one MCP Apps bridge of every view: the official App class of @modelcontextprotocol/ext-apps
// (its ESM build, bundled by build.mjs with its peers @modelcontextprotocol/client and core and
// zod, pinned in package-lock.json), exposed as globalThis.NeemiasApp, with the package's theme
// helpers (data-theme and color-scheme; the host's CSS variables) on it.
import { App, applyDocumentTheme, applyHostStyleVariables } from "@modelcontextprotocol/ext-apps";

App.applyDocumentTheme = applyDocumentTheme;
App.applyHostStyleVariables = applyHostStyleVariables;
globalThis.NeemiasApp = App;
