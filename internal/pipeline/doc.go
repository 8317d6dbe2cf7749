// Package pipeline is the one invocation pipeline that every transport (MCP, REST) calls:
//
//	principal (effective scopes, computed once where the token was verified)
//	  → Authorize: the scope check, fail closed, refusals reported to one hook (the audit log)
//	  → Invoke: the catalog entry's invoker (capability.Entry.Invoke: validate and decode the
//	    input with one validator, call the handler, finalize the output), encode it once
//
// Both read one [capability.Catalog] (gen/capapi.Catalog, plus extra entries such as upstream
// tools) and nothing else; cross-cutting concerns (metrics, tracing) are named [Interceptor]s.
// A [Permit] is the only way from Authorize to Invoke, so no code path can run a capability
// without its scope check.
// Transports are glue: they find the capability a request names, call Authorize where their
// protocol needs the answer (MCP and REST both before any handler runs, REST before reading a
// body), and map errors by [errs.KindOf] with a small table of their own. Hand-written.
package pipeline
