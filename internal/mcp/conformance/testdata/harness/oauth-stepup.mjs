#!/usr/bin/env node
// OAuth step-up with an official TypeScript SDK client, as a person using it would do it, but
// with the browser played by this script (the consent and login pages are answered with plain
// HTTP and a cookie jar, the way a person clicks through them).
//
//   node oauth-stepup.mjs URL EMAIL PASSWORD [--sdk v1|v2] [--no-refresh-token] [--upstream]
//
// --upstream: log in through the church's provider (the login page's provider button, then
//   the provider's own password form, as Dex's local connector shows it: fields login and
//   password) instead of the local e-mail and password.
// --no-refresh-token: the provider keeps no refresh token, as Claude's clients often do not
//   use theirs. SDK 1.32.2 needs it to step up at all: with a refresh token it refreshes
//   (which cannot widen the scope) instead of re-authorizing, then gives up
//   (typescript-sdk#2255, open); SDK 2.x forces the re-authorization itself.
//
// 1. connect with no token: the 401 challenge starts the authorization (Dynamic Client
//    Registration, authorization code + PKCE); log in and approve what is asked;
// 2. list the tools (the caller's role decides what is listed);
// 3. call neemias_child_enroll, which needs children:write, not asked at first: the 403
//    insufficient_scope challenge starts a second authorization; approve it;
// 4. call it again, then read neemias://roster/children (an earlier scope) with the new token.
//
// Prints one JSON document: the scopes each authorization asked for, whether the password was
// asked again, the scopes of each access token, the tools, the enrolment and the read.

const [url, email, password, ...rest] = process.argv.slice(2);
if (!url || !email || !password) {
  console.error('usage: node oauth-stepup.mjs URL EMAIL PASSWORD [--sdk v1|v2]');
  process.exit(2);
}
const sdk = rest.includes('--sdk') ? rest[rest.indexOf('--sdk') + 1] : 'v1';
const keepRefreshToken = !rest.includes('--no-refresh-token');
const upstream = rest.includes('--upstream');

let Client, StreamableHTTPClientTransport, UnauthorizedError;
if (sdk === 'v2') {
  ({ Client, StreamableHTTPClientTransport, UnauthorizedError } = await import('@modelcontextprotocol/client'));
} else {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
  ({ UnauthorizedError } = await import('@modelcontextprotocol/sdk/client/auth.js'));
}

const report = { sdk, keepRefreshToken, authorizations: [], tokenScopes: [], errors: [] };

const REDIRECT_URI = 'http://127.0.0.1:9/callback';

// The "browser": a cookie jar and manual redirects.
const jar = new Map();
async function get(u, init = {}) {
  const headers = { ...(init.headers || {}) };
  const cookies = [...jar.entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  if (cookies) headers.Cookie = cookies;
  const res = await fetch(u, { ...init, headers, redirect: 'manual' });
  for (const c of res.headers.getSetCookie?.() ?? []) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    jar.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
  }
  return { status: res.status, location: res.headers.get('location'), body: await res.text(), url: u };
}
const hidden = (body, name) => {
  const m = body.match(new RegExp(`name="${name}" value="([^"]*)"`));
  return m ? m[1].replaceAll('&#43;', '+').replaceAll('&amp;', '&') : '';
};
const post = (u, fields) =>
  get(u, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

// authorizeInBrowser follows the authorization URL through the login page (if shown) and the
// consent page, approves, and returns the callback's query.
async function authorizeInBrowser(authURL) {
  const entry = { scope: authURL.searchParams.get('scope'), passwordAsked: false, consentShown: false };
  report.authorizations.push(entry);
  let r = await get(authURL.href);
  for (let hops = 0; hops < 10; hops++) {
    if (r.status < 300 || r.status >= 400 || !r.location) throw new Error(`authorization stopped at HTTP ${r.status}: ${r.body.slice(0, 200)}`);
    const next = new URL(r.location, r.url ?? authURL); // relative to the page that redirected (the provider's too)
    // The client's redirect URI ends the flow (not the provider's redirect to our /login/callback).
    if (next.href.startsWith(REDIRECT_URI) && (next.searchParams.has('code') || next.searchParams.has('error'))) {
      if (next.searchParams.has('error')) throw new Error(`authorization error: ${next.searchParams.get('error')}`);
      return next.searchParams;
    }
    const page = await get(next.href);
    const ours = next.origin === authURL.origin; // the provider's pages are on another origin
    if (!ours && upstream && page.status === 200 && page.body.includes('name="login"') && page.body.includes('name="password"')) {
      entry.passwordAsked = true; // the provider's own password form
      r = await post(next.href, { login: email, password });
    } else if (ours && next.pathname.endsWith('/login') && page.status === 200 && upstream) { // the provider's button
      r = await post(new URL('/login/upstream', next).href, { id: hidden(page.body, 'id'), csrf: hidden(page.body, 'csrf') });
    } else if (next.pathname.endsWith('/login') && page.status === 200) { // a login session answers with a redirect to consent
      entry.passwordAsked = true;
      r = await post(new URL('/login', next).href, { id: hidden(page.body, 'id'), csrf: hidden(page.body, 'csrf'), email, password });
    } else if (next.pathname.endsWith('/consent') && page.status === 200) {
      entry.consentShown = true;
      r = await post(new URL('/consent', next).href, { id: hidden(page.body, 'id'), csrf: hidden(page.body, 'csrf'), action: 'approve' });
    } else {
      r = page; // another redirect (the loop goes on) or a page this flow does not expect
    }
  }
  throw new Error('too many redirects');
}

class Provider {
  constructor() { this.pending = undefined; }
  get redirectUrl() { return REDIRECT_URI; }
  get clientMetadata() {
    return { client_name: `Neemias step-up test (${sdk})`, redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return this._client; }
  saveClientInformation(c) { this._client = c; }
  tokens() { return this._tokens; }
  saveTokens(t) {
    if (!keepRefreshToken) {
      t = { ...t };
      delete t.refresh_token;
    }
    this._tokens = t;
    const payload = JSON.parse(Buffer.from(t.access_token.split('.')[1], 'base64url').toString());
    report.tokenScopes.push((payload.scope || '').split(' ').filter(Boolean).sort());
  }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { return this._verifier; }
  async redirectToAuthorization(u) { this.pending = await authorizeInBrowser(u); }
}

const provider = new Provider();
// finish completes the authorization the SDK started (it threw UnauthorizedError after
// redirecting), the way an app's callback handler does.
async function finish(transport) {
  const q = provider.pending;
  provider.pending = undefined;
  if (!q) throw new Error('no authorization to finish');
  if (sdk === 'v2') await transport.finishAuth(q.get('code'), q.get('iss') ?? undefined);
  else await transport.finishAuth(q.get('code'));
}
async function withAuth(transport, fn) {
  try {
    return await fn();
  } catch (e) {
    if (!(e instanceof UnauthorizedError) && !String(e?.message ?? e).includes('Unauthorized')) throw e;
    await finish(transport);
    return await fn();
  }
}

try {
  let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  let client = new Client({ name: 'neemias-stepup', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    if (!(e instanceof UnauthorizedError) && !String(e?.message ?? e).includes('Unauthorized')) throw e;
    await finish(transport);
    transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    client = new Client({ name: 'neemias-stepup', version: '1.0.0' });
    await client.connect(transport);
  }
  report.tools = (await client.listTools()).tools.map(t => t.name).sort();
  const args = {
    name: `Criança Passo ${Date.now()}`,
    birth_date: '2021-03-14',
    guardian: { name: 'Responsável Passo', phone: `+55 11 9${String(Date.now()).slice(-8)}`, relationship: 'mother' },
    consent: { granted: true, text_version: '2026-01', legal_basis: 'consent' },
  };
  const enroll = await withAuth(transport, () => client.callTool({ name: 'neemias_child_enroll', arguments: args }));
  report.enroll = { isError: !!enroll.isError, childId: enroll.structuredContent?.child_id ?? null };
  const read = await withAuth(transport, () => client.readResource({ uri: 'neemias://roster/children' }));
  report.rosterRead = read.contents?.[0]?.text?.includes('total_children') ?? false;
  await client.close();
} catch (e) {
  report.errors.push(String(e?.stack ?? e));
}
console.log(JSON.stringify(report));
process.exit(report.errors.length ? 1 : 0);
