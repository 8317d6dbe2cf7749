// Package upstream is the governed client of allowlisted upstream MCP servers (issue 11),
// written by hand, on go-sdk's client: the server and hand-written logic call other MCP
// servers (documentation lookup, a church's other systems) only through it.
//
// What it enforces, in order, on every [Client.CallTool]:
//
//   - The feature flag ([Config.Enabled], --upstreams / NEEMIAS_UPSTREAMS=on), off by
//     default: off, New reads nothing and every call returns ErrDisabled; no connection is
//     ever opened.
//   - The allowlist, before any connection: the upstream id must be configured and the tool
//     listed by name for it (never "all"); else the call is refused with reason
//     not_allowlisted. Callers name upstreams by id; no endpoint comes from a caller. A tool
//     allowlisted but missing from the upstream's tools/list is refused as not_offered.
//   - The endpoint: one exact canonical URL per upstream, Streamable HTTP only (a stdio
//     command is refused by New), https except on a loopback host. The HTTP client connects
//     only to the configured host and port, to addresses the one SSRF policy accepts
//     (internal/netguard, the CIMD fetcher's too: checked after resolution and again on the socket, so DNS
//     rebinding fails; loopback only when the configured host is loopback), through no proxy,
//     and never follows a redirect. Its only credential is the upstream's own static bearer
//     token (from a file) or none: it drops any Authorization or Cookie header, so the
//     caller's Neemias token can never be forwarded.
//   - Personal data, both ways (go-sdk sending middleware): the arguments are scanned with
//     internal/pii (the patterns, plus the caller's church's known names, phones and birth
//     dates; on normalized text, so separators, invisible characters and full-width digits
//     hide nothing) before any connection is opened, and again by the middleware on the wire; the
//     whole result (text content, structuredContent,
//     embedded resource contents, _meta; resources/read results alike) before it is
//     returned. Policy per upstream and direction: enforce (default: refuse the request
//     before it is sent, drop the response) or redact (pii.Scanner.Redact). Errors and
//     audit events name the detector and the JSON path, never the value. An upstream's
//     JSON-RPC error message is passed on only when it scans clean.
//   - Retries: a failure to connect is retried (nothing of the call was sent); a failed call
//     is repeated, at most [MaxRetries] times with exponential backoff and jitter, only for a
//     tool whose tools/list entry says readOnlyHint, or idempotentHint when no part of the
//     response had arrived. A tool without those hints is never repeated; a protocol error
//     from the upstream is never repeated. go-sdk's own SSE reconnection is switched off. An
//     upstream that stays down yields an *Error naming the upstream id, with no address.
//   - No callbacks: the client offers no roots, sampling or elicitation; the receiving
//     middleware refuses such requests from an upstream.
//   - Audit: every invocation (allowed, refused with reason not_allowlisted, not_offered or
//     pii_detected and where, failed) is one [Event] to the [Auditor]; [DBAuditor] writes it
//     to internal/audit under [CapabilityName] ("upstream:<id>/<tool>"). If it cannot be
//     recorded the result is withheld. Calls refused before they reach the client (the
//     pipeline's scope check, arguments that are not an object) are audited by
//     internal/server under the same name (call.forbidden, call.invalid); docs/privacy.md
//     lists every action.
//   - Policy: the spec's per upstream and direction; the runtime (--upstream-pii) may tighten
//     it, redact to enforce, never loosen it (internal/server refuses to start).
//
// [Client.Check] lists each upstream's tools and says which are exposed, which refused and
// why (neemias-mcp upstream check).
//
// What it does not protect against: free text that paraphrases a child's name or spells it
// differently, one-word names, data split across JSON values, text inside base64 blobs
// (images, binary resources) — see internal/pii's package comment; and an upstream that
// stores what it is legitimately sent. Tool declarations (scopes, name prefix, PII policy)
// are the spec's upstreams section (gen/capapi.UpstreamTools); internal/server checks the
// runtime configuration against them and registers the tools behind the pipeline's gate. This
// package takes its allowlist from [Config].
package upstream
