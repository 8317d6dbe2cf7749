// Test-only MCP Apps host for internal/server's TestBrowserViews, on the official host side of
// @modelcontextprotocol/ext-apps: AppBridge (no MCP client of its own: the test host forwards
// the view's tools/call and resources/read to /proxy, which calls the real server with the
// case's go-sdk session) over PostMessageTransport to a sandboxed srcdoc iframe (scripts only:
// an opaque origin). It fetches one case (?case=) from its own origin, reads the case's ui://
// resource from the server as a host does (resources/read through /proxy: the view must come as
// text/html;profile=mcp-app) and gives the document the host's CSP, answers ui/initialize
// with the case's hostContext, and once the view says ui/notifications/initialized sends the
// tool input and the real tool result. What the test reads: window.hostLog (every message the
// view sent, seen from the host window), window.hostInit (the ui/initialize params),
// window.hostDelivered, window.hostSize, window.hostContextChanged(params).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const log = [];
window.hostLog = log;
window.hostDelivered = false;
window.hostInit = null;
const frame = document.getElementById("view");
const name = new URLSearchParams(location.search).get("case");
const status = (s) => { document.getElementById("host-status").textContent = "host: " + s; };

// A passive observer beside the transport's own listener: the bridge as the view spoke it.
window.addEventListener("message", (ev) => {
  if (ev.source !== frame.contentWindow) return;
  const m = ev.data;
  if (!m || m.jsonrpc !== "2.0") { log.push({ bad: true }); return; }
  log.push({ method: m.method || null, id: m.id === undefined ? null : m.id });
  if (m.method === "ui/initialize") window.hostInit = m.params || null;
});

async function proxy(method, params) {
  const r = await fetch("/proxy", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const res = await r.json();
  if (res.error) {
    const e = new Error(res.error.message);
    e.code = res.error.code;
    throw e;
  }
  return res.result;
}

async function main() {
  const c = await (await fetch("/case/" + encodeURIComponent(name))).json();
  const hostContext = {
    theme: c.theme || "light",
    locale: c.locale,
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    toolInfo: { tool: c.toolDef || { name: c.tool, inputSchema: { type: "object" } } },
    containerDimensions: { maxHeight: 1400 },
  };
  if (c.timeZone) hostContext.timeZone = c.timeZone;
  if (c.styles) hostContext.styles = { variables: c.styles };
  const bridge = new AppBridge(
    null,
    { name: "neemias-test-host", version: "1" },
    { serverTools: {}, serverResources: {}, logging: {} },
    { hostContext },
  );
  bridge.oncalltool = (params) => proxy("tools/call", params);
  bridge.onreadresource = (params) => proxy("resources/read", params);
  bridge.onsizechange = (p) => { window.hostSize = p; };
  bridge.onloggingmessage = (p) => { log.push({ method: "notifications/message", level: p.level }); };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: c.arguments || {} });
    await bridge.sendToolResult(c.result);
    window.hostDelivered = true;
    status("tool result delivered");
  };
  // The test sends host-context-changed through the bridge, as a host does when its theme or
  // locale changes.
  window.hostContextChanged = (params) => bridge.sendHostContextChange(params);
  window.hostBridge = bridge;
  let html = c.html; // only the test's own documents (the leaky control) come with the case
  if (!html) {
    const rr = await proxy("resources/read", { uri: c.uri });
    const item = (rr.contents || [])[0];
    if (!item || item.uri !== c.uri || item.mimeType !== "text/html;profile=mcp-app" || typeof item.text !== "string") {
      throw new Error("resources/read " + c.uri + " did not give an MCP App view");
    }
    html = item.text;
  }
  // No _meta.ui.csp on our views: the host's default CSP, in the document as hosts do.
  html = html.replace("<head>", '<head><meta http-equiv="Content-Security-Policy" content="' + c.csp + '">');
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
  status("view loaded");
}

main().catch((e) => { status("error " + e); window.hostError = String(e && e.stack || e); });
