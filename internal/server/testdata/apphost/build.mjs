// Test-only: bundles host.js (the official MCP Apps host side, AppBridge) with the esbuild and
// packages pinned in package-lock.json into one IIFE for TestBrowserViews' host page.
// Usage: npm ci && node build.mjs --out FILE
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const i = process.argv.indexOf("--out");
if (i < 0) throw new Error("usage: node build.mjs --out FILE");
await build({
  entryPoints: [join(here, "host.js")],
  outfile: process.argv[i + 1],
  bundle: true,
  format: "iife",
  target: "es2020",
  platform: "browser",
  logLevel: "warning",
});
