// Package cimd fetches and validates OAuth Client ID Metadata Documents
// (draft-ietf-oauth-client-id-metadata-document, the client registration MCP 2025-11-25 and
// 2026-07-28 prefer): a client whose client_id is an https URL publishes its registration as
// a JSON document at that URL, and the authorization server fetches it.
//
// Fetching a URL chosen by an unauthenticated caller is a server-side request forgery risk, so
// the Fetcher is deliberately narrow:
//
//   - the client_id is checked before any network use: https only, a host, a path, no
//     userinfo, fragment, dot segments, whitespace or control characters, no numeric or
//     encoded IPv4 forms (2130706433, 0x7f000001, 0177.0.0.1), no single-label or localhost
//     names;
//   - the host is resolved here, and every address must be public unicast: private, loopback,
//     link-local, CGNAT, unspecified, multicast, documentation/benchmark ranges and IPv6 forms
//     that embed IPv4 (mapped, NAT64, 6to4, Teredo) are refused;
//   - it is resolved again when dialling, the connection goes only to an address that passed
//     the check, and the dialer's Control hook re-checks the socket's address, so a DNS answer
//     that changes between check and connect (rebinding) is refused before any packet is sent;
//   - no proxy, no redirects (3xx is an error), no keep-alive reuse, connect and total
//     timeouts, a response-size cap (5 KiB by default, as the draft recommends), JSON
//     content types only;
//   - the document is validated (client_id equal to the URL byte for byte, redirect URIs,
//     grant and response types, public-client authentication only, no secrets or private keys);
//   - results are cached per Cache-Control (max-age, s-maxage, no-store, no-cache, Age,
//     Expires) within MinTTL..MaxTTL and MaxEntries; failures are remembered for NegativeTTL
//     (seconds) so one client_id cannot make the server fetch in a loop.
//
// Errors wrap one of ErrNotMetadataURL, ErrForbiddenAddress, ErrFetch or ErrInvalidDocument
// (all map to OAuth invalid_client) and never contain the response body.
//
// Options.AllowLoopbackForTests and Options.RootCAs exist only so tests can serve documents from
// httptest.NewTLSServer on 127.0.0.1; production code never sets them.
package cimd
