#!/usr/bin/env node
// MCP Apps negotiation with the official TypeScript SDK 1.x client (@modelcontextprotocol/sdk
// 1.32.2, 2025 era: initialize, then requests carrying the Mcp-Session-Id it was given).
//
//   node ui-client.mjs URL [--token T] [--ui] [--read URI]...
//
// --ui declares capabilities.extensions["io.modelcontextprotocol/ui"] =
// {mimeTypes: ["text/html;profile=mcp-app"]} in the Client's capabilities. Connects, lists tools
// and resources, reads each --read URI, and prints one JSON document: what the client put on the
// wire (initialize's params.capabilities, the session id it was issued and which requests
// echoed it), the tools with their _meta, the resources, and each read's result or error.
// Exit code: 0 = connected and listed (read errors are reported, not fatal); 1 = otherwise;
// 2 = bad usage.

const USAGE = 'usage: node ui-client.mjs URL [--token T] [--ui] [--read URI]...';
const o = { reads: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--token') o.token = argv[++i];
  else if (a === '--ui') o.ui = true;
  else if (a === '--read') o.reads.push(argv[++i]);
  else if (!a.startsWith('-') && !o.url) o.url = a;
  else {
    console.error(USAGE);
    process.exit(2);
  }
}
if (!o.url) {
  console.error(USAGE);
  process.exit(2);
}

const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');

const wire = { initializeCapabilities: undefined, issuedSessionId: undefined, echoed: {} };
const recordingFetch = async (input, init) => {
  const res = await fetch(input, init);
  let msg;
  try {
    msg = JSON.parse(init?.body);
  } catch {}
  if (msg?.method === 'initialize') {
    wire.initializeCapabilities = msg.params?.capabilities;
    wire.issuedSessionId = res.headers.get('mcp-session-id') || undefined;
  } else if (msg?.method) {
    wire.echoed[msg.method] = new Headers(init?.headers).get('mcp-session-id') || undefined;
  }
  return res;
};

const capabilities = {};
if (o.ui) capabilities.extensions = { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } };
const client = new Client({ name: 'neemias-ui-client', version: '0.1.0' }, { capabilities });
const headers = o.token ? { Authorization: `Bearer ${o.token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(o.url), { requestInit: { headers }, fetch: recordingFetch });

const out = { client: { package: '@modelcontextprotocol/sdk', version: '1.32.2' }, declared: Boolean(o.ui), errors: [], reads: {} };
try {
  await client.connect(transport);
  out.serverExtensions = client.getServerCapabilities()?.extensions;
  out.tools = (await client.listTools()).tools.map((t) => ({ name: t.name, _meta: t._meta }));
  out.resources = (await client.listResources()).resources.map((r) => ({ uri: r.uri, mimeType: r.mimeType, _meta: r._meta }));
  for (const uri of o.reads) {
    try {
      const r = await client.readResource({ uri });
      out.reads[uri] = { contents: r.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, textPrefix: (c.text || '').slice(0, 15) })) };
    } catch (e) {
      out.reads[uri] = { error: { code: e?.code, message: String(e?.message || e) } };
    }
  }
} catch (e) {
  out.errors.push(String(e?.stack || e));
}
await client.close().catch(() => {});
out.wire = wire;
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
process.exit(out.errors.length ? 1 : 0);
