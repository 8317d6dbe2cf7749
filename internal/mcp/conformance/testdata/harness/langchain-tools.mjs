#!/usr/bin/env node
// LangChain's MCP adapters (@langchain/mcp-adapters), as an agent built on LangChain uses a
// server: load its tools, then invoke the read tools the way the model would.
//
//   node langchain-tools.mjs URL TOKEN FROM TO
//
// Prints one JSON document: the tool names, and the answers of neemias_attendance_summary and
// neemias_roster_children as the adapters return them to the model.
import { MultiServerMCPClient } from '@langchain/mcp-adapters';

const [url, token, from, to] = process.argv.slice(2);
const report = { errors: [] };
const client = new MultiServerMCPClient({
  mcpServers: { neemias: { transport: 'http', url, headers: { Authorization: `Bearer ${token}` } } },
  throwOnLoadError: true,
});
try {
  const tools = await client.getTools();
  report.tools = tools.map(t => t.name).sort();
  const find = name => tools.find(t => t.name === name || t.name.endsWith(`__${name}`));
  const asText = v => (typeof v === 'string' ? v : JSON.stringify(v));
  report.attendance = asText(await find('neemias_attendance_summary').invoke({ from, to }));
  report.roster = asText(await find('neemias_roster_children').invoke({}));
} catch (e) {
  report.errors.push(String(e?.stack ?? e));
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(report));
process.exit(report.errors.length ? 1 : 0);
