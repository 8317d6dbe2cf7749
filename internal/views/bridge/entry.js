// The one MCP Apps bridge of every view: the official App class of @modelcontextprotocol/ext-apps
// (its self-contained app-with-deps build), exposed as globalThis.NeemiasApp.
import { App } from "@modelcontextprotocol/ext-apps/app-with-deps";

globalThis.NeemiasApp = App;
